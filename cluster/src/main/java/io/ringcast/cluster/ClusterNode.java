package io.ringcast.cluster;

import io.ringcast.cluster.internal.ClusterKey;
import io.ringcast.cluster.internal.LoggedPublish;
import io.ringcast.log.PublishResult;
import io.ringcast.cluster.internal.jgroups.RaftSettings;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One node's part in the cluster: Raft groups whose logs carry every publish, batched into entries
 * ({@code PublishBatcher}), and whose state machines ({@code TopicLog}) give each committed publish
 * its topic sequence, alike on every node, and hand it to the node's {@link UpdateSink}
 * (docs/clustering.md). A topic's group is a pure function of its path ({@link #groupOf}). On the
 * engine {@code ratis} there are {@code cluster.groups} groups, their leaders spread over the nodes
 * ({@link RatisEngine}); on {@code jgroups}, one ({@link JGroupsEngine}).
 *
 * <p>A publish is answered only once this node has applied its entry itself: {@link PublishOutcome#ACKED}
 * comes after the {@link UpdateSink} got the update (and every update before it in the log), also on
 * a follower, which learns that an entry is committed after the leader answered it.
 *
 * <p>A topic is removed through its group's log as well ({@link #remove}): every node removes it at
 * the same place among the topic's updates ({@link UpdateSink#removed}), and the next publish to the
 * path makes a new topic, from sequence 1, with another incarnation.
 *
 * <p>Thread contract: {@link #publish}, {@link #remove}, {@link #hasRoom}, {@link #leadsGroupOf},
 * {@link #status} may be called from any thread and never block. The {@link UpdateSink} and the
 * {@link SnapshotContent} are called on the engine's runner thread; publish (and removal) callbacks
 * on the group's answer thread ({@code ringcast-cluster-answers-g0}), which a callback may hold
 * (waiting for room in a ring, say: the node's later answers wait meanwhile, and its publishes once
 * its entries in flight are all unanswered), or, for a refusal at once, on the caller's thread.
 */
public final class ClusterNode implements AutoCloseable {

    /** Told once how a publish (or a removal) ended (see the class comment for the thread). */
    @FunctionalInterface
    public interface PublishCallback {
        /**
         * @param topicSequence the sequence the topic gave the update, when {@code ACKED}, else 0; for
         *                      a removal {@code ACKED}, the removed topic's last sequence, or 0 when
         *                      nothing was removed
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

    /** What a node's engine does: the jgroups-raft one group or the Ratis groups. */
    interface Engine {
        void start() throws Exception;

        CompletableFuture<Void> ready();

        boolean hasRoom();

        /** {@link ClusterNode#publish}: false when the topic's group's queue is full. */
        boolean publish(LoggedPublish publish, PublishCallback callback);

        /** {@link ClusterNode#remove}: false when the topic's group's queue is full. */
        boolean remove(String path, long ifLastSequence, PublishCallback callback);

        /** Whether this node is group {@code group}'s leader now, as its engine sees it. Any thread, at once. */
        boolean leads(int group);

        ClusterStatus status();

        /** The number of Raft groups the topics are spread over. */
        int groups();

        void close();
    }

    private final ClusterSettings settings;
    private final Engine engine;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param replication how this node keeps and replicates the log, and on which engine
     * @param sink        where every committed publish and removal goes, in log order, on the engine's
     *                    apply thread (one per group under Ratis)
     * @param content     the node's own part of a snapshot ({@link SnapshotContent#NONE} for none)
     * @throws IOException              when {@link ReplicationSettings#secretFile} cannot be read
     * @throws IllegalArgumentException when it holds too little secret, or the engine cannot use one
     */
    public ClusterNode(ClusterSettings settings, ReplicationSettings replication, UpdateSink sink,
                       SnapshotContent content) throws IOException {
        this.settings = settings;
        if (replication.secretFile() != null && replication.engine() != ReplicationSettings.Engine.JGROUPS) {
            throw new IllegalArgumentException("cluster.secretFile: encryption between nodes is built for the "
                    + "jgroups engine only so far, not " + replication.engine());
        }
        long snapshotLogBytes = replication.snapshotLogBytesOf(settings.members().indexOf(settings.self()));
        this.engine = switch (replication.engine()) {
            case JGROUPS -> new JGroupsEngine(settings, RaftSettings.of(replication.dataDir(), replication.commitFsync(),
                    replication.failureDetectionMs(), replication.voteTimeoutMs(), replication.replicationTimeoutMs(),
                    snapshotLogBytes).withClusterKey(replication.secretFile() == null ? null
                    : ClusterKey.fromFile(replication.secretFile())), sink, content);
            case RATIS -> new RatisEngine(settings, replication, sink, content);
        };
    }

    /** On jgroups-raft with every engine setting given (the tests' shorter timeouts). */
    ClusterNode(ClusterSettings settings, RaftSettings raft, UpdateSink sink, SnapshotContent content) {
        this.settings = settings;
        this.engine = new JGroupsEngine(settings, raft, sink, content);
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
        engine.start();
    }

    /**
     * Completes once a leader is known and this node has applied every entry committed before it
     * asked (a barrier entry through the leader): only then should it serve clients.
     */
    public CompletableFuture<Void> ready() {
        return engine.ready();
    }

    /**
     * Whether {@link #publish} will find room now. An event loop asks before it takes a publish off
     * its connection, and pauses reading when not, as on a full inbound ring. Any thread.
     */
    public boolean hasRoom() {
        return engine.hasRoom();
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
     * @param sessionSequence 1 for the session's first publish to this topic's group handed here,
     *                      then one more each: each group's log keeps the order of the session's
     *                      publishes it gets, and no order across groups
     * @param republish     whether it came as {@code REPUBLISH}
     * @param value         taken over by the cluster layer: the caller must not change it
     * @param existingTopicOnly this node refuses new topics now (its heap past its mark): every node
     *                      applies it only if its topic exists, and answers {@link PublishOutcome#TOO_MANY_TOPICS}
     *                      otherwise, the same decision everywhere
     * @param callback      told once, unless this returns false
     * @return false when the group's queue is full: nothing was submitted and the callback is not
     *         called; offer it again later
     */
    public boolean publish(String principal, long publisherId, long session, long sessionSequence, int correlationId,
                           boolean republish, String path, byte[] value, boolean existingTopicOnly,
                           PublishCallback callback) {
        LoggedPublish p = new LoggedPublish(principal, publisherId, session, sessionSequence, correlationId, republish,
                path, value, existingTopicOnly);
        return engine.publish(p, callback);
    }

    /** {@link #publish(String, long, long, long, int, boolean, String, byte[], boolean, PublishCallback)} of a publish that may create its topic. */
    public boolean publish(String principal, long publisherId, long session, long sessionSequence, int correlationId,
                           boolean republish, String path, byte[] value, PublishCallback callback) {
        return publish(principal, publisherId, session, sessionSequence, correlationId, republish, path, value, false,
                callback);
    }

    /**
     * Submits the removal of the topic at {@code path} to its group, in turn with the publishes this
     * node submits (as a publish, the leader orders it, on whichever node). Once applied, every node
     * has removed the topic ({@link UpdateSink#removed}), if it still existed then and, with
     * {@code ifLastSequence}, its last sequence was that one; the next publish to the path makes a
     * new topic, from sequence 1, with another incarnation. Any thread.
     *
     * <p>The callback is told {@link PublishOutcome#ACKED} once this node has applied the removal
     * (its sink has been told), with the removed topic's last sequence, or 0 when nothing was
     * removed (no such topic, or its last sequence was not {@code ifLastSequence}); or
     * {@link PublishOutcome#NO_MAJORITY} (not submitted) or {@link PublishOutcome#TIMED_OUT} (it may
     * or may not have been applied), as a publish. An engine never sends an entry that holds a
     * removal again after a leader change (it is not recognised if applied twice): it times out
     * instead.
     *
     * @param path           the topic, exactly (not a selector)
     * @param ifLastSequence remove it only if its last sequence is still this one, so that a publish
     *                       that reached the log first keeps it (an expiry decided on what this node
     *                       saw); 0 to remove it whatever its last sequence (a client's {@code REMOVE})
     * @param callback       told once, unless this returns false
     * @return false when the group's queue is full: nothing was submitted and the callback is not
     *         called; offer it again later
     * @throws IllegalArgumentException for an empty path or a negative {@code ifLastSequence}
     */
    public boolean remove(String path, long ifLastSequence, PublishCallback callback) {
        if (path.isEmpty() || ifLastSequence < 0) {
            throw new IllegalArgumentException("removal of '" + path + "' if its last sequence is " + ifLastSequence
                    + ": a path, and a sequence of 0 or more");
        }
        return engine.remove(path, ifLastSequence, callback);
    }

    /**
     * Whether this node is now the leader of the group of {@code path}'s topic, as its engine sees it
     * (a leader that was cut off may still think so for a moment; a removal it decides on a
     * condition, {@link #remove}'s {@code ifLastSequence}, is safe all the same). For decisions one
     * node takes for the group, such as expiry. Any thread; cheap, never blocks.
     */
    public boolean leadsGroupOf(String path) {
        return engine.leads(groupOf(path, engine.groups()));
    }

    /** Tells the callback how a publish's (or a removal's) entry ended. */
    static void answer(PublishResult result, Throwable failure, PublishCallback callback) {
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
     * An engine's future of a submitted entry, with a refusal in the call itself (no leader known,
     * the engine threw at once) turned into {@link NotSubmitted}: its publishes were certainly not applied.
     */
    static CompletableFuture<byte[]> submitted(CompletableFuture<byte[]> f) {
        if (f.isCompletedExceptionally()) { // the engine refused it in the call itself
            return f.handle((bytes, e) -> {
                throw new NotSubmitted(String.valueOf(e));
            });
        }
        return f;
    }

    /** An entry the engine refused before it was logged anywhere. */
    static final class NotSubmitted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotSubmitted(String why) {
            super(why, null, false, false);
        }
    }

    /** This node's view of the cluster now. Any thread, without waiting. */
    public ClusterStatus status() {
        return engine.status();
    }

    /**
     * The number of Raft groups the topics are spread over: a topic's group is
     * {@link #groupOf groupOf(path, groups())}. A session's {@code sessionSequence} counts its
     * publishes per group ({@link #publish}). Any thread.
     */
    public int groups() {
        return engine.groups();
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
        engine.close();
    }

    /** The engine, for tests that reach into it (a jgroups group's view, say). */
    Engine engine() {
        return engine;
    }
}
