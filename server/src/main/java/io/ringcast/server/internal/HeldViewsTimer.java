package io.ringcast.server.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The clock of {@code maxRate}: sleeps until the earliest time a view's held value may be sent
 * ({@link #arm}), then sends the sequencer a {@code FLUSH_HELD} command through the inbound ring
 * ({@link ViewedUpdates#flushDue}). Asleep, without a deadline, while no view holds anything: the
 * sequencer arms it only when a value starts waiting, and again after each flush that leaves some.
 *
 * <p>Thread contract: {@link #arm} from the sequencer thread; {@link #run} on the timer's own
 * thread, {@code ringcast-held-views}. They meet only through {@link #deadline}.
 */
final class HeldViewsTimer implements Runnable {
    private static final long NONE = Long.MAX_VALUE;
    /** While the inbound ring is full, try again this often: the sequencer is busy anyway. */
    private static final long RING_FULL_RETRY_NS = 1_000_000;

    private final AtomicLong deadline = new AtomicLong(NONE);
    /** Sends {@code FLUSH_HELD}; false when the inbound ring is full. */
    private final BooleanSupplier sendFlush;
    private volatile Thread thread;
    private volatile boolean stopped;

    HeldViewsTimer(BooleanSupplier sendFlush) {
        this.sendFlush = sendFlush;
    }

    /** Asks for a {@code FLUSH_HELD} at {@code deadlineNanos} ({@link System#nanoTime()}), unless one is due sooner. */
    void arm(long deadlineNanos) {
        long current;
        do {
            current = deadline.get();
            if (current != NONE && current - deadlineNanos <= 0) {
                return;
            }
        } while (!deadline.compareAndSet(current, deadlineNanos));
        LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        while (!stopped) {
            long due = deadline.get();
            if (due == NONE) {
                LockSupport.park(this);
                continue;
            }
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(this, wait);
            } else if (deadline.compareAndSet(due, NONE) && !sendFlush.getAsBoolean()) {
                arm(System.nanoTime() + RING_FULL_RETRY_NS);
            }
        }
    }

    /** Ends {@link #run}. Any thread. */
    void stop() {
        stopped = true;
        LockSupport.unpark(thread);
    }
}
