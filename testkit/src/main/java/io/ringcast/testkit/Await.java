package io.ringcast.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits on conditions, never on fixed sleeps: polls a condition until it holds, and fails with
 * what was awaited (computed only then) when the timeout passes first. The one polling loop of
 * the tests; choose the interval by what the condition costs (a map lookup: milliseconds; an HTTP
 * call or a walk over 500 subscribers: tens of milliseconds).
 */
public final class Await {

    private Await() {
    }

    public static void until(BooleanSupplier condition, Duration timeout, Duration pollInterval, Supplier<String> what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what.get());
            }
            try {
                Thread.sleep(pollInterval.toMillis()); // the polling interval, not a wait for time to pass
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what.get(), e);
            }
        }
    }
}
