package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * What clients make a node hold in direct memory, bounded as a whole, against a real node process
 * of 32 MB of direct memory: before each bound, the abuse below made the node run out of direct
 * memory and exit (status 3) within seconds; now the node sheds what the bound says, keeps serving,
 * and a witness publishing and subscribing meanwhile loses nothing.
 * <ul>
 * <li>{@code history.nodeMaxBytes} (two fifths of the direct memory by default): one anonymous publisher of
 *     large values, each to a new topic, twice the direct memory in all;</li>
 * <li>{@code limits.incompleteMessageBytes} (a fifth of it): upgraded connections that each send
 *     900 kB of a message, as one frame or as a first fragment, and then nothing;</li>
 * <li>sessions' unsent bytes ({@code DirectMemoryGuard}, past 85% of it): subscribers of topics of
 *     their own that read nothing, while one publisher sends them twice the direct memory.</li>
 * </ul>
 */
@Timeout(120)
class DirectMemoryBoundsProcessTest {
    private static final int DIRECT_MEMORY_MB = 32;
    private static final long DIRECT_MEMORY_BYTES = DIRECT_MEMORY_MB * 1024L * 1024;
    private static final int VALUE_BYTES = 16 * 1024;
    /** Twice the node's direct memory in values, each to a topic of its own. */
    private static final int PUBLISHES = (int) (2 * DIRECT_MEMORY_BYTES / VALUE_BYTES);
    /** Publishes sent ahead of their acks. */
    private static final int WINDOW = 64;
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(30);
    private static final int PART_BYTES = 900_000;
    /** Connections holding a part each: more than the node's direct memory together. */
    private static final int HOLDERS = 40;
    /** Subscribers of topics of their own that read nothing: their queues together far past the direct memory. */
    private static final int STALLED = 30;

    @TempDir
    Path dir;
    private Process node;
    private List<String> out;
    private int port;
    private String url;

    private void startNode() throws IOException {
        node = ServerProcesses.launchOpen(dir, List.of("-XX:MaxDirectMemorySize=" + DIRECT_MEMORY_MB + "m",
                "-XX:+ExitOnOutOfMemoryError", "-Xmx256m"));
        out = collect(node);
        port = Integer.parseInt(awaitPort(node, out));
        url = "ws://127.0.0.1:" + port + "/ws";
    }

    @AfterEach
    void stopNode() throws InterruptedException {
        if (node != null) {
            node.toHandle().destroy();
            assertThat(node.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aFloodOfLargeValuesToNewTopicsKeepsTheHistoriesWithinTwoFifthsOfTheDirectMemoryAndHarmsNoOne() throws Exception {
        startNode();
        String value = "v".repeat(VALUE_BYTES);
        try (Witness witness = Witness.start(url);
             RawWebSocket flooder = RawWebSocket.connectAndHello(url)) {
            publishAll(flooder, i -> "flood/" + i, value);
            assertThat(flooder.all("ERROR")).isEmpty();
            witness.stopAndVerify();
        }
        MetricsScrape metrics = MetricsScrape.of(port);
        long bound = DIRECT_MEMORY_BYTES / 5 * 2;
        assertThat(metrics.value("ringcast_history_bytes")).as("the histories, within two fifths of the direct memory")
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
    }

    @Test
    void connectionsHoldingPartsOfLargeMessagesAreClosedLargestFirstPastAFifthOfTheDirectMemory() throws Exception {
        startNode();
        List<WireSocket> holders = new ArrayList<>();
        try (Witness witness = Witness.start(url)) {
            for (int i = 0; i < HOLDERS; i++) {
                WireSocket holder = new WireSocket(url, null, 0);
                holders.add(holder);
                holder.hello(); // a session: past the handshake's deadline, it could hold its part for good
                try {
                    if (i % 2 == 0) {
                        holder.sendPartOfFrame(1_000_000, PART_BYTES); // held by the frame decoder
                    } else {
                        holder.sendFirstFragment(new byte[PART_BYTES]); // held by the message aggregator
                    }
                } catch (IOException closedWhileSending) {
                    // the node closed it for the bound before all of it was written: what the test is about
                }
            }
            long bound = DIRECT_MEMORY_BYTES / 5;
            Await.until(() -> closes() >= HOLDERS - bound / PART_BYTES, ACK_TIMEOUT,
                    () -> "the holders past the bound closed; the node's output: " + out);
            assertThat(node.isAlive()).as("the node: %s", out).isTrue();
            assertThat(MetricsScrape.of(port).value("ringcast_incomplete_message_bytes"))
                    .isLessThanOrEqualTo(bound);

            // a client's large message still comes through: the holders left hold under three quarters of the bound
            try (RawWebSocket publisher = RawWebSocket.connectAndHello(url)) {
                publisher.publish(1, "large", "w".repeat(PART_BYTES));
                assertThat(publisher.await("PUBLISH_ACK").a()).isEqualTo(1);
            }
            witness.stopAndVerify();
        } finally {
            for (WireSocket holder : holders) {
                holder.close();
            }
        }
        assertThat(out).anySatisfy(line -> assertThat(line).contains("closed: ", "limits.incompleteMessageBytes"));
    }

    @Test
    void subscribersThatReadNothingAreClosedLargestFirstBeforeTheDirectMemoryRunsOut() throws Exception {
        startNode();
        List<WireSocket> stalled = new ArrayList<>();
        try (Witness witness = Witness.start(url);
             RawWebSocket publisher = RawWebSocket.connectAndHello(url)) {
            for (int i = 0; i < STALLED; i++) {
                WireSocket subscriber = new WireSocket(url, null, 4096); // a small window, and it never reads
                subscriber.hello();
                int topic = i;
                subscriber.send(b -> WireCodec.writeSubscribe(b, 1, "own/" + topic, Map.of()));
                stalled.add(subscriber);
            }
            // each subscriber's topic gets its share of twice the direct memory: no frame is shared
            String value = "v".repeat(VALUE_BYTES);
            publishAll(publisher, i -> "own/" + (i % STALLED), value);
            witness.stopAndVerify();
        } finally {
            for (WireSocket subscriber : stalled) {
                subscriber.close();
            }
        }
        MetricsScrape metrics = MetricsScrape.of(port);
        assertThat(metrics.value("ringcast_direct_memory_closes_total")).as("subscribers closed for the memory")
                .isGreaterThan(0);
        assertThat(out).anySatisfy(line -> assertThat(line).contains("direct memory at", "closing the"));
    }

    /**
     * Publishes {@link #PUBLISHES} times {@code value}, publish {@code i} to {@code topic.apply(i)},
     * {@link #WINDOW} ahead of their acks, and waits for every ack; fails as soon as the node exits.
     */
    private void publishAll(RawWebSocket publisher, IntFunction<String> topic, String value) {
        for (int i = 1; i <= PUBLISHES; i++) {
            if (i > WINDOW) {
                int acked = i - WINDOW;
                Await.until(() -> publisher.all("PUBLISH_ACK").size() >= acked || !node.isAlive(), ACK_TIMEOUT,
                        () -> "the ack of publish " + acked + "; the node's output: " + out);
                assertThat(node.isAlive()).as("the node, after %d publishes: %s", i, out).isTrue();
            }
            publisher.publish(i, topic.apply(i), value);
        }
        Await.until(() -> publisher.all("PUBLISH_ACK").size() == PUBLISHES, ACK_TIMEOUT,
                () -> "every publish acked; the node's output: " + out);
    }

    private double closes() {
        try {
            return MetricsScrape.of(port).value("ringcast_incomplete_message_closes_total");
        } catch (Exception nodeGone) {
            throw new AssertionError("the node did not answer /metrics: " + out, nodeGone);
        }
    }
}
