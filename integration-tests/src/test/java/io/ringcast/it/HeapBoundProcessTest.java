package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.client.RingcastClient;
import io.ringcast.it.cluster.ClusterProcesses;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What clients make a node keep on its heap, bounded as a whole ({@code limits.heapRefusePercent},
 * 80% by default), against a real node process with a 64-MB heap. Each count has a limit of its own
 * (topics 200,000, about 1.5 KB of heap each with the long paths below), each sized for the
 * launcher's heap alone: before the bound, one anonymous publisher of new topics made this node run
 * out of heap and exit (status 3). Now, once a full collection leaves the heap past the mark, new
 * topics, sessions and subscriptions are refused with errors that name the key, a witness opened
 * before publishes and receives throughout, and the node takes new clients again once the topics
 * are removed. In a cluster every node holds every topic: the node that takes a publish logs it "to
 * an existing topic only" while it is past its mark, and every node refuses those that would create one.
 * Updates of topics that exist are not refused: the histories they fill are bounded by count
 * ({@code history.nodeMaxEntries}, a fifth of the heap by default), since each update kept holds
 * heap whatever its size.
 */
@Timeout(180)
class HeapBoundProcessTest {
    private static final int HEAP_MB = 64;
    /** Publishes sent ahead of their answers. */
    private static final int WINDOW = 256;
    /** More new topics than the heap holds (the flood stops at the first refusal). */
    private static final int MOST_TOPICS = 80_000;
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);
    /** A heap that small updates fill sooner. */
    private static final int SMALL_HEAP_MB = 40;
    /** Small updates of a few topics: more than the heap holds as histories (about 160 B each; without the bound the node ran out of heap after 131,249). */
    private static final int SMALL_UPDATES = 200_000;
    /** Long paths, so that each topic holds more heap and fewer fill it. */
    private static final String PATH_PADDING = "p".repeat(200);

    @TempDir
    Path dir;
    private Process node;
    private List<String> out;
    private int port;
    private String url;

    @AfterEach
    void stopNode() throws InterruptedException {
        if (node != null) {
            node.toHandle().destroy();
            assertThat(node.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void newTopicsSessionsAndSubscriptionsAreRefusedPastTheHeapMarkWhileOpenSessionsGoOnAndRemovingTheTopicsLiftsIt()
            throws Exception {
        node = ServerProcesses.launchOpen(dir, List.of("-Xmx" + HEAP_MB + "m", "-XX:+UseSerialGC",
                "-XX:+ExitOnOutOfMemoryError"));
        out = collect(node);
        port = Integer.parseInt(awaitPort(node, out));
        url = "ws://127.0.0.1:" + port + "/ws";

        try (Witness witness = Witness.start(url);
             RawWebSocket flooder = RawWebSocket.connectAndHello(url)) {
            int sent = flood(flooder, node::isAlive, () -> String.valueOf(out));
            Await.until(() -> flooder.all("PUBLISH_ACK").size() + flooder.all("ERROR").size() == sent, ANSWER_TIMEOUT,
                    () -> "every publish answered; the node's output: " + out);
            int created = flooder.all("PUBLISH_ACK").size();
            RawWebSocket.Msg refusal = flooder.await("ERROR");
            assertThat(ErrorCode.of(refusal.a())).isEqualTo(ErrorCode.TOO_MANY_TOPICS);
            assertThat(refusal.text()).contains("a new topic", "limits.heapRefusePercent = 80% of its");
            assertThat(created).as("topics made before the refusal").isGreaterThan(1_000);
            assertThat(MetricsScrape.of(port).value("ringcast_heap_refusing")).isEqualTo(1.0);

            // a new session is refused, and so is a new subscription of an open one
            try (RawWebSocket late = RawWebSocket.connect(url)) {
                late.send(b -> WireCodec.writeHello(b, WireCodec.VERSION, "late", Credentials.ANONYMOUS, 0));
                RawWebSocket.Msg error = late.await("ERROR");
                assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_CONNECTIONS);
                assertThat(error.text()).contains("session of", "limits.heapRefusePercent");
            }
            flooder.subscribe(1, "witness/#");
            Await.until(() -> flooder.all("ERROR").stream()
                            .anyMatch(e -> ErrorCode.of(e.a()) == ErrorCode.TOO_MANY_SUBSCRIPTIONS), ANSWER_TIMEOUT,
                    () -> "the subscription refused; got " + flooder.all("ERROR"));
            witness.stopAndVerify();

            // the topics removed, the node asks for a full collection, which lifts the refusal
            flooder.remove(2, "flood/#");
            assertThat(flooder.await("REMOVED").b()).isEqualTo(created);
            Await.until(() -> refusing() == 0.0, ANSWER_TIMEOUT,
                    () -> "the refusal lifted; the node's output: " + out);
        }
        try (RawWebSocket late = RawWebSocket.connectAndHello(url)) {
            late.publish(1, "after/one", "v");
            assertThat(late.await("PUBLISH_ACK").a()).isEqualTo(1);
        }
        assertThat(MetricsScrape.of(port).value("ringcast_heap_refusals_total")).isGreaterThanOrEqualTo(3.0);
        assertThat(node.isAlive()).as("the node: %s", out).isTrue();
        assertThat(out).anySatisfy(line -> assertThat(line).contains("past limits.heapRefusePercent"));
    }

    @Test
    void smallUpdatesOfTopicsThatExistKeepTheHistoriesWithinTheirCountOnTheHeapAndTheNodeServing() throws Exception {
        // 16 topics of 65,536 updates each could hold a million, about 160 B of heap apiece
        // whatever the value's size: before history.nodeMaxEntries this node ran out of heap
        node = ServerProcesses.launchOpen(dir, List.of("-Xmx" + SMALL_HEAP_MB + "m", "-XX:+UseSerialGC",
                "-XX:+ExitOnOutOfMemoryError"), "history:\n  length: 65536\n");
        out = collect(node);
        port = Integer.parseInt(awaitPort(node, out));
        url = "ws://127.0.0.1:" + port + "/ws";

        try (Witness witness = Witness.start(url);
             RingcastClient publisher = RingcastClient.builder().addresses(url).build()) {
            publisher.connect().get(30, TimeUnit.SECONDS);
            Semaphore window = new Semaphore(WINDOW);
            AtomicReference<Throwable> refused = new AtomicReference<>();
            byte[] value = {'v'};
            for (int i = 0; i < SMALL_UPDATES && refused.get() == null; i++) {
                while (!window.tryAcquire(1, TimeUnit.SECONDS)) {
                    assertThat(node.isAlive()).as("the node, after %d publishes: %s", i, out).isTrue();
                }
                publisher.publish("small/" + i % 16, value).whenComplete((sequence, failure) -> {
                    if (failure != null) {
                        refused.compareAndSet(null, failure);
                    }
                    window.release();
                });
            }
            assertThat(window.tryAcquire(WINDOW, ANSWER_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                    .as("every publish answered; the node's output: %s", out).isTrue();
            assertThat(refused.get()).as("a refusal").isNull();
            witness.stopAndVerify();
        }
        MetricsScrape metrics = MetricsScrape.of(port);
        long bound = SMALL_HEAP_MB * 1024L * 1024 / 5 / 160; // a fifth of the heap at 160 B each, less the collector's reserve
        assertThat(metrics.value("ringcast_history_entries")).as("the updates the histories keep")
                .isLessThanOrEqualTo(bound).isGreaterThan(bound * 0.8);
        assertThat(metrics.value("ringcast_history_updates_let_go_total")).as("older updates let go")
                .isGreaterThan(SMALL_UPDATES - bound);
        assertThat(node.isAlive()).as("the node: %s", out).isTrue();
    }

    private double refusing() {
        try {
            return MetricsScrape.of(port).value("ringcast_heap_refusing");
        } catch (Exception nodeGone) {
            throw new AssertionError("the node did not answer /metrics: " + out, nodeGone);
        }
    }

    @Test
    void aClusterRefusesNewTopicsOnEveryNodeOnceTheNodeTakingThemIsPastItsMarkAndKeepsServing(TestInfo info)
            throws Exception {
        try (ClusterProcesses cluster = ClusterProcesses.start(info.getTestMethod().orElseThrow().getName(), 3, "", "",
                List.of("-Xmx" + HEAP_MB + "m", "-XX:+ExitOnOutOfMemoryError"))) {
            int leader = cluster.awaitLeader(Duration.ofSeconds(60));
            int other = leader % 3 + 1;
            BooleanSupplier allAlive = () -> cluster.isRunning(1) && cluster.isRunning(2) && cluster.isRunning(3);
            try (Witness witness = Witness.start(cluster.webSocketUrl(other));
                 RawWebSocket flooder = RawWebSocket.connectAndHello(cluster.webSocketUrl(leader))) {
                flooder.publish(MOST_TOPICS + 1, "kept/one", "v");
                assertThat(flooder.await("PUBLISH_ACK").a()).isEqualTo(MOST_TOPICS + 1);
                int sent = flood(flooder, allAlive, cluster::describe);
                Await.until(() -> flooder.all("PUBLISH_ACK").size() - 1 + flooder.all("ERROR").size() == sent,
                        ANSWER_TIMEOUT, () -> "every publish answered; " + cluster.describe());
                int created = flooder.all("PUBLISH_ACK").size() - 1;
                RawWebSocket.Msg refusal = flooder.await("ERROR");
                assertThat(ErrorCode.of(refusal.a())).isEqualTo(ErrorCode.TOO_MANY_TOPICS);
                assertThat(refusal.text()).contains("a new topic", "limits.heapRefusePercent = 80% of its");
                assertThat(created).as("topics made before the refusal").isGreaterThan(1_000);
                // an existing topic still takes publishes through the node past its mark
                flooder.publish(MOST_TOPICS + 2, "kept/one", "w");
                Await.until(() -> flooder.all("PUBLISH_ACK").stream().anyMatch(a -> a.a() == MOST_TOPICS + 2),
                        ANSWER_TIMEOUT, () -> "the publish to an existing topic acked; got " + flooder.all("ERROR"));
                witness.stopAndVerify();
                // every node holds the same topics (the flood's, kept/one and the witness's), no refused one
                for (int node = 1; node <= 3; node++) {
                    int n = node;
                    Await.until(() -> cluster.health(n).path("topics").asInt() == created + 2, ANSWER_TIMEOUT,
                            () -> "node " + n + " holds the " + (created + 2) + " topics; " + cluster.health(n));
                }
            }
            assertThat(allAlive.getAsBoolean()).as("every node: %s", cluster.describe()).isTrue();
        }
    }

    /**
     * Publishes to new topics, {@link #WINDOW} ahead of their answers, until the first refusal or
     * {@link #MOST_TOPICS}; fails as soon as {@code alive} says a node exited. Returns how many were sent.
     */
    private int flood(RawWebSocket flooder, BooleanSupplier alive, Supplier<String> nodes) {
        int sent = 0;
        while (sent < MOST_TOPICS && flooder.all("ERROR").isEmpty()) {
            for (int i = 0; i < WINDOW && sent < MOST_TOPICS; i++) {
                sent++;
                flooder.publish(sent, "flood/" + sent + "/" + PATH_PADDING, "v");
            }
            int answered = sent - WINDOW;
            Await.until(() -> flooder.messages.size() >= answered || !alive.getAsBoolean(), ANSWER_TIMEOUT,
                    () -> "the answers to the first " + answered + " publishes; the nodes: " + nodes.get());
            assertThat(alive.getAsBoolean()).as("the nodes, after %d publishes: %s", answered, nodes.get()).isTrue();
        }
        return sent;
    }
}
