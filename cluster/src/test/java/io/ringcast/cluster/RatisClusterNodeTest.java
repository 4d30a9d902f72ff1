package io.ringcast.cluster;

import static io.ringcast.cluster.RatisTestCluster.GROUPS;
import static io.ringcast.cluster.RatisTestCluster.await;
import static io.ringcast.cluster.RatisTestCluster.topicPerGroup;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Three nodes in one JVM on the engine {@code ratis}, six groups ({@link RatisTestCluster}), one
 * cluster for the whole class, each test on topics of its own: the groups' leaders are spread two a
 * node (leadership transfers) and each group has one; every acked publish reaches every node, each
 * topic numbered alike and without gaps; a publish sent again is applied once; a removal takes its
 * place among its group's publishes. What stops nodes or snapshots: {@link RatisClusterNodeFailureTest}.
 */
@Timeout(120)
class RatisClusterNodeTest {
    @TempDir
    static Path data;
    private static RatisTestCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = RatisTestCluster.start(data, 16L << 20, null);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void leadersSpread() {
        // a transfer under way refuses publishes with NO_MAJORITY, as an election does
        cluster.awaitLeadersSpread();
    }

    @Test
    void theGroupsLeadersAreSpreadOverTheNodes() {
        ClusterStatus status = cluster.nodes.get(1).status();
        assertThat(status.engine()).isEqualTo("ratis");
        assertThat(status.groups()).hasSize(GROUPS);
        assertThat(status.majority()).isTrue();
        assertThat(status.ready()).isTrue();
        // no views on Ratis: the members heard from lately (n2 leads two groups, so hears n1 and n3)
        await(() -> cluster.nodes.get(1).status().view().equals(List.of("n1", "n2", "n3")),
                () -> "n2 heard from every member: " + cluster.nodes.get(1).status().view());
    }

    @Test
    void everyAckedPublishReachesEveryNodeNumberedAlike() throws Exception {
        List<CompletableFuture<Long>> acks = cluster.publishRoundRobin(600, 30, "a");
        for (CompletableFuture<Long> ack : acks) {
            assertThat(ack.get(20, TimeUnit.SECONDS)).isPositive();
        }
        await(() -> cluster.sinks.stream().allMatch(s -> count(s, "a/") == 600), () -> "every node applied 600: "
                + cluster.sinks.stream().map(s -> count(s, "a/")).toList());
        Map<String, List<Long>> first = under(cluster.sinks.get(0).sequences(), "a/");
        first.forEach((path, seqs) -> {
            for (int i = 0; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).as(path + " update " + i).isEqualTo(i + 1L);
            }
        });
        for (RecordingSink s : cluster.sinks) {
            assertThat(under(s.sequences(), "a/")).isEqualTo(first);
            assertThat(under(s.values(), "a/")).isEqualTo(under(cluster.sinks.get(0).values(), "a/"));
        }
    }

    @Test
    void aPublishSentAgainIsAppliedOnceAndAnsweredWithItsFirstSequence() throws Exception {
        long first = cluster.publish(0, "dup/x", "one", 7, 1, false).get(20, TimeUnit.SECONDS);
        long again = cluster.publish(2, "dup/x", "one", 7, 1, true).get(20, TimeUnit.SECONDS);
        assertThat(again).isEqualTo(first);
        // the next publish to the topic is numbered after it only if the one sent again was applied once
        long next = cluster.publish(1, "dup/x", "two", 0, 0, false).get(20, TimeUnit.SECONDS);
        assertThat(next).isEqualTo(first + 1);
        await(() -> cluster.sinks.stream().allMatch(s -> s.last("dup/x") == next), () -> "every node applied dup/x");
        for (RecordingSink s : cluster.sinks) {
            assertThat(s.sequences().get("dup/x")).as("dup/x applied once").containsExactly(first, next);
        }
    }

    @Test
    void exactlyOneNodeLeadsEachGroupAndItIsTheLeaderTheStatusNames() {
        List<ClusterNode> nodes = cluster.nodes;
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
        Map<Integer, String> topicOf = topicPerGroup("gone");
        for (int g = 0; g < 3; g++) { // a group each node leads
            String t = topicOf.get(g);
            int notLeader = (g + 1) % 3;
            assertThat(cluster.publish(g, t, "v1", 0, 0, false).get(20, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(cluster.publish(notLeader, t, "v2", 0, 0, false).get(20, TimeUnit.SECONDS)).isEqualTo(2);
            assertThat(cluster.remove(notLeader, t, 1).get(20, TimeUnit.SECONDS)).as("an expiry a publish overtook").isZero();
            assertThat(cluster.remove(notLeader, t, 2).get(20, TimeUnit.SECONDS)).as("removed at 2").isEqualTo(2);
            assertThat(cluster.publish(g, t, "w1", 0, 0, false).get(20, TimeUnit.SECONDS)).as("made anew").isEqualTo(1);
            assertThat(cluster.remove(g, t, 0).get(20, TimeUnit.SECONDS)).isEqualTo(1);
        }
        for (int g = 0; g < 3; g++) {
            String t = topicOf.get(g);
            await(() -> cluster.sinks.stream().allMatch(s -> s.events(t).size() == 5), () -> "every node has the 5 events of "
                    + t + ": " + cluster.sinks.stream().map(s -> s.events(t)).toList());
            List<String> events = cluster.sinks.get(0).events(t);
            assertThat(events).extracting(e -> e.replaceAll("#-?\\d+ ", ""))
                    .containsExactly("apply 1 v1", "apply 2 v2", "removed 2", "apply 1 w1", "removed 1");
            assertThat(ClusterNodeTest.incarnation(events.get(0))).isEqualTo(ClusterNodeTest.incarnation(events.get(1)))
                    .isNotEqualTo(ClusterNodeTest.incarnation(events.get(3)));
            for (RecordingSink s : cluster.sinks) {
                assertThat(s.events(t)).isEqualTo(events);
            }
        }
    }

    /** The entries of {@code byPath} whose path starts with {@code prefix}: this test's topics on the shared cluster. */
    private static <V> Map<String, V> under(Map<String, V> byPath, String prefix) {
        Map<String, V> mine = new TreeMap<>();
        byPath.forEach((path, v) -> {
            if (path.startsWith(prefix)) {
                mine.put(path, v);
            }
        });
        return mine;
    }

    private static int count(RecordingSink sink, String prefix) {
        return under(sink.sequences(), prefix).values().stream().mapToInt(List::size).sum();
    }
}
