package io.ringcast.cluster;

import static io.ringcast.cluster.RatisTestCluster.GROUPS;
import static io.ringcast.cluster.RatisTestCluster.await;
import static io.ringcast.cluster.RatisTestCluster.topicPerGroup;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Three nodes on the engine {@code ratis}, six groups ({@link RatisTestCluster}), a cluster of its
 * own for each test: a node that leaves pauses only the groups it led (the others keep their
 * leader and term), and its groups' leaders move back when it returns from its data directory (and
 * the snapshot it took when it stopped); a node down while the others snapshotted catches up; a
 * snapshot being written holds up no acks. (Whether the second catches up from the leader's
 * snapshot or from its log depends on whether the log's segment was purged: these entries fit one
 * segment, so from the log.)
 */
@Timeout(120)
class RatisClusterNodeFailureTest {
    @TempDir
    Path data;
    private RatisTestCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeThatLeavesPausesOnlyTheGroupsItLedAndTheLeadersMoveBackWhenItReturns() throws Exception {
        cluster = RatisTestCluster.start(data, 16L << 20, null);
        List<ClusterNode> nodes = cluster.nodes;
        cluster.awaitLeadersSpread();
        cluster.publishRoundRobin(90, 30, "before").forEach(CompletableFuture::join);
        List<ClusterStatus.Group> before = nodes.get(1).status().groups();
        cluster.stop(0); // n1 leads g0 and g3
        // the groups n2 and n3 lead take publishes through them
        Map<Integer, String> topicOf = topicPerGroup("during");
        for (int g = 0; g < GROUPS; g++) {
            if (g % 3 != 0) {
                cluster.publish(1 + g % 2, topicOf.get(g), "v", 0, 0, false).get(5, TimeUnit.SECONDS);
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
            after.add(cluster.publish(1 + i % 2, "after/" + (i % 30), "v" + i, 0, 0, false));
        }
        after.forEach(CompletableFuture::join);
        cluster.startNode(0);
        nodes.get(0).ready().get(30, TimeUnit.SECONDS);
        cluster.awaitLeadersSpread();
        // n1 stopped with a snapshot of each group (so its new sink has only what came after): the
        // topics' last sequences tell that it caught up
        List<RecordingSink> sinks = cluster.sinks;
        await(() -> sinks.get(1).sequences().keySet().stream().filter(t -> !t.startsWith("before/"))
                        .allMatch(t -> sinks.get(0).last(t) == sinks.get(1).last(t)),
                () -> "n1 caught up: " + sinks.get(0).sequences() + " against n2's " + sinks.get(1).sequences());
    }

    @Test
    void aNodeThatWasDownWhileTheOthersSnapshottedCatchesUp() throws Exception {
        // a snapshot every 256 entries (Ratis counts entries), then the log is purged
        cluster = RatisTestCluster.start(data, 1, null);
        List<ClusterNode> nodes = cluster.nodes;
        cluster.stop(2);
        // one publish per entry, each acked before the next goes, all to one group: past both live
        // nodes' thresholds (256 entries each: RatisGroups.snapshotEntries' least)
        String topic = topicPerGroup("snap").get(0);
        for (int i = 0; i < 300; i++) {
            cluster.publish(i % 2, topic, "v" + i, 0, 0, false).get(20, TimeUnit.SECONDS);
        }
        await(() -> nodes.get(0).status().groups().get(0).snapshots() > 0
                        && nodes.get(1).status().groups().get(0).snapshots() > 0,
                () -> "the two live nodes snapshotted: " + nodes.get(0).status() + " " + nodes.get(1).status());
        long restarted = System.nanoTime();
        cluster.startNode(2);
        nodes.get(2).ready().get(60, TimeUnit.SECONDS);
        // the leaders try a member that was down again within half the failure detection time (with
        // Ratis's default, 5 s after some 20 s down: ready after 10-12 s here, and its publishes timed out)
        assertThat(Duration.ofNanos(System.nanoTime() - restarted)).as("n3 caught up on every group after it started")
                .isLessThan(Duration.ofSeconds(6));
        cluster.publish(2, topic, "last", 0, 0, false).get(20, TimeUnit.SECONDS);
        List<RecordingSink> sinks = cluster.sinks;
        await(() -> sinks.get(2).last(topic) == 301 && sinks.get(0).last(topic) == 301,
                () -> "every node has " + topic + "'s sequence 301: " + sinks.get(0).last(topic) + ", "
                        + sinks.get(2).last(topic));
    }

    @Test
    void aSnapshotBeingWrittenHoldsUpNoAcks() throws Exception {
        List<GatedSnapshotContent> contents = List.of(new GatedSnapshotContent(), new GatedSnapshotContent(),
                new GatedSnapshotContent());
        // a snapshot every 256 entries on each node (RatisGroups.snapshotEntries' least)
        cluster = RatisTestCluster.start(data, 1, contents);
        String topic = topicPerGroup("gated").get(0);
        for (int i = 0; i < 300; i++) {
            cluster.publish(i % 3, topic, "v" + i, 0, 0, false).get(20, TimeUnit.SECONDS);
        }
        await(() -> contents.get(0).captures.get() > 0, () -> "n1 began a snapshot of g0");
        // n1's snapshot cannot be written (its content waits at the gate), yet its group goes on
        for (int i = 0; i < 200; i++) {
            cluster.publish(i % 3, topic, "w" + i, 0, 0, false).get(5, TimeUnit.SECONDS);
        }
        ClusterNode n1 = cluster.nodes.get(0);
        await(() -> cluster.sinks.get(0).last(topic) == 500, () -> "n1 applied all 500: " + cluster.sinks.get(0).last(topic));
        assertThat(n1.status().groups().get(0).snapshots()).as("n1's snapshot is still being written").isZero();
        contents.forEach(c -> c.gate.countDown());
        await(() -> n1.status().groups().get(0).snapshots() == 1, () -> "n1's snapshot written");
    }
}
