package io.ringcast.cluster.internal.jgroups;

import java.util.Arrays;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Keeps {@code inFlight} submits of {@code entryBytes} each outstanding against whatever group the
 * supplier names (the current leader, say), on its own thread, until closed; counts acks and failures
 * and keeps the ack latencies.
 */
final class SubmitLoad implements AutoCloseable {
    private final Supplier<RaftGroup> target;
    private final Semaphore slots;
    private final int inFlight;
    private final int entryBytes;
    private final Thread thread;
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final long[] latenciesNs = new long[1 << 20];
    private final AtomicLong latencyCount = new AtomicLong();
    private volatile boolean running = true;
    private volatile Throwable firstFailure;

    SubmitLoad(Supplier<RaftGroup> target, int inFlight, int entryBytes) {
        this.target = target;
        this.inFlight = inFlight;
        this.slots = new Semaphore(inFlight);
        this.entryBytes = entryBytes;
        this.thread = new Thread(this::run, "submit-load");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void run() {
        long n = 0;
        while (running) {
            try {
                if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
            } catch (InterruptedException e) {
                return;
            }
            RaftGroup g = target.get();
            if (g == null) {
                slots.release();
                Thread.onSpinWait();
                continue;
            }
            byte[] entry = new byte[entryBytes];
            long id = n++;
            for (int i = 0; i < 8; i++) {
                entry[i] = (byte) (id >>> (8 * i));
            }
            long start = System.nanoTime();
            g.submit(entry).whenComplete((r, t) -> {
                if (t == null) {
                    acked.incrementAndGet();
                    long k = latencyCount.getAndIncrement();
                    if (k < latenciesNs.length) {
                        latenciesNs[(int) k] = System.nanoTime() - start;
                    }
                } else {
                    if (failed.getAndIncrement() == 0) {
                        firstFailure = t;
                    }
                }
                slots.release();
            });
        }
    }

    long acked() {
        return acked.get();
    }

    Throwable firstFailure() {
        return firstFailure;
    }

    long failed() {
        return failed.get();
    }

    /** The q-quantile (0..1) of the ack latencies so far, in microseconds. */
    long latencyQuantileMicros(double q) {
        int n = (int) Math.min(latencyCount.get(), latenciesNs.length);
        if (n == 0) {
            return -1;
        }
        long[] copy = Arrays.copyOf(latenciesNs, n);
        Arrays.sort(copy);
        return copy[Math.min(n - 1, (int) (q * n))] / 1000;
    }

    /** Stops submitting and waits for the submits in flight to end (their own timeouts bound this). */
    @Override
    public void close() {
        running = false;
        try {
            thread.join();
            slots.tryAcquire(inFlight, 30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
