package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.PublishOutcome;
import io.ringcast.protocol.ErrorCode;

/**
 * Where a session's publishes go in a cluster ({@code cluster.enabled}): to their partition's
 * owner, on whichever node, instead of the local inbound ring; the owner's answer comes back to
 * the session's event loop, where it becomes a {@code PUBLISH_ACK} or an error ({@link #refusal}).
 *
 * <p>Thread contract: {@link #publish} on the session's event loop; the rest on any thread.
 * Immutable, one per node.
 */
final class ClusterRoute {
    /** The owner's answer to one publish, on the publishing session's event loop. */
    interface Answer {
        void answer(int correlationId, String path, PublishOutcome outcome, long sequence);
    }

    private final ClusterNode cluster;
    private final long replicationTimeoutMs;

    ClusterRoute(ClusterNode cluster, long replicationTimeoutMs) {
        this.cluster = cluster;
        this.replicationTimeoutMs = replicationTimeoutMs;
    }

    /** Sends a publish that passed its checks to its partition's owner; {@code answer} hears back. */
    void publish(Session session, int correlationId, String path, ByteBuf frame, int valueIndex, int valueLength,
                 Answer answer) {
        byte[] value = new byte[valueLength];
        frame.getBytes(valueIndex, value);
        // with a publisher id the owner recognises a publish sent again, whichever node it came through
        cluster.publish(path, value, session.publisherId, correlationId, (outcome, sequence) -> session.ctx.executor()
                .execute(() -> answer.answer(correlationId, path, outcome, sequence)));
    }

    /** Why a publish the owner did not ack is refused: {@code NO_MAJORITY} or {@code REPLICATION_TIMEOUT}. */
    Verdict refusal(PublishOutcome outcome, String path) {
        if (outcome == PublishOutcome.NO_MAJORITY) {
            ClusterSettings settings = cluster.settings();
            return Verdict.refused(ErrorCode.NO_MAJORITY, "publish to '" + path + "' refused: node '"
                    + settings.nodeName() + "' is on the minority side of a split (fewer than "
                    + settings.majority() + " of " + settings.members().size()
                    + " members in its view); publish through another node");
        }
        return Verdict.refused(ErrorCode.REPLICATION_TIMEOUT, "publish to '" + path + "' not confirmed by "
                + "its partition's owner and backup within cluster.replicationTimeoutMs = "
                + replicationTimeoutMs + "; it may or may not have been applied");
    }
}
