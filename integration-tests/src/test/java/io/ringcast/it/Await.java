package io.ringcast.it;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits on conditions, never on fixed sleeps: polls until true or fails after a timeout. */
final class Await {
    static final Duration DEFAULT = Duration.ofSeconds(20);

    private Await() {
    }

    static void until(BooleanSupplier condition, String what) {
        until(condition, DEFAULT, what);
    }

    static void until(BooleanSupplier condition, Duration timeout, String what) {
        until(() -> condition.getAsBoolean() ? Boolean.TRUE : null, timeout, () -> what);
    }

    static <T> T until(Supplier<T> value, String what) {
        return until(value, DEFAULT, () -> what);
    }

    static <T> T until(Supplier<T> value, Duration timeout, Supplier<String> what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            T v = value.get();
            if (v != null) {
                return v;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what.get());
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(2); // a poll interval, not a wait for an outcome
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what.get());
            }
        }
    }
}
