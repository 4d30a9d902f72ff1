package io.ringcast.server.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Gives the heap back to the system once many topics went (removed or expired). The collectors
 * size the heap for the most a node held: the serial collector of {@code scripts/ringcast} shrinks
 * it only at a full collection, which a node whose live set fell never needs, so a node whose
 * topics swung by tens of thousands kept its peak's heap for good (140 MB resident before a million
 * expiring topics, 303 MB after, with 29 MB in use). When the topic count fell to half its
 * high-water mark, by at least {@link #MIN_TOPICS_GONE}, this asks the JVM for a full collection
 * ({@link System#gc()}): with the launcher's {@code -XX:-ShrinkHeapInSteps} it gives back at once
 * what {@code -XX:MaxHeapFreeRatio} lets it. At most one a {@link #MIN_INTERVAL_MS}, after a short
 * {@link #SETTLE_MS} so that the rest of a sweep goes first; {@code -XX:+DisableExplicitGC} turns it off.
 *
 * <p>Thread contract: {@link #topics} from the sequencer thread only; the collection runs on a
 * thread of its own, {@code ringcast-heap-give-back}, started for it (one at a time), so that the
 * sequencer never waits for a concurrent collector's cycle. They meet only through
 * {@link #pending} and {@link #lastAskedNanos}.
 */
final class HeapGiveBack {
    private static final Logger log = LoggerFactory.getLogger(HeapGiveBack.class);
    /** Fewer topics gone leave too little heap to be worth a full collection (a topic holds 1-4 KB of it). */
    static final int MIN_TOPICS_GONE = 10_000;
    /** A node whose topics swing every few seconds pays a full collection a minute at most. */
    static final long MIN_INTERVAL_MS = 60_000;
    /** The rest of an expiry sweep or a subtree's removal, which go in the next moments, should not be kept alive by it. */
    static final long SETTLE_MS = 1_000;

    private final LongSupplier clock;
    private final Runnable collect;
    private final ServerCounters counters;
    private final long minIntervalNanos;
    private final long settleNanos;
    private final AtomicBoolean pending = new AtomicBoolean();
    /** When the last collection was asked for ({@link #clock}); 0: never. */
    private volatile long lastAskedNanos;
    /** The most topics since the last collection was asked for, or since the last fall while one was pending. The sequencer's. */
    private int highWater;

    HeapGiveBack(ServerCounters counters) {
        this(System::nanoTime, System::gc, counters, MIN_INTERVAL_MS, SETTLE_MS);
    }

    /**
     * @param clock   {@link System#nanoTime()}, or a test's
     * @param collect {@link System#gc()}, or a test's; run on the give-back thread
     */
    HeapGiveBack(LongSupplier clock, Runnable collect, ServerCounters counters, long minIntervalMs, long settleMs) {
        this.clock = clock;
        this.collect = collect;
        this.counters = counters;
        this.minIntervalNanos = TimeUnit.MILLISECONDS.toNanos(minIntervalMs);
        this.settleNanos = TimeUnit.MILLISECONDS.toNanos(settleMs);
    }

    /** The topic count after topics were made or removed. The sequencer thread; cheap when nothing is due. */
    void topics(int count) {
        if (count >= highWater) {
            highWater = count;
            return;
        }
        if (pending.get()) {
            highWater = count; // the collection asked for comes after this fall: it counts from here
            return;
        }
        if (highWater - count < MIN_TOPICS_GONE || count > highWater / 2) {
            return;
        }
        pending.set(true); // only this thread sets it, the give-back thread clears it
        int from = highWater;
        highWater = count;
        long last = lastAskedNanos;
        long waitNanos = last == 0 ? settleNanos : Math.max(settleNanos, last + minIntervalNanos - clock.getAsLong());
        Thread thread = new Thread(() -> giveBack(waitNanos, from, count), "ringcast-heap-give-back");
        thread.setDaemon(true); // a node that stops does not wait for it
        thread.start();
    }

    private void giveBack(long sleepNanos, int from, int to) {
        try {
            TimeUnit.NANOSECONDS.sleep(sleepNanos);
            MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
            long before = memory.getHeapMemoryUsage().getCommitted();
            long start = clock.getAsLong();
            lastAskedNanos = start;
            collect.run();
            counters.heapGivenBack();
            long tookMs = TimeUnit.NANOSECONDS.toMillis(clock.getAsLong() - start);
            log.info("topics fell from {} to {} or fewer: a full collection to give the heap back took {} ms, "
                    + "committed {} -> {} MB", from, to, tookMs, before >> 20,
                    memory.getHeapMemoryUsage().getCommitted() >> 20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            pending.set(false);
        }
    }

    /** Whether a collection is asked for and not done yet. Any thread; for tests. */
    boolean pending() {
        return pending.get();
    }
}
