package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.PublishOutcome;
import io.ringcast.log.PublishRefusals;
import io.ringcast.log.PublishResult;
import io.ringcast.protocol.ErrorCode;

import java.util.List;

/**
 * Where a session's publishes go in a cluster ({@code cluster.enabled}): to the Raft group's log,
 * instead of the local inbound ring. The log's answer comes back two ways:
 * <ul>
 *   <li>an ack, once this node has applied the publish's entry (its update is then on the inbound
 *       ring), goes on the inbound ring too ({@link SequencerProxy#ackFromCluster}): the sequencer
 *       acks it on the fan-out ring after the update, as a single node's publish, so a publisher
 *       subscribed to its topic receives the update before the ack;</li>
 *   <li>a refusal goes to the session's event loop, where it becomes an error ({@link #refusal}).</li>
 * </ul>
 *
 * <p>A session's publishes are applied in the order it sent them, through failover: each carries
 * the session's number and its place among the session's publishes, and the log applies none
 * whose predecessor in its session never reached the log ({@code OUT_OF_ORDER}: its predecessor
 * went to a leader that died, say). A publish refused unapplied or out of order, or whose
 * outcome is unknown ({@code NO_MAJORITY}, {@code REPLICATION_TIMEOUT}), also stops the session's
 * later publishes here: each is refused with {@code NO_MAJORITY}, so that the client moves to
 * another address at once and sends again what is unacked, oldest first, as {@code REPUBLISH}.
 *
 * <p>Thread contract: {@link #hasRoom} and {@link #publish} on the session's event loop (never
 * blocking); an ack on the cluster's answer thread, which waits there for room in the inbound ring
 * (never an event loop); the rest on any thread. Immutable, one per node.
 */
final class ClusterRoute implements LoggedRemovals {
    /**
     * Removals of one {@code REMOVE} in the logs at once: a few entries' worth (an entry carries up
     * to 256 records), a small share of the node's queue of 8,192, which its publishes share.
     */
    static final int REMOVALS_IN_FLIGHT = 512;

    /** The log's refusal of one publish ({@link #refusal}), on the publishing session's event loop. */
    interface Refused {
        void refused(int correlationId, Verdict refusal);
    }

    private final ClusterNode cluster;
    private final SequencerProxy inbound;
    private final long replicationTimeoutMs;
    /** The texts of the log's refusals, the single node's. */
    private final PublishRefusals refusals;
    /**
     * While it refuses, this node's publishes go to the log as to an existing topic only: the log
     * refuses on every node alike those that would create one, where a check here could not know
     * whether the topic exists by the time the entry is applied.
     */
    private final HeapGuard heap;

    ClusterRoute(ClusterNode cluster, SequencerProxy inbound, long replicationTimeoutMs, PublishRefusals refusals,
                 HeapGuard heap) {
        this.cluster = cluster;
        this.inbound = inbound;
        this.replicationTimeoutMs = replicationTimeoutMs;
        this.refusals = refusals;
        this.heap = heap;
    }

    /** Whether a publish can be taken now; when not, the session pauses its reads, as on a full inbound ring. */
    boolean hasRoom() {
        return cluster.hasRoom();
    }

    /**
     * Sends a publish that passed its checks to the group's log; it is acked through the pipeline,
     * or {@code refused} hears why not.
     *
     * @return false when the log's queue was full (nothing sent): the caller asked {@link #hasRoom} first, so
     *         this happens only when more event loops than {@code ClusterNode.ROOM_RESERVE} raced for the last room
     */
    boolean publish(Session session, int correlationId, String path, ByteBuf frame, int valueIndex, int valueLength,
                    boolean republish, Refused refused) {
        byte[] value = new byte[valueLength];
        frame.getBytes(valueIndex, value);
        // keyed by (principal, publisher id, correlation id) in the replicated ledger: a publish sent
        // again through any node is applied once
        String principal = session.permissions.who();
        // each group's log orders the session's publishes it gets: their places count per group
        if (session.clusterSessionSequences == null) {
            session.clusterSessionSequences = new long[cluster.groups()];
        }
        long place = ++session.clusterSessionSequences[ClusterNode.groupOf(path, cluster.groups())];
        boolean existingTopicOnly = heap.refusing();
        return cluster.publish(principal, session.publisherId, session.publishingSession, place, correlationId,
                republish, path, value, existingTopicOnly,
                (outcome, sequence, firstPath) -> {
                    if (outcome == PublishOutcome.ACKED) {
                        ack(session, correlationId, sequence);
                        return;
                    }
                    if (outcome == PublishOutcome.NO_MAJORITY || outcome == PublishOutcome.TIMED_OUT
                            || outcome == PublishOutcome.OUT_OF_ORDER) {
                        session.clusterPublishesStopped = true; // at once: the refusal reaches the loop later
                    }
                    Verdict refusal = existingTopicOnly && outcome == PublishOutcome.TOO_MANY_TOPICS
                            ? heap.refusal(ErrorCode.TOO_MANY_TOPICS, "publish to '" + path + "', a new topic,")
                            : refusal(outcome, correlationId, path, firstPath);
                    session.ctx.executor().execute(() -> refused.refused(correlationId, refusal));
                });
    }

    /** The answer to a session's removals through the log: how many it removed, or why not. */
    interface Removed {
        void removed(int removedTopics, Verdict refusal);
    }

    @Override
    public boolean leads(String path) {
        return cluster.leadsGroupOf(path);
    }

    @Override
    public boolean removeIfUnchanged(String path, long ifLastSequence) {
        return cluster.remove(path, ifLastSequence, (outcome, sequence, firstPath) -> { });
    }

    /**
     * Logs the removal of each of {@code paths} (what a session's {@code REMOVE} matched here, and it
     * may publish to) in its group's log, {@link #REMOVALS_IN_FLIGHT} at a time; {@code answer} hears,
     * on the session's event loop, how many the logs removed once every one is answered, or the first
     * refusal ({@code NO_MAJORITY} when a log had no leader, or no room while none of these was in
     * flight; {@code REPLICATION_TIMEOUT}), after which no more are sent. The session's event loop.
     */
    void remove(Session session, String selector, List<String> paths, Removed answer) {
        assert session.ctx.executor().inEventLoop() : "a REMOVE's removals are counted on its session's event loop";
        new SelectorRemoval(session, selector, paths, answer).sendMore();
    }

    /**
     * One {@code REMOVE}'s removals, sent to the logs a window at a time: a selector matching 17,000
     * topics once filled the node's log queue (shared with every publish of the node) and was refused
     * {@code NO_MAJORITY} after 13 s with a majority there (sent again on nodes at 95% of their
     * heap, two of the five then ran out of it). Every field on the session's event loop.
     */
    private final class SelectorRemoval {
        private final Session session;
        private final String selector;
        private final List<String> paths;
        private final Removed answer;
        private int next;
        private int inFlight;
        private int removed;
        private Verdict refusal;

        SelectorRemoval(Session session, String selector, List<String> paths, Removed answer) {
            this.session = session;
            this.selector = selector;
            this.paths = paths;
            this.answer = answer;
        }

        void sendMore() {
            while (refusal == null && next < paths.size() && inFlight < REMOVALS_IN_FLIGHT) {
                String path = paths.get(next);
                if (!cluster.remove(path, 0, (outcome, sequence, firstPath) ->
                        session.ctx.executor().execute(() -> answered(path, outcome, sequence)))) {
                    if (inFlight == 0) { // full of other sessions' publishes: nothing of ours frees room
                        refusal = Verdict.refused(ErrorCode.NO_MAJORITY, "remove of '" + selector + "' refused: node '"
                                + cluster.settings().nodeName() + "' has no room in its Raft log's queue for the removal of '"
                                + path + "' (" + next + " of its " + paths.size() + " topics sent); send it again");
                    }
                    break; // else the next answer sends more
                }
                next++;
                inFlight++;
            }
            if (inFlight == 0) {
                answer.removed(removed, refusal);
            }
        }

        private void answered(String path, PublishOutcome outcome, long sequence) {
            inFlight--;
            if (outcome == PublishOutcome.ACKED) {
                removed += sequence > 0 ? 1 : 0;
            } else if (refusal == null) {
                refusal = outcome == PublishOutcome.NO_MAJORITY
                        ? Verdict.refused(ErrorCode.NO_MAJORITY, "remove of '" + selector + "' refused: node '"
                                + cluster.settings().nodeName() + "' knows no Raft leader it can reach for '" + path
                                + "'; topics it matched before may be removed; send it again through another node")
                        : Verdict.refused(ErrorCode.REPLICATION_TIMEOUT, "remove of '" + selector + "': the removal of '"
                                + path + "' was not committed within cluster.replicationTimeoutMs = "
                                + replicationTimeoutMs + " ms; it may or may not have been applied");
            }
            sendMore();
        }
    }

    /**
     * An acked publish, told once this node applied its entry: the ack follows the update through
     * the inbound ring. A session closed meanwhile gets none (its poller skips it as well when it
     * closes later). The cluster's answer thread; waits for room in the ring.
     */
    private void ack(Session session, int correlationId, long sequence) {
        assert !session.ctx.executor().inEventLoop() : "an ack waits for room in the inbound ring: not on a loop";
        if (session.channel.isActive()) {
            inbound.ackFromCluster(session, correlationId, sequence);
        }
    }

    /** Why a publish the log did not ack is refused ({@code ACKED} never comes here: see {@link #publish}). */
    private Verdict refusal(PublishOutcome outcome, int correlationId, String path, String firstPath) {
        return switch (outcome) {
            case CONFLICT -> decided(PublishResult.conflict(firstPath), correlationId, path);
            case OUTCOME_UNKNOWN -> decided(PublishResult.OUTCOME_UNKNOWN, correlationId, path);
            case TOO_MANY_TOPICS -> decided(PublishResult.TOO_MANY_TOPICS, correlationId, path);
            case NO_MAJORITY -> noMajority(path);
            case OUT_OF_ORDER -> stopped(path);
            case TIMED_OUT, ACKED -> Verdict.refused(ErrorCode.REPLICATION_TIMEOUT, "publish to '" + path
                    + "' not committed within cluster.replicationTimeoutMs = " + replicationTimeoutMs
                    + " ms; it may or may not have been applied (a REPUBLISH tells)");
        };
    }

    /** A publish refused because no leader is known here, or because the node had no room for it. */
    Verdict noMajority(String path) {
        ClusterSettings settings = cluster.settings();
        return Verdict.refused(ErrorCode.NO_MAJORITY, "publish to '" + path + "' refused: node '"
                + settings.nodeName() + "' knows no Raft leader it can reach (an election, or it is cut off from "
                + settings.majority() + " of " + settings.members().size() + " members); publish through another node");
    }

    /** A publish of a session whose earlier publish was refused unapplied or timed out. */
    Verdict stopped(String path) {
        return decided(PublishResult.OUT_OF_ORDER, 0, path);
    }

    /** A refusal the log's rules decided: the error and the text a single node gives. */
    private Verdict decided(PublishResult result, int correlationId, String path) {
        return Verdict.refused(RepublishAnswers.errorOf(result.outcome()), refusals.text(result, correlationId, path));
    }
}
