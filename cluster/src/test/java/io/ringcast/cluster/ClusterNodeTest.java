package io.ringcast.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.internal.PartitionTable;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Three nodes in one JVM, each with its real JGroups channel and peer links on loopback: every
 * acked publish reaches every node, each topic numbered alike and without gaps, also after the
 * owner of a partition leaves. The process-level tests (kill -9, SIGSTOP) are in integration-tests.
 */
@Timeout(120)
class ClusterNodeTest {
    private static final int PARTITIONS = 16;
    private final List<ClusterNode> nodes = new ArrayList<>();
    private final List<RecordingSink> sinks = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(ClusterNode::close);
    }

    @Test
    void everyAckedPublishReachesEveryNodeNumberedAlike() throws Exception {
        startCluster(3);
        List<CompletableFuture<Long>> acks = publishRoundRobin(300, 20, "a");
        for (CompletableFuture<Long> ack : acks) {
            assertThat(ack.get(10, TimeUnit.SECONDS)).isPositive();
        }
        awaitAllHave(0, 1, 2, 300);
        assertSameGapFreeStreams(0, 1, 2);
    }

    @Test
    void publishesGoOnWhenAPartitionsOwnerLeaves() throws Exception {
        startCluster(3);
        for (CompletableFuture<Long> ack : publishRoundRobin(100, 10, "b")) {
            ack.get(10, TimeUnit.SECONDS);
        }
        String owner = new PartitionTable(List.of("n1", "n2", "n3"), PARTITIONS)
                .owner(PartitionTable.partitionOf("b/0", PARTITIONS));
        int leaving = Integer.parseInt(owner.substring(1)) - 1;
        nodes.get(leaving).close();
        List<Integer> staying = new ArrayList<>(List.of(0, 1, 2));
        staying.remove(Integer.valueOf(leaving));
        await(() -> nodes.get(staying.get(0)).status().view().size() == 2
                && nodes.get(staying.get(1)).status().view().size() == 2, "the two others see a view of 2");

        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            int via = staying.get(i % 2);
            acks.add(publish(via, "b/" + (i % 10), "after-" + i));
        }
        for (CompletableFuture<Long> ack : acks) {
            assertThat(ack.get(15, TimeUnit.SECONDS)).isPositive();
        }
        awaitAllHave(staying.get(0), staying.get(1), -1, 200);
        assertSameGapFreeStreams(staying.get(0), staying.get(1), -1);
    }

    @Test
    void aNodeThatComesBackTakesItsPartitionsBackAndPublishesGoOn() throws Exception {
        startCluster(3);
        for (CompletableFuture<Long> ack : publishRoundRobin(100, 10, "r")) {
            ack.get(10, TimeUnit.SECONDS);
        }
        nodes.get(2).close();
        await(() -> nodes.get(0).status().view().size() == 2 && nodes.get(1).status().view().size() == 2,
                "a view of 2");
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            acks.add(publish(i % 2, "r/" + (i % 10), "without-n3-" + i));
        }
        for (CompletableFuture<Long> ack : acks) {
            ack.get(15, TimeUnit.SECONDS);
        }
        RecordingSink sink = new RecordingSink();
        ClusterNode back = new ClusterNode(nodes.get(2).settings(), sink);
        back.start();
        nodes.set(2, back);
        sinks.set(2, sink);
        back.ready().get(30, TimeUnit.SECONDS);
        await(() -> nodes.stream().allMatch(n -> n.status().view().size() == 3), "a view of 3 again");
        acks.clear();
        for (int i = 0; i < 100; i++) {
            acks.add(publish(i % 3, "r/" + (i % 10), "with-n3-again-" + i));
        }
        for (CompletableFuture<Long> ack : acks) {
            assertThat(ack.get(15, TimeUnit.SECONDS)).isPositive();
        }
        await(() -> nodes.get(2).status().ownedPartitions() > 0, "n3 owns partitions again");
        awaitAllHave(0, 1, -1, 300);
        assertSameGapFreeStreams(0, 1, -1);
        // the returning node caught up from snapshots, then followed: the newest of each topic agrees
        await(() -> {
            Map<String, List<Long>> a = sinks.get(0).sequences();
            Map<String, List<Long>> c = sinks.get(2).sequences();
            return a.keySet().stream().allMatch(t -> c.containsKey(t)
                    && c.get(t).get(c.get(t).size() - 1).equals(a.get(t).get(a.get(t).size() - 1)));
        }, "n3 has the newest of every topic");
    }

    @Test
    void aPublishSentAgainThroughAnotherNodeIsAppliedOnce() throws Exception {
        startCluster(3);
        long publisher = 0x5eedL;
        long first = publish(0, "once/t", "v1", publisher, 1 << 30).get(10, TimeUnit.SECONDS);
        // the client lost node 0 before the ack and sends the same publish through node 1, and 2
        assertThat(publish(1, "once/t", "v1", publisher, 1 << 30).get(10, TimeUnit.SECONDS)).isEqualTo(first);
        assertThat(publish(2, "once/t", "v1", publisher, 1 << 30).get(10, TimeUnit.SECONDS)).isEqualTo(first);
        // the next publish of that client, and the same correlation id of another client, are new
        assertThat(publish(1, "once/t", "v2", publisher, (1 << 30) + 1).get(10, TimeUnit.SECONDS)).isEqualTo(first + 1);
        assertThat(publish(2, "once/t", "v3", publisher + 1, 1 << 30).get(10, TimeUnit.SECONDS)).isEqualTo(first + 2);
        awaitAllHave(0, 1, 2, 3);
        assertThat(sinks.get(0).values()).containsEntry("once/t", List.of("v1", "v2", "v3"));
        assertSameGapFreeStreams(0, 1, 2);
    }

    @Test
    void aMinorityRefusesPublishes() throws Exception {
        startCluster(1, 3); // one node running of three configured
        CompletableFuture<PublishOutcome> outcome = new CompletableFuture<>();
        nodes.get(0).publish("c/1", "x".getBytes(StandardCharsets.UTF_8), 0, 0, (o, seq) -> outcome.complete(o));
        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo(PublishOutcome.NO_MAJORITY);
        assertThat(nodes.get(0).status().majority()).isFalse();
    }

    // ------------------------------------------------------------------ helpers

    private void startCluster(int n) throws Exception {
        startCluster(n, n);
    }

    private void startCluster(int running, int configured) throws Exception {
        List<ClusterSettings.Member> members = new ArrayList<>();
        for (int i = 1; i <= configured; i++) {
            members.add(new ClusterSettings.Member("n" + i, "127.0.0.1", FreePorts.pick(), FreePorts.pick()));
        }
        for (int i = 1; i <= running; i++) {
            RecordingSink sink = new RecordingSink();
            ClusterNode node = new ClusterNode(new ClusterSettings("n" + i, members, PARTITIONS, 64, 5000), sink);
            node.start();
            nodes.add(node);
            sinks.add(sink);
        }
        for (ClusterNode node : nodes) {
            node.ready().get(30, TimeUnit.SECONDS);
        }
        await(() -> nodes.stream().allMatch(node -> node.status().view().size() == running), "a view of " + running);
        if (running >= configured / 2 + 1) {
            // every partition sequenced by someone
            await(() -> nodes.stream().mapToInt(node -> node.status().ownedPartitions()).sum() == PARTITIONS,
                    "every partition owned");
        }
    }

    private List<CompletableFuture<Long>> publishRoundRobin(int count, int topics, String prefix) {
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            acks.add(publish(i % nodes.size(), prefix + "/" + (i % topics), "v" + i));
        }
        return acks;
    }

    private CompletableFuture<Long> publish(int via, String path, String value) {
        return publish(via, path, value, 0, 0);
    }

    private CompletableFuture<Long> publish(int via, String path, String value, long publisherId, int correlationId) {
        CompletableFuture<Long> ack = new CompletableFuture<>();
        nodes.get(via).publish(path, value.getBytes(StandardCharsets.UTF_8), publisherId, correlationId, (outcome, seq) -> {
            if (outcome == PublishOutcome.ACKED) {
                ack.complete(seq);
            } else {
                ack.completeExceptionally(new AssertionError(path + " " + value + ": " + outcome));
            }
        });
        return ack;
    }

    private void awaitAllHave(int a, int b, int c, int total) {
        await(() -> sinks.get(a).count() == total && sinks.get(b).count() == total
                && (c < 0 || sinks.get(c).count() == total), () -> "every node applied " + total + " updates: "
                + sinks.stream().map(RecordingSink::count).toList() + " " + nodes.stream().map(ClusterNode::status).toList());
    }

    private void assertSameGapFreeStreams(int a, int b, int c) {
        Map<String, List<Long>> first = sinks.get(a).sequences();
        first.forEach((path, seqs) -> {
            for (int i = 0; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).as(path + " update " + i).isEqualTo(i + 1L);
            }
        });
        assertThat(sinks.get(b).sequences()).isEqualTo(first);
        assertThat(sinks.get(b).values()).isEqualTo(sinks.get(a).values());
        if (c >= 0) {
            assertThat(sinks.get(c).sequences()).isEqualTo(first);
            assertThat(sinks.get(c).values()).isEqualTo(sinks.get(a).values());
        }
    }

    private static void await(BooleanSupplier condition, String what) {
        await(condition, () -> what);
    }

    private static void await(BooleanSupplier condition, Supplier<String> what) {
        Await.until(condition, Duration.ofSeconds(30), Duration.ofMillis(20), what);
    }

    /** What one node applied, per topic, in order. */
    private static final class RecordingSink implements UpdateSink {
        private final Map<String, List<Long>> sequences = new ConcurrentHashMap<>();
        private final Map<String, List<String>> values = new ConcurrentHashMap<>();
        private volatile int count;

        @Override
        public synchronized void apply(String path, long topicSequence, byte[] value) {
            sequences.computeIfAbsent(path, p -> new ArrayList<>()).add(topicSequence);
            values.computeIfAbsent(path, p -> new ArrayList<>()).add(new String(value, StandardCharsets.UTF_8));
            count++;
        }

        int count() {
            return count;
        }

        synchronized Map<String, List<Long>> sequences() {
            Map<String, List<Long>> copy = new java.util.TreeMap<>();
            sequences.forEach((k, v) -> copy.put(k, List.copyOf(v)));
            return copy;
        }

        synchronized Map<String, List<String>> values() {
            Map<String, List<String>> copy = new java.util.TreeMap<>();
            values.forEach((k, v) -> copy.put(k, List.copyOf(v)));
            return copy;
        }
    }
}
