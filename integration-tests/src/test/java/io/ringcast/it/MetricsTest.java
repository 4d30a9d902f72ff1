package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code /metrics} scraped and parsed as Prometheus would: the series move as traffic flows. */
@Timeout(60)
class MetricsTest {

    /** Every sample of a text-format scrape: {@code name{labels}} to value. */
    private static Map<String, Double> scrape(RingcastServer server) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        Map<String, Double> samples = new HashMap<>();
        for (String line : r.body().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return samples;
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
}
