package io.ringcast.cluster;

import io.ringcast.cluster.internal.BarrierLog;
import io.ringcast.cluster.internal.LoggedPublish;
import io.ringcast.cluster.internal.PublishBatcher;
import io.ringcast.cluster.internal.PublishResult;
import io.ringcast.cluster.internal.RaftGroup;
import io.ringcast.cluster.internal.RaftSettings;
import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLog;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One node's part in the cluster: a Raft group (jgroups-raft, {@link RaftGroup}) whose log carries
 * every publish, batched into entries ({@link PublishBatcher}), and whose state machine
 * ({@link TopicLog}) gives each committed publish its topic sequence, alike on every node, and
 * hands it to the node's {@link UpdateSink} (docs/clustering.md). One group for now; a topic's group
 * is a pure function of its path ({@link #groupOf}), so several can come without moving a topic.
 *
 * <p>A publish is answered only once this node has applied its entry itself: {@link PublishOutcome#ACKED}
 * comes after the {@link UpdateSink} got the update (and every update before it in the log), also on
 * a follower, which learns that an entry is committed after the leader answered it.
 *
 * <p>Thread contract: {@link #publish}, {@link #hasRoom}, {@link #status} may be called from any
 * thread and never block. The {@link UpdateSink} and the {@link SnapshotContent} are called on the
 * engine's runner thread; publish callbacks on the group's answer thread
 * ({@code ringcast-cluster-answers-g0}), which a callback may hold (waiting for room in a ring, say:
 * the node's later answers wait meanwhile, and its publishes once its entries in flight are all
 * unanswered), or, for a refusal at once, on the caller's thread.
 */
public final class ClusterNode implements AutoCloseable {

    /** Told once how a publish ended (see the class comment for the thread). */
    @FunctionalInterface
    public interface PublishCallback {
        /**
         * @param topicSequence the sequence the topic gave the update, when {@code ACKED}, else 0
         * @param firstPath     for {@code CONFLICT}, the topic the correlation id was first used for, else null
         */
        void completed(PublishOutcome outcome, long topicSequence, String firstPath);
    }

    /**
     * Entries unanswered at once per group: enough to keep the leader's disk and links busy. An
     * entry committed but not applied by this node yet is unanswered: the bound also holds a node
     * that lags in applying to that many entries ahead of its log.
     */
    static final int ENTRIES_IN_FLIGHT = 16;
    /** Publishes per entry at most. */
    static final int PUBLISHES_PER_ENTRY = 256;
    /** Publishes waiting for an entry at most, per group. */
    static final int QUEUE_CAPACITY = 8192;
    /**
     * Queue slots {@link #hasRoom} keeps free: an event loop checks, then publishes one message, so
     * each of the node's event loops (far fewer than this) takes at most one slot between the two.
     */
    static final int ROOM_RESERVE = 64;

    private final ClusterSettings settings;
    private final RaftGroup group;
    private final PublishBatcher batcher;
    private final LeaderWatch watch;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param replication how this node keeps and replicates the log
     * @param sink        where every committed publish goes, in log order, on the engine's runner thread
     * @param content     the node's own part of a snapshot ({@link SnapshotContent#NONE} for none)
     */
    public ClusterNode(ClusterSettings settings, ReplicationSettings replication, UpdateSink sink,
                       SnapshotContent content) {
        this(settings, RaftSettings.of(replication.dataDir(), replication.commitFsync(), replication.failureDetectionMs(),
                replication.voteTimeoutMs(), replication.replicationTimeoutMs(), replication.snapshotLogBytes()),
                sink, content);
    }

    /** With every engine setting given (the tests' shorter timeouts). */
    ClusterNode(ClusterSettings settings, RaftSettings raft, UpdateSink sink, SnapshotContent content) {
        this.settings = settings;
        String name = groupName(0);
        this.batcher = new PublishBatcher(this::submit, PUBLISHES_PER_ENTRY, ENTRIES_IN_FLIGHT, QUEUE_CAPACITY, name,
                raft.submitTimeoutMs());
        // each entry's ordinal, once applied here, lets the batcher answer the publishes of that entry
        TopicLog log = new TopicLog(sink, content, settings.maxTopics(), settings.maxPublishers(), batcher::applied);
        RaftGroup[] self = new RaftGroup[1];
        this.group = new RaftGroup(settings, raft, name, new BarrierLog(log, () -> self[0].raft(),
                raft.maxLogSizeBytes()));
        self[0] = group;
        this.watch = new LeaderWatch(group, raft.failureDetectionTimeoutMs());
    }

    ClusterNode(ClusterSettings settings, RaftSettings raft, UpdateSink sink) {
        this(settings, raft, sink, SnapshotContent.NONE);
    }

    /** The group a topic belongs to, of {@code groups}: a pure function of its path, the same on every node. */
    public static int groupOf(String path, int groups) {
        return Math.floorMod(path.hashCode(), groups);
    }

    static String groupName(int group) {
        return "g" + group;
    }

    /**
     * Loads this node's snapshot and log from {@code dataDir} (applying them to the sink) and joins
     * the group. Returns once connected; see {@link #ready()}.
     */
    public void start() throws Exception {
        group.start();
        batcher.start();
        watch.start();
    }

    /**
     * Completes once a leader is known and this node has applied every entry committed before it
     * asked (a barrier entry through the leader): only then should it serve clients.
     */
    public CompletableFuture<Void> ready() {
        return watch.ready();
    }

    /**
     * Whether {@link #publish} will find room now. An event loop asks before it takes a publish off
     * its connection, and pauses reading when not, as on a full inbound ring. Any thread.
     */
    public boolean hasRoom() {
        return batcher.remaining() > ROOM_RESERVE;
    }

    /**
     * Submits a publish to its topic's group (the leader sequences it, on whichever node). Any thread.
     *
     * @param principal     the session's login identity: with {@code publisherId}, the key of the
     *                      replicated duplicate ledger
     * @param publisherId   the client's publisher id, 0 when it gave none; with it, a publish the
     *                      client sends again with the same {@code correlationId}, through any node,
     *                      is applied once and answered with the sequence it got
     * @param session       a number naming the publishing session, unique in the cluster (random),
     *                      0 for none; with a publisher id, the log applies the session's publishes
     *                      only in the order of {@code sessionSequence}: one whose predecessor never
     *                      reached the log is answered {@link PublishOutcome#OUT_OF_ORDER}
     * @param sessionSequence 1 for the session's first publish handed here, then one more each
     * @param republish     whether it came as {@code REPUBLISH}
     * @param value         taken over by the cluster layer: the caller must not change it
     * @param callback      told once, unless this returns false
     * @return false when the group's queue is full: nothing was submitted and the callback is not
     *         called; offer it again later
     */
    public boolean publish(String principal, long publisherId, long session, long sessionSequence, int correlationId,
                           boolean republish, String path, byte[] value, PublishCallback callback) {
        if (group.leader() == null || watch.leaderUnreachable()) {
            callback.completed(PublishOutcome.NO_MAJORITY, 0, null);
            return true;
        }
        LoggedPublish p = new LoggedPublish(principal, publisherId, session, sessionSequence, correlationId, republish,
                path, value);
        return batcher.offer(p, (result, failure) -> answer(result, failure, callback));
    }

    private static void answer(PublishResult result, Throwable failure, PublishCallback callback) {
        if (result == null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            callback.completed(cause instanceof NotSubmitted ? PublishOutcome.NO_MAJORITY : PublishOutcome.TIMED_OUT,
                    0, null);
            return;
        }
        switch (result.outcome()) {
            case APPLIED, ALREADY_APPLIED -> callback.completed(PublishOutcome.ACKED, result.sequence(), null);
            case CONFLICT -> callback.completed(PublishOutcome.CONFLICT, 0, result.firstPath());
            case OUTCOME_UNKNOWN -> callback.completed(PublishOutcome.OUTCOME_UNKNOWN, 0, null);
            case TOO_MANY_TOPICS -> callback.completed(PublishOutcome.TOO_MANY_TOPICS, 0, null);
            case OUT_OF_ORDER -> callback.completed(PublishOutcome.OUT_OF_ORDER, 0, null);
            default -> throw new IllegalStateException("unknown outcome " + result.outcome());
        }
    }

    /**
     * Hands an entry to the group. One refused before it reached any log (no leader known, or the
     * engine threw at once) fails with {@link NotSubmitted}: its publishes were certainly not applied.
     * Batcher thread.
     */
    private CompletableFuture<byte[]> submit(byte[] entry, boolean resendable) {
        if (group.leader() == null) {
            return CompletableFuture.failedFuture(new NotSubmitted("no leader known to " + settings.nodeName()));
        }
        CompletableFuture<byte[]> f = group.submit(entry, resendable);
        if (f.isCompletedExceptionally()) { // the engine refused it in the call itself
            return f.handle((bytes, e) -> {
                throw new NotSubmitted(String.valueOf(e));
            });
        }
        return f;
    }

    /** An entry the engine refused before it was logged anywhere. */
    private static final class NotSubmitted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotSubmitted(String why) {
            super(why, null, false, false);
        }
    }

    /** This node's view of the cluster now. Any thread, without waiting. */
    public ClusterStatus status() {
        String leader = group.leader();
        List<String> members = settings.members().stream().map(ClusterSettings.Member::name).toList();
        return new ClusterStatus(settings.nodeName(), leader, group.term(), leader != null, watch.isReady(),
                members, group.view(), group.commitIndex(), group.lastAppended(), batcher.queued(), group.snapshots());
    }

    /** This node's configuration. */
    public ClusterSettings settings() {
        return settings;
    }

    /** Stops taking publishes and leaves the group (peers see this node gone at once). Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        watch.close();
        batcher.close();
        group.close();
    }
}
