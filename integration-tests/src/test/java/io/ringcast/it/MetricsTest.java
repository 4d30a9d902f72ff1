package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /metrics} scraped and parsed as Prometheus would: the series move as traffic flows, and
 * every node reports the JVM's and the process's metrics, registered once however many nodes the
 * JVM runs.
 */
@Timeout(60)
class MetricsTest {
    /** A family of each kind the JVM instrumentation and the allocator gauges give, as sample names. */
    private static final List<String> JVM_AND_PROCESS = List.of(
            "jvm_memory_used_bytes", "jvm_memory_committed_bytes", "jvm_memory_max_bytes",
            "jvm_memory_pool_used_bytes", "jvm_buffer_pool_used_bytes", "jvm_buffer_pool_capacity_bytes",
            "jvm_gc_collection_seconds_count", "jvm_gc_collection_seconds_sum",
            "jvm_threads_current", "jvm_threads_daemon", "jvm_threads_state",
            "jvm_classes_currently_loaded", "jvm_classes_loaded_total", "jvm_runtime_info",
            "process_cpu_seconds_total", "process_start_time_seconds", "process_open_fds", "process_max_fds",
            "process_resident_memory_bytes", "process_virtual_memory_bytes",
            "ringcast_netty_direct_memory_used_bytes", "ringcast_netty_direct_memory_pinned_bytes");

    private static Map<String, Double> scrape(RingcastServer server) throws Exception {
        return MetricsScrape.of(server).samples();
    }

    @Test
    void countersGaugesAndTheLatencyHistogramMoveWithTraffic() throws Exception {
        try (RingcastServer server = TestServers.start()) {
            Map<String, Double> before = scrape(server);
            assertThat(before).containsEntry("ringcast_sessions", 0.0).containsEntry("ringcast_subscriptions", 0.0)
                    .containsEntry("ringcast_publish_to_write_seconds_count", 0.0);
            try (RingcastClient subscriber = RingcastClient.builder().addresses(server.webSocketUrl()).build();
                 RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
                subscriber.connect().get(10, TimeUnit.SECONDS);
                publisher.connect().get(10, TimeUnit.SECONDS);
                Recorded got = new Recorded();
                subscriber.subscribe("metrics/#", got).confirmed().get(10, TimeUnit.SECONDS);
                subscriber.subscribe("other/#", u -> { }).confirmed().get(10, TimeUnit.SECONDS);
                List<CompletableFuture<Long>> acks = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    acks.add(publisher.publish("metrics/t" + (i % 10), ("value " + i).getBytes(StandardCharsets.UTF_8)));
                }
                CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
                Await.until(() -> got.updates.size() == 100, "100 deliveries");

                Map<String, Double> during = Await.value(() -> {
                    try {
                        Map<String, Double> m = scrape(server);
                        return m.get("ringcast_deliveries_total") >= 100 ? m : null;
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }, () -> "the deliveries counted");
                assertThat(during).containsEntry("ringcast_sessions", 2.0).containsEntry("ringcast_subscriptions", 2.0)
                        .containsEntry("ringcast_topics", 10.0).containsEntry("ringcast_publishes_total", 100.0);
                assertThat(during.get("ringcast_delivered_bytes_total")).isGreaterThan(100 * 7.0);
                assertThat(during.get("ringcast_received_bytes_total")).isGreaterThan(100 * 7.0);
                assertThat(during.get("ringcast_publish_to_write_seconds_count")).isEqualTo(100.0);
                assertThat(during.get("ringcast_publish_to_write_seconds_bucket{le=\"+Inf\"}")).isEqualTo(100.0);
                assertThat(during.get("ringcast_publish_to_write_seconds_sum")).isPositive();
                assertThat(during.get("ringcast_inbound_ring_remaining")).isPositive();
            }
            Map<String, Double> after = Await.value(() -> {
                try {
                    Map<String, Double> m = scrape(server);
                    return m.get("ringcast_sessions") == 0.0 ? m : null;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }, () -> "the sessions to end");
            assertThat(after).containsEntry("ringcast_subscriptions", 0.0);
        }
    }

    @Test
    void everyNodeInTheJvmReportsTheJvmAndProcessMetricsOnce() throws Exception {
        try (RingcastServer first = TestServers.start(); RingcastServer second = TestServers.start()) {
            MetricsScrape a = MetricsScrape.of(first);
            MetricsScrape b = MetricsScrape.of(second);
            for (MetricsScrape scrape : List.of(a, b)) {
                assertThat(scrape.sampleNames()).containsAll(JVM_AND_PROCESS).contains("ringcast_sessions");
                List<String> families = scrape.text().lines().filter(l -> l.startsWith("# TYPE ")).toList();
                assertThat(families).as("each family once").doesNotHaveDuplicates();
                assertThat(scrape.value("jvm_memory_used_bytes{area=\"heap\"}")).isPositive();
                assertThat(scrape.value("process_resident_memory_bytes")).isPositive();
                assertThat(scrape.value("process_open_fds")).isPositive().isLessThan(scrape.value("process_max_fds"));
                assertThat(scrape.value("process_cpu_seconds_total")).isPositive();
                assertThat(scrape.value("jvm_threads_current")).isPositive();
                assertThat(scrape.value("ringcast_netty_direct_memory_used_bytes")).as("the scrape's request was read")
                        .isPositive().isGreaterThanOrEqualTo(scrape.value("ringcast_netty_direct_memory_pinned_bytes"));
            }
            assertThat(a.value("process_start_time_seconds")).as("one process")
                    .isEqualTo(b.value("process_start_time_seconds"));
        }
    }
}
