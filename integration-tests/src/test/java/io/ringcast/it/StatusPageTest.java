package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code /status} page in a real headless Chromium: it reads {@code /metrics} every second,
 * charts it, and says so when the node cannot be read. The page keeps what it read in
 * {@code window.ringcastStatus} ({@code samples}, {@code failures}, {@code latest} by series name,
 * {@code rates} by chart id).
 */
@Timeout(120)
class StatusPageTest {
    private static final String STATUS = "window.ringcastStatus";
    static Chromium chromium;

    @BeforeAll
    static void startBrowser() {
        chromium = new Chromium();
    }

    @AfterAll
    static void stopBrowser() {
        if (chromium != null) {
            chromium.close();
        }
    }

    @Test
    void statusPageChartsTheNodesMetricsAsTrafficFlows() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
            client.connect().get(10, TimeUnit.SECONDS);
            client.subscribe("status/#", u -> { }).confirmed().get(10, TimeUnit.SECONDS);
            chromium.open("http://127.0.0.1:" + server.port() + "/status");
            chromium.waitFor("document.body.dataset.ready === 'true' && " + STATUS + ".samples >= 3",
                    "three scrapes of /metrics");
            assertThat(chromium.evalLong(STATUS + ".latest['ringcast_sessions']"))
                    .as("the page counts the Java client's session").isGreaterThanOrEqualTo(1);
            assertThat(chromium.evalLong(STATUS + ".latest['ringcast_subscriptions']")).isEqualTo(1);
            assertThat(chromium.evalLong(STATUS + ".rates.publishes")).as("no traffic yet").isZero();

            AtomicBoolean publishing = new AtomicBoolean(true);
            AtomicLong acked = new AtomicLong();
            ExecutorService publisher = Executors.newSingleThreadExecutor();
            Future<?> traffic = publisher.submit(() -> {
                while (publishing.get()) {
                    CompletableFuture<?>[] acks = new CompletableFuture<?>[100];
                    for (int i = 0; i < acks.length; i++) {
                        acks[i] = client.publish("status/t" + (i % 10), ("v" + i).getBytes(StandardCharsets.UTF_8));
                    }
                    CompletableFuture.allOf(acks).get(10, TimeUnit.SECONDS);
                    acked.addAndGet(acks.length);
                }
                return null;
            });
            try {
                chromium.waitFor(STATUS + ".rates.publishes >= 100 && " + STATUS + ".rates.deliveries >= 100 && "
                        + STATUS + ".rates.bytes > 0 && " + STATUS + ".rates.latency > 0",
                        "publishes, deliveries, bytes in and publish-to-write latency charted while traffic flows");
                long samples = chromium.evalLong(STATUS + ".samples");
                chromium.waitFor(STATUS + ".samples >= " + (samples + 2), "two more seconds of traffic charted");
            } finally {
                publishing.set(false);
                traffic.get(20, TimeUnit.SECONDS);
                publisher.shutdown();
            }
            chromium.waitFor(STATUS + ".latest['ringcast_publishes_total'] >= " + acked.get(),
                    "the page's latest scrape counting every acknowledged publish (" + acked.get() + ")");
            assertThat(chromium.evalLong("document.querySelectorAll('.chart canvas').length")).isGreaterThanOrEqualTo(10);
            assertThat((String) chromium.eval("document.querySelector('[data-chart=topics] .a').textContent"))
                    .as("the topics chart's current value in text").isEqualTo("10");
            assertThat(chromium.evalLong(STATUS + ".failures")).isZero();
            assertThat((Boolean) chromium.eval("document.getElementById('down').hidden")).isTrue();
            assertThat((Boolean) chromium.eval("document.getElementById('cluster').hidden"))
                    .as("no cluster panel on a single node").isTrue();
            Path shot = chromium.screenshot("status-page");
            assertThat(Files.size(shot)).isPositive();
        }
    }

    @Test
    // "try": the restarted server is only run, not referenced, while the page reads it
    @SuppressWarnings("try")
    void statusPageSaysTheNodeIsDownAndResumesWhenItIsBack() throws Exception {
        int port;
        try (RingcastServer first = TestServers.start("")) {
            port = first.port();
            chromium.open("http://127.0.0.1:" + port + "/status");
            chromium.waitFor("document.body.dataset.ready === 'true' && " + STATUS + ".samples >= 2",
                    "two scrapes of /metrics");
        }
        chromium.waitFor("!document.getElementById('down').hidden && " + STATUS + ".failures >= 1",
                "the page noticing that /metrics no longer answers");
        assertThat((String) chromium.eval("document.getElementById('down').textContent"))
                .contains("Cannot read /metrics").contains("Retrying every second");
        assertThat((String) chromium.eval("document.getElementById('scrape').textContent")).isEqualTo("down");
        assertThat((String) chromium.eval("document.querySelector('[data-chart=sessions] .a').textContent"))
                .as("no current value while down").isEqualTo("–");
        chromium.screenshot("status-page-down");

        long samplesBefore = chromium.evalLong(STATUS + ".samples");
        try (RingcastServer second = TestServers.startOnPort(port, "")) {
            chromium.waitFor("document.getElementById('down').hidden && " + STATUS + ".samples >= " + (samplesBefore + 2),
                    "the page reading the restarted node again");
            assertThat((String) chromium.eval("document.getElementById('scrape').className")).isEqualTo("badge up");
            assertThat(chromium.evalLong(STATUS + ".rates.publishes"))
                    .as("a rate between two scrapes of the new node, none across the restart").isZero();
        }
    }
}
