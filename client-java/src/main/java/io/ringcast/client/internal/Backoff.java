package io.ringcast.client.internal;

import java.util.random.RandomGenerator;

/**
 * Reconnect delays: a ceiling that starts at the initial delay and doubles per call up to the
 * maximum, and a delay drawn uniformly from the ceiling's upper half, {@code [ceiling/2, ceiling]}
 * ("equal jitter": clients that lost the same server spread out, yet none retries much sooner
 * than the ceiling says). Not thread-safe: used on the event loop only.
 */
final class Backoff {
    private final long initialMs;
    private final long maxMs;
    private final RandomGenerator random;
    private long ceilingMs;

    Backoff(long initialMs, long maxMs, RandomGenerator random) {
        if (initialMs < 1 || maxMs < initialMs) {
            throw new IllegalArgumentException("need 1 <= initialMs <= maxMs, got " + initialMs + ", " + maxMs);
        }
        this.initialMs = initialMs;
        this.maxMs = maxMs;
        this.random = random;
        this.ceilingMs = initialMs;
    }

    /** The delay before the next attempt; raises the ceiling for the one after. */
    long nextDelayMs() {
        long ceiling = ceilingMs;
        ceilingMs = Math.min(maxMs, ceiling * 2); // maxMs is at most a day: no overflow
        long floor = ceiling / 2;
        return floor + random.nextLong(ceiling - floor + 1);
    }

    /** Back to the initial delay, after a successful connect. */
    void reset() {
        ceilingMs = initialMs;
    }
}
