package io.ringcast.server.internal;

/**
 * {@code limits.publishRatePerSession}: a token bucket holding one second of publishes, refilled
 * continuously. One per session, used by its event loop only.
 */
final class PublishRateLimit {
    private final int perSecond;
    private double tokens;
    private long refilledAtNanos;

    PublishRateLimit(int perSecond, long nowNanos) {
        assert perSecond > 0;
        this.perSecond = perSecond;
        this.tokens = perSecond; // a new session may burst a full second's worth
        this.refilledAtNanos = nowNanos;
    }

    /** Takes one publish from the bucket; false when the session is over its rate. */
    boolean tryAcquire(long nowNanos) {
        long elapsed = nowNanos - refilledAtNanos;
        if (elapsed > 0) {
            tokens = Math.min(perSecond, tokens + elapsed * (perSecond / 1e9));
            refilledAtNanos = nowNanos;
        }
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }
}
