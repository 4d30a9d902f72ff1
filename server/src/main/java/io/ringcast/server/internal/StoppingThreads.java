package io.ringcast.server.internal;

import java.util.concurrent.TimeUnit;

/** Waiting for the node's own threads (the sequencer, the demo publisher) to end when it stops. */
final class StoppingThreads {
    /** How long a stop waits for one thread before it goes on without it. */
    static final long JOIN_TIMEOUT_MS = 5_000;

    private StoppingThreads() {
    }

    /**
     * Waits up to {@link #JOIN_TIMEOUT_MS} for {@code thread} to end. An interrupt does not cut a
     * stop short (what the node holds must still be released): it is kept for the caller.
     */
    static void join(Thread thread) {
        boolean interrupted = Thread.interrupted();
        long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_TIMEOUT_MS);
        while (thread.isAlive() && System.nanoTime() < deadlineNs) {
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime())));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
