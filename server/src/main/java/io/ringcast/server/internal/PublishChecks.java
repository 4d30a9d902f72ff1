package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.ServerConfig;

/**
 * The ladder a {@code PUBLISH} or {@code REPUBLISH} with a valid path climbs before it reaches the
 * sequencer or the cluster, in this order: the session's permission, its rate
 * ({@code limits.publishRatePerSession}; a token is taken only once permission is granted), the
 * value's size ({@code limits.maxValueBytes}) and the update's size in a frame
 * ({@code limits.maxFrameBytes}). The first rung that refuses decides.
 *
 * <p>One per session: it holds the session's rate bucket. Thread contract: the session's event
 * loop only.
 */
final class PublishChecks {
    private final ServerConfig.Limits limits;
    /** {@code limits.publishRatePerSession}, or null when there is none. */
    private final PublishRateLimit rate;
    /** In a cluster a republish over the rate is refused: no local ledger answers it. */
    private final boolean clustered;

    PublishChecks(ServerConfig.Limits limits, boolean clustered, long nowNanos) {
        this.limits = limits;
        this.clustered = clustered;
        int perSecond = limits.publishRatePerSession();
        this.rate = perSecond > 0 ? new PublishRateLimit(perSecond, nowNanos) : null;
    }

    /**
     * @param segments    the path's segments, already validated
     * @param valueLength bytes of the value
     * @return {@link Verdict#PASSED}, {@link Verdict#PASSED_OVER_RATE} for a republish the ledger is
     *         to answer, or the refusal: {@code PERMISSION_DENIED}, {@code PUBLISH_RATE_EXCEEDED},
     *         {@code VALUE_TOO_LARGE}
     */
    Verdict check(Session session, String path, String[] segments, int valueLength, boolean republish,
                  long nowNanos) {
        if (!session.permissions.mayPublish(segments)) {
            return Verdict.refused(ErrorCode.PERMISSION_DENIED, "publish to '" + path + "' refused: "
                    + session.permissions.who() + " may not publish there");
        }
        boolean overRate = rate != null && !rate.tryAcquire(nowNanos);
        // a publish sent again may have been applied the first time: the sequencer's ledger answers
        // it honestly, and the rate only keeps it from being applied now
        if (overRate && !(republish && session.publisherId != 0 && !clustered)) {
            return Verdict.refused(ErrorCode.PUBLISH_RATE_EXCEEDED, "publish to '" + path + "' refused: over "
                    + "limits.publishRatePerSession = " + limits.publishRatePerSession() + " per second");
        }
        Verdict size = size(path, valueLength);
        if (!size.passed()) {
            return size;
        }
        return overRate ? Verdict.PASSED_OVER_RATE : Verdict.PASSED;
    }

    private Verdict size(String path, int valueLength) {
        int maxValueBytes = limits.maxValueBytes();
        if (valueLength > maxValueBytes) {
            return Verdict.refused(ErrorCode.VALUE_TOO_LARGE, "value of " + valueLength + " bytes for '" + path
                    + "' is over limits.maxValueBytes = " + maxValueBytes);
        }
        // the update, with a TOPIC message in front, must fit in one frame for every subscriber
        int outBytes = WireCodec.topicBytes(path) + WireCodec.snapshotBytes(valueLength);
        if (outBytes > limits.maxFrameBytes()) {
            return Verdict.refused(ErrorCode.VALUE_TOO_LARGE, "value of " + valueLength + " bytes for '" + path
                    + "' would not fit in a frame of limits.maxFrameBytes = " + limits.maxFrameBytes());
        }
        return Verdict.PASSED;
    }
}
