package io.ringcast.server.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.ServerCounter;
import io.ringcast.server.ServerStats;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@link ServerCounter} is reported by {@code /metrics}, {@code /health} and
 * {@link ServerStats} under its declared name, with the value {@link ServerCounters} holds: the
 * descriptor is the one list the three read. No sockets: {@code /metrics} is rendered to a string.
 */
class ServerCounterReportingTest {
    private final ServerCounters counters = new ServerCounters();

    /** {@code /metrics} as a scrape gets it. */
    private String render() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new ServerMetrics(counters, null).write(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Every sample of a text-format scrape: {@code name{labels}} to value. */
    private Map<String, Double> scrape() throws Exception {
        Map<String, Double> samples = new HashMap<>();
        for (String line : render().split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                int space = line.lastIndexOf(' ');
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
        return samples;
    }

    /** The series as scraped, e.g. {@code ringcast_config_reloads_total{result="refused"}}. */
    private static String series(ServerCounter counter) {
        String name = counter.metricName() + (counter.kind() == ServerCounter.Kind.COUNTER ? "_total" : "");
        return counter.labelName() == null ? name : name + "{" + counter.labelName() + "=\"" + counter.labelValue() + "\"}";
    }

    private ObjectNode health() {
        ObjectNode body = new ObjectMapper().createObjectNode();
        HttpEndpointHandler.putFigures(body, counters);
        return body;
    }

    @Test
    void everyCounterIsInMetricsWithItsHelpAndInHealthAndStats() throws Exception {
        Map<String, Double> metrics = scrape();
        String text = render();
        ObjectNode health = health();
        ServerStats stats = counters.snapshot();
        for (ServerCounter counter : ServerCounter.values()) {
            assertThat(metrics).as("/metrics").containsKey(series(counter));
            assertThat(text).as("/metrics help").contains("# HELP " + counter.metricName()
                    + (counter.kind() == ServerCounter.Kind.COUNTER ? "_total " : " ") + counter.help() + "\n");
            assertThat(health.has(counter.statName())).as("/health has %s", counter.statName()).isTrue();
            assertThat(stats.toString()).contains(counter.statName() + "=");
        }
        assertThat(health.size()).as("nothing but the counters").isEqualTo(ServerCounter.values().length);
        assertThat(metrics).containsKeys("ringcast_publish_to_write_seconds_count",
                "ringcast_errors_total{code=\"" + ErrorCode.SLOW_CONSUMER.name() + "\"}");
    }

    @Test
    void countedValuesShowInMetricsHealthAndStats() throws Exception {
        counters.sessions.set(4);
        counters.receivedBytes.add(1234);
        counters.deltaSent(10, 3);
        counters.configReloadsRefused.increment();
        counters.configReloadsRefused.increment();
        counters.error(ErrorCode.SLOW_CONSUMER);

        Map<String, Double> metrics = scrape();
        assertThat(metrics).containsEntry("ringcast_sessions", 4.0)
                .containsEntry("ringcast_received_bytes_total", 1234.0)
                .containsEntry("ringcast_deltas_sent_total", 1.0)
                .containsEntry("ringcast_delta_saved_bytes_total", 30.0)
                .containsEntry("ringcast_config_reloads_total{result=\"refused\"}", 2.0)
                .containsEntry("ringcast_config_reloads_total{result=\"applied\"}", 0.0)
                .containsEntry("ringcast_protocol_errors_total", 1.0)
                .containsEntry("ringcast_errors_total{code=\"SLOW_CONSUMER\"}", 1.0);
        ObjectNode health = health();
        assertThat(health.get("sessions").asLong()).isEqualTo(4);
        assertThat(health.get("deltaBytesSaved").asLong()).isEqualTo(30);
        assertThat(health.get("configReloadsRefused").asLong()).isEqualTo(2);
        assertThat(health.get("configReloads").asLong()).isZero();
        ServerStats stats = counters.snapshot();
        assertThat(stats.get(ServerCounter.SESSIONS)).isEqualTo(4);
        assertThat(stats.get(ServerCounter.RECEIVED_BYTES)).isEqualTo(1234);
        assertThat(stats.get(ServerCounter.DELTA_BYTES_SAVED)).isEqualTo(30);
        assertThat(stats.get(ServerCounter.CONFIG_RELOADS_REFUSED)).isEqualTo(2);
        assertThat(stats.errors(ErrorCode.SLOW_CONSUMER)).isEqualTo(1);
        assertThat(stats.errors(ErrorCode.PERMISSION_DENIED)).isZero();
    }

    @Test
    void queueGaugesAreReadFromTheChannelsAndTheRingAttached() throws Exception {
        EmbeddedChannel small = new EmbeddedChannel();
        EmbeddedChannel large = new EmbeddedChannel();
        try {
            small.write(Unpooled.buffer(100).writeZero(100)); // written, not flushed: queued
            large.write(Unpooled.buffer(300).writeZero(300));
            RingBuffer<Object> ring = RingBuffer.createMultiProducer(Object::new, 8);
            ring.addGatingSequences(new Sequence()); // a reader that has read nothing yet
            ring.next(3);
            counters.readQueuesOf(List.<Channel>of(small, large), ring);

            ServerStats stats = counters.snapshot();
            assertThat(stats.get(ServerCounter.INBOUND_RING_REMAINING)).isEqualTo(5);
            assertThat(stats.get(ServerCounter.OUTBOUND_QUEUE_LARGEST_BYTES)).isGreaterThanOrEqualTo(300)
                    .isLessThan(stats.get(ServerCounter.OUTBOUND_QUEUED_BYTES));
            assertThat(stats.get(ServerCounter.OUTBOUND_QUEUED_BYTES)).isGreaterThanOrEqualTo(400);
            assertThat(scrape()).containsEntry("ringcast_inbound_ring_remaining", 5.0)
                    .containsEntry("ringcast_outbound_queued_bytes",
                            (double) stats.get(ServerCounter.OUTBOUND_QUEUED_BYTES));
        } finally {
            small.finishAndReleaseAll();
            large.finishAndReleaseAll();
        }
    }

    @Test
    void everyMetricIsDocumentedInOperations() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "operations.md"));
        for (ServerCounter counter : ServerCounter.values()) {
            String documented = counter.labelName() == null ? series(counter)
                    : series(counter).substring(0, series(counter).indexOf('{')) + "{" + counter.labelName() + "}";
            assertThat(doc).as("docs/operations.md").contains("`" + documented + "`");
        }
    }
}
