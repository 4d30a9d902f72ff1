package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.PublishOutcome;
import io.ringcast.protocol.ErrorCode;

/**
 * Where a session's publishes go in a cluster ({@code cluster.enabled}): to the Raft group's log,
 * instead of the local inbound ring; the log's answer comes back to the session's event loop, where
 * it becomes a {@code PUBLISH_ACK} or an error ({@link #refusal}).
 *
 * <p>Thread contract: {@link #hasRoom} and {@link #publish} on the session's event loop (never
 * blocking); the rest on any thread. Immutable, one per node.
 */
final class ClusterRoute {
    /** The log's answer to one publish, on the publishing session's event loop. */
    interface Answer {
        void answer(int correlationId, String path, PublishOutcome outcome, long sequence, String firstPath);
    }

    private final ClusterNode cluster;
    private final long replicationTimeoutMs;
    private final int maxTopics;

    ClusterRoute(ClusterNode cluster, long replicationTimeoutMs, int maxTopics) {
        this.cluster = cluster;
        this.replicationTimeoutMs = replicationTimeoutMs;
        this.maxTopics = maxTopics;
    }

    /** Whether a publish can be taken now; when not, the session pauses its reads, as on a full inbound ring. */
    boolean hasRoom() {
        return cluster.hasRoom();
    }

    /**
     * Sends a publish that passed its checks to the group's log; {@code answer} hears back.
     *
     * @return false when the log's queue was full (nothing sent): the caller asked {@link #hasRoom} first, so
     *         this happens only when more event loops than {@code ClusterNode.ROOM_RESERVE} raced for the last room
     */
    boolean publish(Session session, int correlationId, String path, ByteBuf frame, int valueIndex, int valueLength,
                    boolean republish, Answer answer) {
        byte[] value = new byte[valueLength];
        frame.getBytes(valueIndex, value);
        // keyed by (principal, publisher id, correlation id) in the replicated ledger: a publish sent
        // again through any node is applied once
        String principal = session.permissions.who();
        return cluster.publish(principal, session.publisherId, correlationId, republish, path, value,
                (outcome, sequence, firstPath) -> session.ctx.executor()
                        .execute(() -> answer.answer(correlationId, path, outcome, sequence, firstPath)));
    }

    /** Why a publish the log did not ack is refused. */
    Verdict refusal(PublishOutcome outcome, String path, String firstPath) {
        return switch (outcome) {
            case CONFLICT -> Verdict.refused(ErrorCode.REPUBLISH_CONFLICT, "publish to '" + path + "' refused: its "
                    + "correlation id was first used by this publisher for '" + firstPath + "'; not applied");
            case OUTCOME_UNKNOWN -> Verdict.refused(ErrorCode.PUBLISH_OUTCOME_UNKNOWN, "republish to '" + path
                    + "': whether it was applied is unknown (the cluster forgot this publisher's ledger; "
                    + "limits.publisherLedgers); not applied now");
            case TOO_MANY_TOPICS -> Verdict.refused(ErrorCode.TOO_MANY_TOPICS, "publish to '" + path + "' refused: "
                    + "it would create a topic beyond limits.maxTopics = " + maxTopics);
            case NO_MAJORITY -> noMajority(path);
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
}
