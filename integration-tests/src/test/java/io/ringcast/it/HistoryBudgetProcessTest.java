package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code history.nodeMaxBytes} against a real node process with little direct memory: one anonymous
 * publisher of large values, each to a new topic, publishes twice the node's direct memory. Before the
 * bound, the node ran out of direct memory and exited (status 3) within seconds of such a flood; now
 * it keeps its histories within half its direct memory (the default), lets the newest values of the
 * topics updated longest ago go, acks every publish, and a witness publishing and subscribing meanwhile
 * loses nothing.
 */
@Timeout(120)
class HistoryBudgetProcessTest {
    private static final int DIRECT_MEMORY_MB = 32;
    private static final int VALUE_BYTES = 16 * 1024;
    /** Twice the node's direct memory in values, each to a topic of its own. */
    private static final int PUBLISHES = 2 * DIRECT_MEMORY_MB * 1024 * 1024 / VALUE_BYTES;
    /** Publishes sent ahead of their acks. */
    private static final int WINDOW = 64;
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void aFloodOfLargeValuesToNewTopicsKeepsTheHistoriesWithinHalfTheDirectMemoryAndHarmsNoOne() throws Exception {
        Files.writeString(dir.resolve("node.yaml"), """
                server:
                  host: 127.0.0.1
                  port: 0
                security:
                  anonymousRoles: ["everything"]
                  roles:
                    - name: "everything"
                      subscribe: ["#"]
                      publish: ["#"]
                """);
        Process node = ServerProcesses.launch(dir, List.of("-XX:MaxDirectMemorySize=" + DIRECT_MEMORY_MB + "m",
                "-XX:+ExitOnOutOfMemoryError", "-Xmx256m"), "--config", "node.yaml");
        List<String> out = collect(node);
        try {
            int port = Integer.parseInt(awaitPort(node, out));
            String url = "ws://127.0.0.1:" + port + "/ws";
            String value = "v".repeat(VALUE_BYTES);
            try (Witness witness = Witness.start(url);
                 RawWebSocket flooder = RawWebSocket.connectAndHello(url)) {
                for (int i = 1; i <= PUBLISHES; i++) {
                    if (i > WINDOW) {
                        int acked = i - WINDOW;
                        Await.until(() -> flooder.all("PUBLISH_ACK").size() >= acked || !node.isAlive(), ACK_TIMEOUT,
                                () -> "the ack of publish " + acked + "; the node's output: " + out);
                        assertThat(node.isAlive()).as("the node, after %d publishes: %s", i, out).isTrue();
                    }
                    flooder.publish(i, "flood/" + i, value);
                }
                Await.until(() -> flooder.all("PUBLISH_ACK").size() == PUBLISHES, ACK_TIMEOUT,
                        () -> "every publish acked; the node's output: " + out);
                assertThat(flooder.all("ERROR")).isEmpty();
                witness.stopAndVerify();
            }
            MetricsScrape metrics = MetricsScrape.of(port);
            long bound = DIRECT_MEMORY_MB * 1024L * 1024 / 2;
            assertThat(metrics.value("ringcast_history_bytes")).as("the histories, within half the direct memory")
                    .isLessThanOrEqualTo(bound).isGreaterThan(bound * 0.9);
            assertThat(metrics.value("ringcast_history_values_let_go_total"))
                    .as("the newest values of the topics updated longest ago went")
                    .isGreaterThan(PUBLISHES / 2.0);
            assertThat(metrics.value("ringcast_values_cached") + metrics.value("ringcast_history_values_let_go_total"))
                    .as("every topic's value is cached or was let go")
                    .isEqualTo(PUBLISHES + 1.0); // and the witness's topic

            // the first topic's value went, the last one's is there for a new subscriber
            try (RawWebSocket subscriber = RawWebSocket.connectAndHello(url)) {
                subscriber.subscribe(1, "flood/" + PUBLISHES);
                assertThat(subscriber.await("SNAPSHOT").value()).hasSize(VALUE_BYTES);
                subscriber.subscribe(2, "flood/1");
                Await.until(() -> subscriber.all("SUBSCRIBED").size() == 2, "both subscriptions confirmed");
                assertThat(subscriber.all("SNAPSHOT")).as("no value of flood/1 is kept").hasSize(1);
            }
            assertThat(node.isAlive()).as("the node: %s", out).isTrue();
        } finally {
            node.toHandle().destroy();
            assertThat(node.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }
}
