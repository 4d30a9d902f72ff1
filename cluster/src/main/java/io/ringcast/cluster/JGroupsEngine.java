package io.ringcast.cluster;

import io.ringcast.cluster.internal.LoggedPublish;
import io.ringcast.cluster.internal.PublishBatcher;
import io.ringcast.cluster.internal.TopicLog;
import io.ringcast.log.PublisherLedgers;
import io.ringcast.cluster.internal.jgroups.BarrierLog;
import io.ringcast.cluster.internal.jgroups.RaftGroup;
import io.ringcast.cluster.internal.jgroups.RaftSettings;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The cluster on jgroups-raft ({@code cluster.engine: jgroups}): one Raft group ({@link RaftGroup})
 * whose leader sequences every topic, with the workarounds of docs/upstream/jgroups-raft.md.
 * See {@link ClusterNode} for the contract.
 */
final class JGroupsEngine implements ClusterNode.Engine {
    private final ClusterSettings settings;
    private final RaftGroup group;
    private final BarrierLog stateMachine;
    private final PublishBatcher batcher;
    private final LeaderWatch watch;

    JGroupsEngine(ClusterSettings settings, RaftSettings raft, UpdateSink sink, SnapshotContent content) {
        this.settings = settings;
        String name = ClusterNode.groupName(0);
        this.batcher = new PublishBatcher(this::submit, ClusterNode.PUBLISHES_PER_ENTRY, ClusterNode.ENTRIES_IN_FLIGHT,
                ClusterNode.QUEUE_CAPACITY, name, raft.submitTimeoutMs());
        // each entry's ordinal, once applied here, lets the batcher answer the publishes of that entry
        TopicLog log = new TopicLog(sink, content, settings.maxTopics(),
                new PublisherLedgers(settings.maxPublishers(), settings.maxPublishersPerPrincipal()), batcher::applied);
        RaftGroup[] self = new RaftGroup[1];
        this.stateMachine = new BarrierLog(log, () -> self[0].raft(), raft.maxLogSizeBytes());
        this.group = new RaftGroup(settings, raft, name, stateMachine);
        self[0] = group;
        this.watch = new LeaderWatch(group, raft.failureDetectionTimeoutMs());
    }

    @Override
    public void start() throws Exception {
        group.start();
        batcher.start();
        watch.start();
    }

    @Override
    public CompletableFuture<Void> ready() {
        return watch.ready();
    }

    @Override
    public boolean hasRoom() {
        return batcher.remaining() > ClusterNode.ROOM_RESERVE;
    }

    @Override
    public boolean publish(LoggedPublish p, ClusterNode.PublishCallback callback) {
        if (refusedForNoLeader(callback)) {
            return true;
        }
        return batcher.offer(p, (result, failure) -> ClusterNode.answer(result, failure, callback));
    }

    @Override
    public boolean remove(String path, long ifLastSequence, ClusterNode.PublishCallback callback) {
        if (refusedForNoLeader(callback)) {
            return true;
        }
        return batcher.offerRemoval(path, ifLastSequence, (result, failure) -> ClusterNode.answer(result, failure,
                callback));
    }

    /** Answers {@code NO_MAJORITY} at once when no leader this node can reach is known. */
    private boolean refusedForNoLeader(ClusterNode.PublishCallback callback) {
        if (noReachableLeader() != null) {
            callback.completed(PublishOutcome.NO_MAJORITY, 0, null);
            return true;
        }
        return false;
    }

    /** Why this node has no leader to send to now, or null when it has one. Any thread. */
    private String noReachableLeader() {
        String leader = group.leader();
        if (leader == null) {
            return "no leader known to " + settings.nodeName();
        }
        return watch.leaderUnreachable() ? "the leader " + leader + " does not answer " + settings.nodeName() : null;
    }

    @Override
    public boolean leads(int g) {
        return g == 0 && group.isLeader();
    }

    /** Hands an entry to the group ({@link ClusterNode#submitted}). Batcher thread. */
    private CompletableFuture<byte[]> submit(byte[] entry, boolean resendable) {
        // also what was queued in the batcher when the leader stopped answering: sent to it, it would
        // wait the whole replicationTimeoutMs and hold its publishers' later publishes as long (a
        // one-way cut: 5 s); refused, the client sends it through another node at once
        String refusal = noReachableLeader();
        if (refusal != null) {
            return CompletableFuture.failedFuture(new ClusterNode.NotSubmitted(refusal));
        }
        return ClusterNode.submitted(group.submit(entry, resendable));
    }

    @Override
    public ClusterStatus status() {
        String leader = group.leader();
        List<String> members = settings.members().stream().map(ClusterSettings.Member::name).toList();
        ClusterStatus.Group g = new ClusterStatus.Group(group.group(), leader, group.term(), group.commitIndex(),
                group.commitIndex(), group.lastAppended(), batcher.queued(), group.snapshots(),
                stateMachine.lastSnapshot(), group.followers());
        return new ClusterStatus(settings.nodeName(), leader, group.term(), leader != null, watch.isReady(),
                members, group.view(), group.commitIndex(), group.lastAppended(), batcher.queued(), group.snapshots(),
                "jgroups", List.of(g));
    }

    @Override
    public int groups() {
        return 1;
    }

    @Override
    public void close() {
        watch.close();
        batcher.close();
        group.close();
    }

    /** The group, for tests that reach into it. */
    RaftGroup group() {
        return group;
    }
}
