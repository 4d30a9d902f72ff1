package io.ringcast.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Three nodes in one JVM on the engine {@code ratis}, six groups, each node on its own loopback
 * address: the groups' leaders are spread two a node (leadership transfers), and move back after a
 * node returns; every
 * acked publish reaches every node, each topic numbered alike and without gaps; a node that leaves
 * pauses only the groups it led (the others keep their leader and term); a node restarted from
 * its data directory (and the snapshot it
 * took when it stopped), or down while the others snapshotted, catches up; a publish sent again is
 * applied once; a snapshot being written holds up no acks. (Whether the second catches up from the leader's snapshot or from its log depends
 * on whether the log's segment was purged: these entries fit one segment, so from the log.)
 */
@Timeout(120)
class RatisClusterNodeTest {
    private static final String PRINCIPAL = "alice";
    private static final int GROUPS = 6;
    @TempDir
    Path data;
    private final List<ClusterNode> nodes = new ArrayList<>();
    private final List<RecordingSink> sinks = new ArrayList<>();
    private final List<ClusterSettings.Member> members = new ArrayList<>();
    private static final long NO_MAJORITY_RETRIES_MS = 10_000;
    private long snapshotLogBytes = 16L << 20;
    /** Each node's part of the snapshots, by index; none by default. */
    private List<? extends SnapshotContent> contents;

    @AfterEach
    void stop() {
        if (contents != null) {
            contents.stream().filter(c -> c instanceof GatedSnapshotContent).forEach(c -> ((GatedSnapshotContent) c).gate.countDown());
        }
        nodes.forEach(n -> {
            if (n != null) {
                n.close();
            }
        });
    }

    @Test
    void theGroupsLeadersAreSpreadOverTheNodes() throws Exception {
        startCluster(3);
        awaitLeadersSpread();
        ClusterStatus status = nodes.get(1).status();
        assertThat(status.engine()).isEqualTo("ratis");
        assertThat(status.groups()).hasSize(GROUPS);
        assertThat(status.majority()).isTrue();
        assertThat(status.ready()).isTrue();
        // no views on Ratis: the members heard from lately (n2 leads two groups, so hears n1 and n3)
        await(() -> nodes.get(1).status().view().equals(List.of("n1", "n2", "n3")),
                () -> "n2 heard from every member: " + nodes.get(1).status().view());
    }

    @Test
    void everyAckedPublishReachesEveryNodeNumberedAlike() throws Exception {
        startCluster(3);
        awaitLeadersSpread(); // a transfer under way refuses publishes with NO_MAJORITY, as an election does
        List<CompletableFuture<Long>> acks = publishRoundRobin(600, 30, "a");
        for (CompletableFuture<Long> ack : acks) {
            assertThat(ack.get(20, TimeUnit.SECONDS)).isPositive();
        }
        awaitAllHave(600);
        assertSameGapFreeStreams();
    }

    @Test
    void aPublishSentAgainIsAppliedOnceAndAnsweredWithItsFirstSequence() throws Exception {
        startCluster(3);
        awaitLeadersSpread();
        long first = publish(0, "dup/x", "one", 7, 1, false).get(20, TimeUnit.SECONDS);
        long again = publish(2, "dup/x", "one", 7, 1, true).get(20, TimeUnit.SECONDS);
        assertThat(again).isEqualTo(first);
        awaitAllHave(1);
    }

    @Test
    void exactlyOneNodeLeadsEachGroupAndItIsTheLeaderTheStatusNames() throws Exception {
        startCluster(3);
        awaitLeadersSpread();
        Map<Integer, String> topicOf = topicPerGroup("lead");
        await(() -> topicOf.values().stream().allMatch(t -> nodes.stream().filter(n -> n.leadsGroupOf(t)).count() == 1),
                () -> "one leader per group: " + topicOf);
        for (int g = 0; g < GROUPS; g++) {
            for (int i = 0; i < 3; i++) {
                assertThat(nodes.get(i).leadsGroupOf(topicOf.get(g))).as("n%d leads g%d", i + 1, g)
                        .isEqualTo(i == g % 3);
            }
        }
    }

    @Test
    void aRemovalReachesEveryNodeInItsPlaceAmongThePublishesOfItsGroup() throws Exception {
        startCluster(3);
        awaitLeadersSpread();
        Map<Integer, String> topicOf = topicPerGroup("gone");
        for (int g = 0; g < 3; g++) { // a group each node leads
            String t = topicOf.get(g);
            int notLeader = (g + 1) % 3;
            assertThat(publish(g, t, "v1", 0, 0, false).get(20, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(publish(notLeader, t, "v2", 0, 0, false).get(20, TimeUnit.SECONDS)).isEqualTo(2);
            assertThat(remove(notLeader, t, 1).get(20, TimeUnit.SECONDS)).as("an expiry a publish overtook").isZero();
            assertThat(remove(notLeader, t, 2).get(20, TimeUnit.SECONDS)).as("removed at 2").isEqualTo(2);
            assertThat(publish(g, t, "w1", 0, 0, false).get(20, TimeUnit.SECONDS)).as("made anew").isEqualTo(1);
            assertThat(remove(g, t, 0).get(20, TimeUnit.SECONDS)).isEqualTo(1);
        }
        for (int g = 0; g < 3; g++) {
            String t = topicOf.get(g);
            await(() -> sinks.stream().allMatch(s -> s.events(t).size() == 5), () -> "every node has the 5 events of "
                    + t + ": " + sinks.stream().map(s -> s.events(t)).toList());
            List<String> events = sinks.get(0).events(t);
            assertThat(events).extracting(e -> e.replaceAll("#-?\\d+ ", ""))
                    .containsExactly("apply 1 v1", "apply 2 v2", "removed 2", "apply 1 w1", "removed 1");
            assertThat(ClusterNodeTest.incarnation(events.get(0))).isEqualTo(ClusterNodeTest.incarnation(events.get(1)))
                    .isNotEqualTo(ClusterNodeTest.incarnation(events.get(3)));
            for (RecordingSink s : sinks) {
                assertThat(s.events(t)).isEqualTo(events);
            }
        }
    }

    @Test
    void aNodeThatLeavesPausesOnlyTheGroupsItLedAndTheLeadersMoveBackWhenItReturns() throws Exception {
        startCluster(3);
        awaitLeadersSpread();
        publishRoundRobin(90, 30, "before").forEach(CompletableFuture::join);
        List<ClusterStatus.Group> before = nodes.get(1).status().groups();
        nodes.get(0).close(); // n1 leads g0 and g3
        nodes.set(0, null);
        // the groups n2 and n3 lead take publishes through them
        Map<Integer, String> topicOf = topicPerGroup("during");
        for (int g = 0; g < GROUPS; g++) {
            if (g % 3 != 0) {
                publish(1 + g % 2, topicOf.get(g), "v", 0, 0, false).get(5, TimeUnit.SECONDS);
            }
        }
        await(() -> nodes.get(1).status().view().equals(List.of("n2", "n3")),
                () -> "n2 no longer hears n1: " + nodes.get(1).status().view());
        // n1's groups elect another leader among n2 and n3, then take publishes again
        await(() -> nodes.get(1).status().groups().stream().allMatch(s -> s.leader() != null && !s.leader().equals("n1")),
                () -> "n1's groups have new leaders: " + nodes.get(1).status().groups());
        // and only they: the others kept their leader and term, so they never stopped for an election
        List<ClusterStatus.Group> after1 = nodes.get(1).status().groups();
        for (int g = 0; g < GROUPS; g++) {
            if (g % 3 != 0) {
                assertThat(after1.get(g).leader()).as("g%d's leader", g).isEqualTo(before.get(g).leader());
                assertThat(after1.get(g).term()).as("g%d's term", g).isEqualTo(before.get(g).term());
            }
        }
        List<CompletableFuture<Long>> after = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            after.add(publish(1 + i % 2, "after/" + (i % 30), "v" + i, 0, 0, false));
        }
        after.forEach(CompletableFuture::join);
        startNode(0);
        nodes.get(0).ready().get(30, TimeUnit.SECONDS);
        awaitLeadersSpread();
        // n1 stopped with a snapshot of each group (so its new sink has only what came after): the
        // topics' last sequences tell that it caught up
        await(() -> sinks.get(1).sequences().keySet().stream().filter(t -> !t.startsWith("before/"))
                        .allMatch(t -> sinks.get(0).last(t) == sinks.get(1).last(t)),
                () -> "n1 caught up: " + sinks.get(0).sequences() + " against n2's " + sinks.get(1).sequences());
    }

    @Test
    void aNodeThatWasDownWhileTheOthersSnapshottedCatchesUp() throws Exception {
        snapshotLogBytes = 1; // a snapshot every 256 entries (Ratis counts entries), then the log is purged
        startCluster(3);
        nodes.get(2).close();
        nodes.set(2, null);
        // one publish per entry, each acked before the next goes, all to one group: past both live
        // nodes' thresholds (256 entries each: RatisGroups.snapshotEntries' least)
        String topic = topicPerGroup("snap").get(0);
        for (int i = 0; i < 300; i++) {
            publish(i % 2, topic, "v" + i, 0, 0, false).get(20, TimeUnit.SECONDS);
        }
        await(() -> nodes.get(0).status().groups().get(0).snapshots() > 0
                        && nodes.get(1).status().groups().get(0).snapshots() > 0,
                () -> "the two live nodes snapshotted: " + nodes.get(0).status() + " " + nodes.get(1).status());
        long restarted = System.nanoTime();
        startNode(2);
        nodes.get(2).ready().get(60, TimeUnit.SECONDS);
        // the leaders try a member that was down again within half the failure detection time (with
        // Ratis's default, 5 s after some 20 s down: ready after 10-12 s here, and its publishes timed out)
        assertThat(Duration.ofNanos(System.nanoTime() - restarted)).as("n3 caught up on every group after it started")
                .isLessThan(Duration.ofSeconds(6));
        publish(2, topic, "last", 0, 0, false).get(20, TimeUnit.SECONDS);
        await(() -> sinks.get(2).last(topic) == 301 && sinks.get(0).last(topic) == 301,
                () -> "every node has " + topic + "'s sequence 301: " + sinks.get(0).last(topic) + ", "
                        + sinks.get(2).last(topic));
    }

    @Test
    void aSnapshotBeingWrittenHoldsUpNoAcks() throws Exception {
        snapshotLogBytes = 1; // a snapshot every 256 entries on each node (RatisGroups.snapshotEntries' least)
        List<GatedSnapshotContent> contents = List.of(new GatedSnapshotContent(), new GatedSnapshotContent(), new GatedSnapshotContent());
        this.contents = contents;
        startCluster(3);
        String topic = topicPerGroup("gated").get(0);
        for (int i = 0; i < 300; i++) {
            publish(i % 3, topic, "v" + i, 0, 0, false).get(20, TimeUnit.SECONDS);
        }
        await(() -> contents.get(0).captures.get() > 0, () -> "n1 began a snapshot of g0");
        // n1's snapshot cannot be written (its content waits at the gate), yet its group goes on
        for (int i = 0; i < 200; i++) {
            publish(i % 3, topic, "w" + i, 0, 0, false).get(5, TimeUnit.SECONDS);
        }
        await(() -> sinks.get(0).last(topic) == 500, () -> "n1 applied all 500: " + sinks.get(0).last(topic));
        assertThat(nodes.get(0).status().groups().get(0).snapshots()).as("n1's snapshot is still being written").isZero();
        contents.forEach(c -> c.gate.countDown());
        await(() -> nodes.get(0).status().groups().get(0).snapshots() == 1, () -> "n1's snapshot written");
    }

    // ------------------------------------------------------------------ helpers

    /** One topic of each group, named {@code prefix/N}. */
    private static Map<Integer, String> topicPerGroup(String prefix) {
        Map<Integer, String> topics = new HashMap<>();
        for (int i = 0; topics.size() < GROUPS; i++) {
            topics.putIfAbsent(ClusterNode.groupOf(prefix + "/" + i, GROUPS), prefix + "/" + i);
        }
        return topics;
    }

    private void awaitLeadersSpread() {
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

    private void startCluster(int n) throws Exception {
        for (int i = 0; i < n; i++) {
            members.add(new ClusterSettings.Member("n" + (i + 1), "127.0.0." + (11 + i), FreePorts.pick()));
        }
        for (int i = 0; i < n; i++) {
            nodes.add(null);
            sinks.add(null);
            startNode(i);
        }
        for (ClusterNode node : nodes) {
            node.ready().get(30, TimeUnit.SECONDS);
        }
    }

    /** Starts node i (again) with a new sink and its data directory, fsync off (tests need no durability). */
    private void startNode(int i) throws Exception {
        RecordingSink sink = new RecordingSink();
        ReplicationSettings replication = new ReplicationSettings(data.resolve("n" + (i + 1)), false, 1000, 500, 5000,
                snapshotLogBytes, ReplicationSettings.Engine.RATIS, GROUPS);
        ClusterNode node = new ClusterNode(new ClusterSettings("n" + (i + 1), members, 10_000, 1000), replication, sink,
                contents == null ? SnapshotContent.NONE : contents.get(i));
        node.start();
        nodes.set(i, node);
        sinks.set(i, sink);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private List<CompletableFuture<Long>> publishRoundRobin(int count, int topics, String prefix) {
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
    private CompletableFuture<Long> publish(int via, String path, String value, long publisherId, int correlationId,
                                            boolean republish) {
        CompletableFuture<Long> ack = new CompletableFuture<>();
        send(via, path, value, publisherId, correlationId, republish, ack, System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(NO_MAJORITY_RETRIES_MS));
        return ack;
    }

    private void send(int via, String path, String value, long publisherId, int correlationId, boolean republish,
                      CompletableFuture<Long> ack, long deadlineNs) {
        boolean queued = nodes.get(via).publish(PRINCIPAL, publisherId, 0, 0, correlationId, republish, path,
                bytes(value), (outcome, seq, firstPath) -> {
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
    private CompletableFuture<Long> remove(int via, String path, long ifLastSequence) {
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

    private void awaitAllHave(int total) {
        await(() -> sinks.stream().allMatch(s -> s.count() == total), () -> "every node applied " + total + ": "
                + sinks.stream().map(RecordingSink::count).toList());
    }

    private void assertSameGapFreeStreams() {
        Map<String, List<Long>> first = sinks.get(0).sequences();
        first.forEach((path, seqs) -> {
            for (int i = 0; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).as(path + " update " + i).isEqualTo(i + 1L);
            }
        });
        for (RecordingSink s : sinks) {
            assertThat(s.sequences()).isEqualTo(first);
            assertThat(s.values()).isEqualTo(sinks.get(0).values());
        }
    }

    private static void await(BooleanSupplier condition, Supplier<String> what) {
        Await.until(condition, Duration.ofSeconds(30), Duration.ofMillis(20), what);
    }
}
