package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The {@code /status} page in a real headless Chromium: it reads {@code /metrics} every second and charts it. */
class StatusPageTest {

    @Test
    void statusPageChartsTheNodesMetricsAsTrafficFlows() throws Exception {
        try (RingcastServer server = TestServers.start("");
             Chromium chromium = new Chromium();
             RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
            client.connect().get(10, TimeUnit.SECONDS);
            client.subscribe("status/#", u -> { }).confirmed().get(10, TimeUnit.SECONDS);
            chromium.open("http://127.0.0.1:" + server.port() + "/status");
            chromium.waitFor("document.body.dataset.ready === 'true' && window.ringcastStatus.samples >= 2",
                    "two scrapes of /metrics");
            assertThat(chromium.evalLong("window.ringcastStatus.latest['ringcast_sessions']"))
                    .as("the page counts the Java client's session").isGreaterThanOrEqualTo(1);

            for (int round = 0; round < 6; round++) {
                CompletableFuture<?>[] acks = new CompletableFuture<?>[200];
                for (int i = 0; i < acks.length; i++) {
                    acks[i] = client.publish("status/t" + (i % 10), ("v" + i).getBytes(StandardCharsets.UTF_8));
                }
                CompletableFuture.allOf(acks).get(10, TimeUnit.SECONDS);
            }
            chromium.waitFor("window.ringcastStatus.latest['ringcast_publishes_total'] >= 1200",
                    "the page's latest scrape counts the 1,200 publishes");
            chromium.waitFor("document.querySelectorAll('.chart canvas').length >= 10", "the charts drawn");
            assertThat((String) chromium.eval("document.querySelector('[data-chart=topics] .a').textContent"))
                    .isEqualTo("10");
            assertThat(chromium.evalLong("window.ringcastStatus.failures")).isZero();
            Path shot = chromium.screenshot("status-page");
            assertThat(Files.size(shot)).isPositive();
        }
    }
}
