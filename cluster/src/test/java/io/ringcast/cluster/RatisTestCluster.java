package io.ringcast.cluster;

import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Three {@link ClusterNode}s in this JVM on the engine {@code ratis}, {@link #GROUPS} groups, each
 * node on its own loopback address and data directory, fsync off (tests need no durability), and
 * what the Ratis node tests do with them: publish and remove through a node (sent again while
 * refused {@code NO_MAJORITY}, as the clients do), wait for the leaders to be spread. Nodes are
 * numbered from 0 here and named {@code n1}..{@code n3}; {@link #stop} leaves a {@code null} in the
 * lists until {@link #startNode} starts it again.
 */
final class RatisTestCluster implements AutoCloseable {
    static final String PRINCIPAL = "alice";
    static final int GROUPS = 6;
    private static final long NO_MAJORITY_RETRIES_MS = 10_000;

    final List<ClusterNode> nodes = new ArrayList<>();
    final List<RecordingSink> sinks = new ArrayList<>();
    private final List<ClusterSettings.Member> members = new ArrayList<>();
    private final Path data;
    private final long snapshotLogBytes;
    /** Each node's part of the snapshots, by index; none when null. */
    private final List<? extends SnapshotContent> contents;

    /** Three nodes started and caught up, snapshots at the engine's least interval when {@code snapshotLogBytes} is 1. */
    static RatisTestCluster start(Path data, long snapshotLogBytes, List<? extends SnapshotContent> contents)
            throws Exception {
        RatisTestCluster cluster = new RatisTestCluster(data, snapshotLogBytes, contents);
        try {
            for (int i = 0; i < 3; i++) {
                cluster.members.add(new ClusterSettings.Member("n" + (i + 1), "127.0.0." + (11 + i), FreePorts.pick()));
            }
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(null);
                cluster.sinks.add(null);
                cluster.startNode(i);
            }
            for (ClusterNode node : cluster.nodes) {
                node.ready().get(30, TimeUnit.SECONDS);
            }
            return cluster;
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
    }

    private RatisTestCluster(Path data, long snapshotLogBytes, List<? extends SnapshotContent> contents) {
        this.data = data;
        this.snapshotLogBytes = snapshotLogBytes;
        this.contents = contents;
    }

    /** Starts node i (again) with a new sink and its data directory. */
    void startNode(int i) throws Exception {
        RecordingSink sink = new RecordingSink();
        ReplicationSettings replication = new ReplicationSettings(data.resolve("n" + (i + 1)), false, 1000, 500, 5000,
                snapshotLogBytes, ReplicationSettings.Engine.RATIS, GROUPS);
        ClusterNode node = new ClusterNode(new ClusterSettings("n" + (i + 1), members, 10_000, 1000), replication, sink,
                contents == null ? SnapshotContent.NONE : contents.get(i));
        node.start();
        nodes.set(i, node);
        sinks.set(i, sink);
    }

    /** Closes node i, as a stopped process would be. */
    void stop(int i) {
        nodes.get(i).close();
        nodes.set(i, null);
    }

    @Override
    public void close() {
        if (contents != null) {
            contents.stream().filter(c -> c instanceof GatedSnapshotContent).forEach(c -> ((GatedSnapshotContent) c).gate.countDown());
        }
        nodes.forEach(n -> {
            if (n != null) {
                n.close();
            }
        });
    }

    /** One topic of each group, named {@code prefix/N}. */
    static Map<Integer, String> topicPerGroup(String prefix) {
        Map<Integer, String> topics = new HashMap<>();
        for (int i = 0; topics.size() < GROUPS; i++) {
            topics.putIfAbsent(ClusterNode.groupOf(prefix + "/" + i, GROUPS), prefix + "/" + i);
        }
        return topics;
    }

    /** Waits until group g leads on n(g mod 3 + 1) as every running node sees it (leadership transfers done). */
    void awaitLeadersSpread() {
        await(() -> {
            for (ClusterNode node : nodes) {
                if (node == null) {
                    continue;
                }
                List<ClusterStatus.Group> groups = node.status().groups();
                for (int g = 0; g < GROUPS; g++) {
                    if (!("n" + (g % 3 + 1)).equals(groups.get(g).leader())) {
                        return false;
                    }
                }
            }
            return true;
        }, () -> "group g leads on n(g mod 3 + 1): " + nodes.get(1).status().groups());
    }

    List<CompletableFuture<Long>> publishRoundRobin(int count, int topics, String prefix) {
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            acks.add(publish(i % nodes.size(), prefix + "/" + (i % topics), "v" + i, 0, 0, false));
        }
        return acks;
    }

    /**
     * Publishes through node {@code via}; one refused {@code NO_MAJORITY} (not submitted: an election
     * or a leadership transfer under way, which a loaded machine can bring about at any time) is sent
     * again, as the clients do, until {@link #NO_MAJORITY_RETRIES_MS}.
     */
    CompletableFuture<Long> publish(int via, String path, String value, long publisherId, int correlationId,
                                    boolean republish) {
        CompletableFuture<Long> ack = new CompletableFuture<>();
        send(via, path, value, publisherId, correlationId, republish, ack, System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(NO_MAJORITY_RETRIES_MS));
        return ack;
    }

    private void send(int via, String path, String value, long publisherId, int correlationId, boolean republish,
                      CompletableFuture<Long> ack, long deadlineNs) {
        boolean queued = nodes.get(via).publish(PRINCIPAL, publisherId, 0, 0, correlationId, republish, path,
                value.getBytes(StandardCharsets.UTF_8), (outcome, seq, firstPath) -> {
                    if (outcome == PublishOutcome.ACKED) {
                        ack.complete(seq);
                    } else if (outcome == PublishOutcome.NO_MAJORITY && System.nanoTime() - deadlineNs < 0) {
                        CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() ->
                                send(via, path, value, publisherId, correlationId, republish, ack, deadlineNs));
                    } else {
                        ack.completeExceptionally(new AssertionError(path + " " + value + ": " + outcome));
                    }
                });
        if (!queued) {
            ack.completeExceptionally(new AssertionError("no room for a publish of " + path));
        }
    }

    /** Removes {@code path} through node {@code via}; sent again while refused {@code NO_MAJORITY}, as a publish. */
    CompletableFuture<Long> remove(int via, String path, long ifLastSequence) {
        CompletableFuture<Long> ack = new CompletableFuture<>();
        sendRemoval(via, path, ifLastSequence, ack,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(NO_MAJORITY_RETRIES_MS));
        return ack;
    }

    private void sendRemoval(int via, String path, long ifLastSequence, CompletableFuture<Long> ack, long deadlineNs) {
        boolean queued = nodes.get(via).remove(path, ifLastSequence, (outcome, seq, firstPath) -> {
            if (outcome == PublishOutcome.ACKED) {
                ack.complete(seq);
            } else if (outcome == PublishOutcome.NO_MAJORITY && System.nanoTime() - deadlineNs < 0) {
                CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() ->
                        sendRemoval(via, path, ifLastSequence, ack, deadlineNs));
            } else {
                ack.completeExceptionally(new AssertionError("removal of " + path + ": " + outcome));
            }
        });
        if (!queued) {
            ack.completeExceptionally(new AssertionError("no room for a removal of " + path));
        }
    }

    static void await(BooleanSupplier condition, Supplier<String> what) {
        Await.until(condition, Duration.ofSeconds(30), Duration.ofMillis(20), what);
    }
}
