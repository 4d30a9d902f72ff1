package io.ringcast.it.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.UpdateListener;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Topics' values travel in the cluster's Raft snapshots (their history does not: a snapshot's size
 * follows the topics, not {@code history.length}), proven with three real node
 * processes whose log is snapshotted from 64 KiB on ({@code cluster.snapshotLogBytes}; then once
 * it holds twice the last snapshot). Some topics are published only at first, then others often enough for several snapshots, so that the first
 * ones' values are in no log any more, only in snapshots: a node whose data directory is gone gets
 * them from the leader's snapshot, and a node restarted with its own truncated log from its own.
 * A client resuming on the restored node is replayed what it missed from the log applied after the
 * snapshot, or told of the gap with the newest value; never left with a silent one. Every delivered value is checked against what was acked with its sequence.
 */
// a backstop for a step that hangs: each step's own await names what it waited for
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterSnapshotTest {
    private static final int NODES = 3;
    private static final int HISTORY = 16;
    private static final String NODE_CONFIG = "history:\n  length: " + HISTORY + "\n";
    private static final String CLUSTER_KEYS = "  snapshotLogBytes: 65536\n  commitFsync: false\n";
    private static final int VALUE_BYTES = 1024;
    /** Published in the first rounds only: afterwards their values are in snapshots, no longer in any log. */
    private static final List<String> COLD = topics(0, 20);
    /** Published again while a node is down, fewer times than the history holds. */
    private static final List<String> WITHIN_HISTORY = topics(20, 30);
    /** Published again while a node is down, more times than the history holds. */
    private static final List<String> PAST_HISTORY = topics(30, 40);
    private static final List<String> ALL = Stream.of(COLD, WITHIN_HISTORY, PAST_HISTORY).flatMap(List::stream).toList();
    private static final Duration STEP = Duration.ofSeconds(90);
    /** What a node logs once its sequencer has taken over a snapshot's topics. */
    private static final String TAKEN_OVER = "cluster snapshot taken over";

    /** Every acked publish: topic, sequence, value. */
    private final Map<String, ConcurrentSkipListMap<Long, String>> acked = new ConcurrentHashMap<>();
    private final List<RingcastClient> clients = new ArrayList<>();
    private int published;
    private EventLoopGroup clientLoops;
    private ClusterProcesses cluster;
    private RingcastClient publisher;

    @AfterEach
    void stop() {
        clients.forEach(RingcastClient::close);
        if (clientLoops != null) {
            clientLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeWhoseDataIsGoneGetsEveryTopicFromTheLeadersSnapshotAndAResumeThereMissesNothingSilently(TestInfo info)
            throws Exception {
        int leader = start(info);
        int victim = leader % NODES + 1;
        publishRounds(ALL, 3);
        // the victim current first: lagging, it could take the three rounds over from a snapshot after
        // the client subscribed, which tells the client of a gap (sequences 1 and 2 never reached it)
        cluster.awaitApplied(victim, cluster.highestCommitIndex(), STEP);
        Deliveries resumed = subscribe("resumed@node-" + victim, victim); // its only address: it resumes there
        awaitNewest(resumed, "the resuming client before node-" + victim + " stops");

        cluster.stop(victim);
        cluster.wipeDataDir(victim);
        publishRounds(WITHIN_HISTORY, HISTORY - 6);
        publishRounds(PAST_HISTORY, 4 * HISTORY);
        publishUntilSnapshots(leader, 3);
        Map<String, Long> newestBeforeRestart = newest();

        int takenOverBefore = cluster.logOccurrences(victim, TAKEN_OVER); // under load, a lagging follower takes them too
        cluster.restart(victim);
        cluster.awaitView(victim, NODES, STEP);
        cluster.awaitLog(victim, TAKEN_OVER, takenOverBefore, STEP); // its data directory is empty: the leader's snapshot
        assertNewSubscriberGetsEveryNewestValue(victim);

        awaitNewest(resumed, "the client resumed on node-" + victim);
        assertThat(resumed.silentGaps(acked)).as("gaps not flagged, values not acked, duplicates").isEmpty();
        for (String topic : WITHIN_HISTORY) {
            // replayed if the log after the snapshot holds them, else after a gap: never silently missed
            assertThat(resumed.sequencesOf(topic, UpdateKind.SNAPSHOT_AFTER_GAP))
                    .as("%s, missed within the history: replayed, or the newest value after a gap", topic)
                    .isSubsetOf(newestBeforeRestart.get(topic));
        }
        for (String topic : PAST_HISTORY) {
            assertThat(resumed.sequencesOf(topic, UpdateKind.SNAPSHOT_AFTER_GAP))
                    .as("%s, missed past the history: the newest value after a gap", topic)
                    .containsExactly(newestBeforeRestart.get(topic));
        }

        publishRounds(ALL, 1);
        for (int node = 1; node <= NODES; node++) {
            assertNewSubscriberGetsEveryNewestValue(node);
        }
        awaitNewest(resumed, "the resumed client, live again");
        assertThat(resumed.silentGaps(acked)).isEmpty();
    }

    @Test
    void aNodeRestartedWithItsTruncatedLogHasTheValuesItsOwnSnapshotHolds(TestInfo info) throws Exception {
        int leader = start(info);
        int follower = leader % NODES + 1;
        publishRounds(ALL, 3);
        publishRounds(PAST_HISTORY, 4 * HISTORY);
        // a snapshot truncates the log: the cold topics' updates are in no log of that node any more
        publishUntilSnapshots(follower, 3);

        cluster.kill9(follower);
        int takenOverBefore = cluster.logOccurrences(follower, TAKEN_OVER); // under load, a lagging follower takes them too
        cluster.restart(follower);
        cluster.awaitView(follower, NODES, STEP);
        cluster.awaitLog(follower, TAKEN_OVER, takenOverBefore, STEP); // its own, read from its data directory at start
        assertNewSubscriberGetsEveryNewestValue(follower);

        publishRounds(ALL, 1);
        for (int node = 1; node <= NODES; node++) {
            assertNewSubscriberGetsEveryNewestValue(node);
        }
    }

    // ------------------------------------------------------------------ steps

    /** Starts the cluster and the publisher, homed on the leader; returns the leader. */
    private int start(TestInfo info) throws Exception {
        cluster = ClusterProcesses.start(info.getTestMethod().orElseThrow().getName(), NODES, NODE_CONFIG,
                CLUSTER_KEYS);
        clientLoops = new NioEventLoopGroup(2, new DefaultThreadFactory("test-clients", true));
        int leader = cluster.awaitLeader(STEP);
        List<String> urls = new ArrayList<>(cluster.webSocketUrls());
        Collections.rotate(urls, -(leader - 1));
        publisher = client("publisher", urls.toArray(new String[0]));
        publisher.connect().get(30, TimeUnit.SECONDS);
        return leader;
    }

    private RingcastClient client(String name, String... urls) {
        RingcastClient c = RingcastClient.builder()
                .addresses(urls)
                .clientName(name)
                .eventLoopGroup(clientLoops)
                .reconnectDelay(Duration.ofMillis(50), Duration.ofSeconds(1))
                .build();
        clients.add(c);
        return c;
    }

    /**
     * Publishes a new value of {@value #VALUE_BYTES} bytes to each topic, round after round, each
     * round acked before the next.
     */
    private void publishRounds(List<String> topics, int rounds) throws Exception {
        for (int r = 0; r < rounds; r++) {
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            for (String topic : topics) {
                String head = topic + " #" + published++ + " ";
                String value = head + "x".repeat(VALUE_BYTES - head.length());
                acks.add(publisher.publish(topic, value.getBytes(StandardCharsets.UTF_8)).thenAccept(seq ->
                        acked.computeIfAbsent(topic, t -> new ConcurrentSkipListMap<>()).put(seq, value)));
            }
            CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Publishes rounds to the topics past the history until {@code node} has taken {@code snapshots}
     * (a node snapshots once its log holds twice its last snapshot's bytes, and a tenth more per
     * member after the first, so how many rounds that takes is not fixed).
     */
    private void publishUntilSnapshots(int node, int snapshots) throws Exception {
        long deadline = System.nanoTime() + STEP.toNanos();
        while (snapshotsTaken(node) < snapshots) {
            assertThat(System.nanoTime() - deadline).as("node-%d to take %d snapshots (it has %d)", node, snapshots,
                    snapshotsTaken(node)).isNegative();
            publishRounds(PAST_HISTORY, HISTORY);
        }
    }

    /** Each topic's newest acked sequence. */
    private Map<String, Long> newest() {
        Map<String, Long> newest = new ConcurrentHashMap<>();
        acked.forEach((topic, values) -> newest.put(topic, values.lastKey()));
        return newest;
    }

    /** A client on {@code node} alone, subscribed to every topic. */
    private Deliveries subscribe(String name, int node) throws Exception {
        Deliveries d = new Deliveries();
        RingcastClient c = client(name, cluster.webSocketUrl(node));
        c.connect().get(30, TimeUnit.SECONDS);
        c.subscribe("snap/#", d).confirmed().get(30, TimeUnit.SECONDS);
        return d;
    }

    private void awaitNewest(Deliveries d, String who) {
        Map<String, Long> newest = newest();
        Await.until(() -> newest.entrySet().stream().allMatch(e -> d.last(e.getKey()) >= e.getValue()), STEP,
                Duration.ofMillis(50), () -> who + " has every topic's newest acked update; behind: "
                        + StreamCheck.behind(newest, d::last) + "; nodes: " + cluster.describe());
    }

    /**
     * A new subscriber on {@code node} starts with every topic's newest value, at its sequence, once
     * the node has applied what was acked: an ack comes from the publisher's node, and another
     * node applies the entry when it learns the commit index, some milliseconds later.
     */
    private void assertNewSubscriberGetsEveryNewestValue(int node) throws Exception {
        cluster.awaitApplied(node, cluster.highestCommitIndex(), STEP);
        Deliveries fresh = subscribe("fresh@node-" + node, node);
        awaitNewest(fresh, "a new subscriber on node-" + node);
        Map<String, Long> newest = newest();
        for (String topic : ALL) {
            Update first = fresh.firstOf(topic);
            assertThat(first.kind()).as("node-%d: %s", node, topic).isEqualTo(UpdateKind.SNAPSHOT);
            assertThat(first.sequence()).as("node-%d: %s", node, topic).isEqualTo(newest.get(topic));
        }
        assertThat(fresh.silentGaps(acked)).as("node-%d", node).isEmpty();
    }

    private int snapshotsTaken(int node) {
        return cluster.health(node).path("cluster").path("snapshots").asInt();
    }

    private static List<String> topics(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "snap/t" + i).toList();
    }

    /** What one subscriber received, per topic, in order. Listener calls on a client event loop; reads from the test. */
    private static final class Deliveries implements UpdateListener {
        private final Map<String, List<Update>> byTopic = new ConcurrentHashMap<>();

        @Override
        public void onUpdate(Update u) {
            byTopic.computeIfAbsent(u.topic(), t -> Collections.synchronizedList(new ArrayList<>())).add(u);
        }

        private List<Update> of(String topic) {
            List<Update> got = byTopic.getOrDefault(topic, List.of());
            synchronized (got) {
                return List.copyOf(got);
            }
        }

        long last(String topic) {
            List<Update> got = of(topic);
            return got.isEmpty() ? 0 : got.get(got.size() - 1).sequence();
        }

        Update firstOf(String topic) {
            return of(topic).get(0);
        }

        List<UpdateKind> kindsOf(String topic) {
            return of(topic).stream().map(Update::kind).toList();
        }

        List<Long> sequencesOf(String topic, UpdateKind kind) {
            return of(topic).stream().filter(u -> u.kind() == kind).map(Update::sequence).toList();
        }


        /**
         * Deliveries that break the stream: after a topic's first, each must be the next sequence,
         * unless it says the client missed updates (a snapshot after a gap); and each value must be
         * the one acked with its sequence.
         */
        List<String> silentGaps(Map<String, ? extends Map<Long, String>> acked) {
            List<String> problems = new ArrayList<>();
            byTopic.keySet().forEach(topic -> {
                Long previous = null;
                for (Update u : of(topic)) {
                    Map<Long, String> values = acked.get(topic);
                    String value = values == null ? null : values.get(u.sequence());
                    if (!u.text().equals(value)) {
                        problems.add(topic + " #" + u.sequence() + " " + u.kind() + ": a value not acked with it");
                    }
                    boolean flagged = u.kind() == UpdateKind.SNAPSHOT_AFTER_GAP
                            || u.kind() == UpdateKind.GAP_WITHOUT_VALUE;
                    if (previous != null && !flagged && u.sequence() != previous + 1) {
                        problems.add(topic + ": " + u.kind() + " #" + u.sequence() + " after #" + previous);
                    }
                    previous = u.sequence();
                }
            });
            return problems;
        }
    }
}
