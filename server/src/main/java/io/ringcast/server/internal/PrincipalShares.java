package io.ringcast.server.internal;

import java.util.concurrent.ConcurrentHashMap;

/**
 * How many of something each principal ({@link Permissions#who}; all anonymous sessions are one)
 * holds, at most {@link #max} each: sessions ({@code limits.maxConnectionsPerPrincipal}), views made
 * ({@code limits.maxViewsPerPrincipal}). So that one principal, anonymous sessions above all, cannot
 * take a node-wide pool from the others. A principal holding none is forgotten.
 *
 * <p>Thread-safe: each change is one {@link ConcurrentHashMap#compute} of the principal's count.
 */
final class PrincipalShares {
    private final ConcurrentHashMap<String, Integer> held = new ConcurrentHashMap<>();
    private final int max;

    PrincipalShares(int max) {
        this.max = max;
    }

    /** One more for {@code principal}, unless it holds {@link #max}; returns whether it was taken. */
    boolean tryTake(String principal) {
        boolean[] taken = {false};
        held.compute(principal, (who, n) -> {
            int now = n == null ? 0 : n;
            if (now >= max) {
                return n;
            }
            taken[0] = true;
            return now + 1;
        });
        return taken[0];
    }

    /** One fewer for {@code principal}, which took it. */
    void give(String principal) {
        give(principal, 1);
    }

    /** {@code count} fewer for {@code principal}, which took them. */
    void give(String principal, int count) {
        held.computeIfPresent(principal, (who, n) -> n <= count ? null : n - count);
    }

    /** Whether {@code principal} holds its share. */
    boolean full(String principal) {
        return held.getOrDefault(principal, 0) >= max;
    }

    int max() {
        return max;
    }
}
