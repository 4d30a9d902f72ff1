package io.ringcast.benchmark.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The baseline fan-out, built the way most Java code would build it: one bounded
 * {@link ArrayBlockingQueue} per subscriber, and a copy of the value for every subscriber
 * ({@code new byte[]} and {@code System.arraycopy}, what a Go channel send of a value does).
 * {@code consumers} threads, as many as our fan-out readers, each drain the queues of their share
 * of the subscribers: subscriber {@code i} belongs to consumer {@code i % consumers}, as session
 * {@code i} belongs to reader {@code i % readers} in {@code FanOutHarness}. A consumer counts what
 * it takes and drops it, as our subscribers' channels release what is written to them.
 *
 * <p>What it leaves out is in its favour: no topic id, sequence, encoding or history, only the
 * value. Threads: one publisher thread calls {@link #publish} and {@link #close}; each consumer
 * thread only takes from its own queues; the counters may be read from any thread.
 */
final class QueueFanOut implements AutoCloseable {
    /** Empty sweeps a consumer spins through before it parks between sweeps. */
    private static final int IDLE_SPINS = 100;
    private static final long IDLE_PARK_NS = 10_000;

    private final List<ArrayBlockingQueue<byte[]>> queues = new ArrayList<>();
    private final Thread[] consumers;
    private final byte[] value;
    private final LongAdder deliveries = new LongAdder();
    private final LongAdder deliveredBytes = new LongAdder();
    private volatile boolean running = true;
    private boolean closed;

    /**
     * @param subscribers   one queue each
     * @param consumerThreads threads draining the queues
     * @param topics        topics (the baseline sends every topic the same way; kept for symmetry)
     * @param valueBytes    bytes of each update's value
     * @param queueCapacity capacity of each subscriber's queue
     */
    QueueFanOut(int subscribers, int consumerThreads, int topics, int valueBytes, int queueCapacity) {
        if (topics < 1) {
            throw new IllegalArgumentException("topics must be at least 1, got " + topics);
        }
        value = new byte[valueBytes];
        List<List<ArrayBlockingQueue<byte[]>>> owned = new ArrayList<>();
        for (int c = 0; c < consumerThreads; c++) {
            owned.add(new ArrayList<>());
        }
        for (int i = 0; i < subscribers; i++) {
            ArrayBlockingQueue<byte[]> q = new ArrayBlockingQueue<>(queueCapacity);
            queues.add(q);
            owned.get(i % consumerThreads).add(q);
        }
        consumers = new Thread[consumerThreads];
        for (int c = 0; c < consumerThreads; c++) {
            List<ArrayBlockingQueue<byte[]>> mine = owned.get(c);
            consumers[c] = new Thread(() -> drain(mine, queueCapacity), "queue-consumer-" + c);
            consumers[c].setDaemon(true);
            consumers[c].start();
        }
    }

    /**
     * Copies the value of an update of {@code topic} once per subscriber into its queue, waiting
     * while a queue is full. {@code endOfBatch} is ignored: this design has no batches. Publisher
     * thread.
     */
    void publish(int topic, boolean endOfBatch) throws InterruptedException {
        for (int i = 0, n = queues.size(); i < n; i++) {
            byte[] copy = new byte[value.length];
            System.arraycopy(value, 0, copy, 0, value.length);
            queues.get(i).put(copy);
        }
    }

    /** Values taken by the consumers so far. Any thread. */
    long delivered() {
        return deliveries.sum();
    }

    /** Bytes of the values taken so far. Any thread. */
    long deliveredBytes() {
        return deliveredBytes.sum();
    }

    /** A consumer thread: sweeps its queues, taking everything each holds, until closed. */
    private void drain(List<ArrayBlockingQueue<byte[]>> mine, int queueCapacity) {
        ArrayList<byte[]> taken = new ArrayList<>(queueCapacity);
        int idle = 0;
        while (running) {
            long n = 0;
            long bytes = 0;
            for (int q = 0, queueCount = mine.size(); q < queueCount; q++) {
                if (mine.get(q).drainTo(taken) > 0) {
                    for (int i = 0, k = taken.size(); i < k; i++) {
                        bytes += taken.get(i).length;
                    }
                    n += taken.size();
                    taken.clear();
                }
            }
            if (n > 0) {
                deliveries.add(n); // once per sweep, not per value
                deliveredBytes.add(bytes);
                idle = 0;
            } else if (++idle < IDLE_SPINS) {
                Thread.onSpinWait();
            } else {
                // parks rather than spins when idle: on 2 cores a spinning consumer would take CPU from the publisher
                LockSupport.parkNanos(IDLE_PARK_NS);
            }
        }
    }

    /** Stops the consumers and waits for them. Publisher thread; safe to call twice. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        running = false;
        try {
            for (Thread t : consumers) {
                t.join(TimeUnit.SECONDS.toMillis(10));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the consumers are daemons and stop on their own
        }
    }
}
