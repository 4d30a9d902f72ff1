package io.ringcast.it;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits on conditions, never on fixed sleeps: polls until a condition holds or fails after a
 * timeout. {@link #until} takes only boolean conditions and {@link #value} only value suppliers,
 * so a {@code Boolean.FALSE} can never pass for a present value.
 */
final class Await {
    static final Duration DEFAULT = Duration.ofSeconds(20);
    private static final long POLL_MS = 2;

    private Await() {
    }

    static void until(BooleanSupplier condition, String what) {
        until(condition, DEFAULT, () -> what);
    }

    static void until(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
        io.ringcast.testkit.Await.until(condition, timeout, Duration.ofMillis(POLL_MS), what);
    }

    /** Waits until {@code value} gives non-null, and returns it. */
    static <T> T value(Supplier<T> value, Supplier<String> what) {
        long deadline = System.nanoTime() + DEFAULT.toNanos();
        for (T v; ; ) {
            if ((v = value.get()) != null) {
                return v;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + DEFAULT.toMillis() + " ms waiting for " + what.get());
            }
            pause(what);
        }
    }

    private static void pause(Supplier<String> what) {
        try {
            Thread.sleep(POLL_MS); // the poll interval, not a wait for an outcome
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what.get());
        }
    }
}
