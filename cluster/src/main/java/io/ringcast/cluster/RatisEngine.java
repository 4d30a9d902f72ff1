package io.ringcast.cluster;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.cluster.internal.LoggedPublish;
import io.ringcast.cluster.internal.PublishBatcher;
import io.ringcast.cluster.internal.TopicLog;
import io.ringcast.log.PublisherLedgers;
import io.ringcast.cluster.internal.ratis.RatisGroups;
import io.ringcast.cluster.internal.ratis.TopicLogStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The cluster on Apache Ratis ({@code cluster.engine: ratis}): {@code cluster.groups} Raft groups
 * ({@link RatisGroups}), a topic's group a pure function of its path ({@link ClusterNode#groupOf}),
 * each group with its own {@link TopicLog}, batcher and leader, the leaders spread over the nodes
 * by leadership transfers. A publish waits only for its own group: a node's death pauses the groups it led.
 * See {@link ClusterNode} for the contract.
 *
 * <p>Each group's {@link TopicLog} applies on that group's Ratis updater thread, so the
 * {@link UpdateSink} is called on as many threads as there are groups, each in its group's log
 * order: a topic's updates, all in one group, stay in order. The {@link SnapshotContent} is asked
 * for each group's topics alone ({@link SnapshotContent#ofTopics}).
 *
 * <p>Caught up ({@link #ready}): for every group, a leader answered how many entries its log had
 * applied, and this node's log of the group applied as many. Checked on {@code ringcast-cluster-watch}.
 */
final class RatisEngine implements ClusterNode.Engine {
    private static final Logger log = LoggerFactory.getLogger(RatisEngine.class);
    private static final long CHECK_MS = 50;
    private static final long ASK_TIMEOUT_MS = 2000;
    /**
     * Entries a group's batcher has unanswered at once. Two, not jgroups-raft's 16: through a Ratis
     * client, one node's entries were answered one after another (measured: five nodes, 200
     * publishes/s, forwarded entries answered after 2.2 s at p50 with 16 in flight, 0.15 s with 2),
     * so more in flight only made smaller entries wait longer; fewer make bigger entries. On gRPC
     * (five nodes, two cores, 200/s): 8 in flight acked at p50 370 to 860 ms, 1 at 237 to 481 ms,
     * 2 at 205 to 470 ms: each entry costs a round of messages to every follower, and that CPU is
     * what publishes wait for.
     */
    static final int ENTRIES_IN_FLIGHT = 2;

    private final ClusterSettings settings;
    private final List<PublishBatcher> batchers = new ArrayList<>();
    private final List<TopicLogStateMachine> stateMachines = new ArrayList<>();
    private final RatisGroups groups;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    /** Writes every group's snapshots, one after another, off the groups' apply threads. */
    private final ExecutorService snapshotWriter =
            Executors.newSingleThreadExecutor(new DefaultThreadFactory("ringcast-cluster-snapshots", true));
    private final ScheduledExecutorService watch =
            Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("ringcast-cluster-watch", true));
    /** Per group: the leader's count of applied entries to reach, -1 until asked, -2 while asking. Watch thread. */
    private final long[] targets;
    private final String[] loggedLeaders;
    /** Per group, when this node last saw it without a leader, 0 while it has one; any thread (a race only moves it a little). */
    private final long[] leaderlessSinceNs;
    private final long failureDetectionMs;

    RatisEngine(ClusterSettings settings, ReplicationSettings replication, UpdateSink sink, SnapshotContent content) {
        this.settings = settings;
        int n = replication.groups();
        for (int g = 0; g < n; g++) {
            int group = g;
            String name = ClusterNode.groupName(g);
            PublishBatcher batcher = new PublishBatcher((entry, resendable) -> submit(group, entry),
                    ClusterNode.PUBLISHES_PER_ENTRY, ENTRIES_IN_FLIGHT, ClusterNode.QUEUE_CAPACITY, name,
                    replication.replicationTimeoutMs());
            SnapshotContent groupContent = n == 1 ? content
                    : content.ofTopics(path -> ClusterNode.groupOf(path, n) == group);
            TopicLog topicLog = new TopicLog(sink, groupContent, settings.maxTopics(),
                    new PublisherLedgers(settings.maxPublishers(), settings.maxPublishersPerPrincipal()),
                    batcher::applied);
            batchers.add(batcher);
            stateMachines.add(new TopicLogStateMachine(topicLog, name, snapshotWriter));
        }
        this.groups = new RatisGroups(settings, replication, stateMachines);
        this.targets = new long[n];
        this.loggedLeaders = new String[n];
        this.leaderlessSinceNs = new long[n];
        this.failureDetectionMs = replication.failureDetectionMs();
        Arrays.fill(targets, -1);
    }

    @Override
    public void start() throws Exception {
        groups.start();
        batchers.forEach(PublishBatcher::start);
        watch.scheduleWithFixedDelay(this::check, 0, CHECK_MS, TimeUnit.MILLISECONDS);
    }

    /** Watch thread: logs leader changes, and completes {@link #ready} once every group is caught up. */
    private void check() {
        try {
            boolean all = true;
            for (int g = 0; g < targets.length; g++) {
                String leader = groups.leader(g);
                leaderless(g); // keeps the time without a leader current between publishes
                if (!String.valueOf(leader).equals(loggedLeaders[g])) {
                    loggedLeaders[g] = String.valueOf(leader);
                    log.info("cluster {}: leader {} (term {})", ClusterNode.groupName(g),
                            leader == null ? "unknown" : leader, groups.term(g));
                }
                if (ready.isDone()) {
                    continue;
                }
                long t = targets[g];
                if (t >= 0 && stateMachines.get(g).applied() >= t) {
                    continue;
                }
                all = false;
                if (t == -1 && leader != null) {
                    int group = g;
                    targets[g] = -2;
                    // bounded: a read lost in the engine's client (seen: never answered) is asked again
                    CompletableFuture<Long> asked;
                    try {
                        asked = groups.leaderApplied(g);
                    } catch (RuntimeException e) { // the engine refused in the call: asked again at the next check
                        asked = CompletableFuture.failedFuture(e);
                    }
                    asked.orTimeout(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS).whenComplete((applied, e) -> {
                        if (e != null) {
                            log.info("cluster {}: asking the leader how far its log applied: {}; asking again",
                                    ClusterNode.groupName(group), e.toString());
                        }
                        if (!watch.isShutdown()) {
                            watch.execute(() -> targets[group] = e == null ? applied : -1);
                        }
                    });
                }
            }
            if (all && !ready.isDone()) {
                ready.complete(null);
            }
            groups.placeLeaders();
        } catch (RuntimeException e) {
            log.warn("cluster: checking the groups failed", e);
        }
    }

    /** Batcher thread: with no leader known yet, the group's client looks for one (an election, a transfer). */
    private CompletableFuture<byte[]> submit(int g, byte[] entry) {
        return ClusterNode.submitted(groups.submit(g, entry));
    }

    /**
     * Whether group {@code g} has had no leader this node knows of for longer than an election
     * takes ({@code failureDetectionMs}): this node is cut off from the majority, or the majority
     * is gone. A shorter gap (an election, a leadership transfer) is waited out: its publishes queue.
     */
    private boolean leaderless(int g) {
        if (groups.leader(g) != null) {
            leaderlessSinceNs[g] = 0;
            return false;
        }
        long now = System.nanoTime();
        long since = leaderlessSinceNs[g];
        if (since == 0) {
            leaderlessSinceNs[g] = now;
            return false;
        }
        return now - since > TimeUnit.MILLISECONDS.toNanos(failureDetectionMs);
    }

    @Override
    public CompletableFuture<Void> ready() {
        return ready;
    }

    @Override
    public boolean hasRoom() {
        for (PublishBatcher b : batchers) {
            if (b.remaining() <= ClusterNode.ROOM_RESERVE) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean publish(LoggedPublish p, ClusterNode.PublishCallback callback) {
        int g = ClusterNode.groupOf(p.path(), batchers.size());
        if (refusedForNoLeader(g, callback)) {
            return true;
        }
        return batchers.get(g).offer(p, (result, failure) -> ClusterNode.answer(result, failure, callback));
    }

    @Override
    public boolean remove(String path, long ifLastSequence, ClusterNode.PublishCallback callback) {
        int g = ClusterNode.groupOf(path, batchers.size());
        if (refusedForNoLeader(g, callback)) {
            return true;
        }
        return batchers.get(g).offerRemoval(path, ifLastSequence, (result, failure) -> ClusterNode.answer(result,
                failure, callback));
    }

    /** Answers {@code NO_MAJORITY} at once when group {@code g} is {@link #leaderless}. */
    private boolean refusedForNoLeader(int g, ClusterNode.PublishCallback callback) {
        if (leaderless(g)) {
            callback.completed(PublishOutcome.NO_MAJORITY, 0, null);
            return true;
        }
        return false;
    }

    @Override
    public boolean leads(int g) {
        return groups.isLeader(g);
    }

    @Override
    public ClusterStatus status() {
        List<ClusterStatus.Group> list = new ArrayList<>();
        boolean majority = true;
        int queued = 0;
        int snapshots = 0;
        for (int g = 0; g < batchers.size(); g++) {
            String leader = groups.leader(g);
            majority &= leader != null;
            int q = batchers.get(g).queued();
            int s = stateMachines.get(g).snapshots();
            queued += q;
            snapshots += s;
            list.add(new ClusterStatus.Group(ClusterNode.groupName(g), leader, groups.term(g), groups.commitIndex(g),
                    groups.appliedIndex(g), groups.lastAppended(g), q, s));
        }
        List<String> members = settings.members().stream().map(ClusterSettings.Member::name).toList();
        // no views on Ratis: the members heard from lately, in the members' order
        Set<String> heard = groups.heardWithin(failureDetectionMs);
        List<String> view = members.stream().filter(heard::contains).toList();
        ClusterStatus.Group first = list.get(0);
        return new ClusterStatus(settings.nodeName(), first.leader(), first.term(), majority,
                ready.isDone() && !ready.isCompletedExceptionally(), members, view,
                first.commitIndex(), first.lastAppended(), queued, snapshots, "ratis", list);
    }

    @Override
    public int groups() {
        return batchers.size();
    }

    @Override
    public void close() {
        watch.shutdownNow();
        ready.completeExceptionally(new IllegalStateException("the cluster layer stopped before it caught up"));
        batchers.forEach(PublishBatcher::close);
        groups.close();
        snapshotWriter.shutdownNow(); // a write waiting for a stopped sequencer is interrupted
    }
}
