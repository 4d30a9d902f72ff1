package io.ringcast.benchmark.jmh;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The workload shared by {@link FanOutBenchmark} and {@link QueueFanOutBenchmark}, so that both run
 * the same operation and their results compare as a ratio. One benchmark operation publishes
 * {@link #updates} updates of {@link #valueBytes} bytes, round robin over {@link #topics} topics,
 * and returns when every one of the {@link #subscribers} subscribers has received every one of
 * them: one operation is {@link #deliveriesPerOp()} deliveries, and a figure per delivered update
 * is a figure per operation divided by that number ({@link DeliveryReport} does it).
 *
 * <p>The defaults are the subscriber sweep; {@code scripts/bench-jmh.sh} sets them for each run.
 */
@State(Scope.Thread)
public abstract class Workload {
    /** Every this many updates the publisher ends a batch (our sequencer then wakes the readers). */
    static final int BATCH_UPDATES = 64;
    /** Updates per topic published by each trial's setup, before any timing: see {@link #primeUpdates()}. */
    static final int PRIME_UPDATES_PER_TOPIC = 10;
    /** An operation that delivers nothing for this long has failed: say so rather than hang the run. */
    private static final long STALL_NS = 60_000_000_000L;

    /** Subscribers, each receiving every topic. */
    @Param({"10", "100", "1000", "10000"})
    public int subscribers;

    /** Updates published by one benchmark operation. */
    @Param({"100000"})
    public int updates;

    /** Our fan-out reader threads, or the baseline's consumer threads (this machine has 2 cores). */
    @Param({"2"})
    public int readers;

    @Param({"1000"})
    public int topics;

    @Param({"200"})
    public int valueBytes;

    /**
     * Ours: slots of the fan-out ring. The baseline: the capacity of each subscriber's queue.
     * Either way, how many updates a subscriber may lag before the publisher waits.
     */
    @Param({"1024"})
    public int ringSize;

    /** Deliveries the fan-out should have made so far in this trial. */
    long expected;
    /** The topic of the next update: updates go round robin over the topics. */
    private int nextTopic;
    /** {@link #delivered()}, as the supplier {@link #awaitDelivered} polls: made once, not per operation. */
    private final LongSupplier deliveredSoFar = this::delivered;

    /** Publishes one update of topic {@code topic} (0 .. topics-1); {@code endOfBatch} ends a publisher batch. */
    abstract void publish(int topic, boolean endOfBatch) throws InterruptedException;

    /** Deliveries the fan-out has made so far. Any thread. */
    abstract long delivered();

    /**
     * Publishes {@code n} updates, round robin over the topics, and waits for every delivery.
     *
     * @return the deliveries made meanwhile
     */
    long publishAndAwait(int n) throws InterruptedException {
        long before = delivered();
        int topic = nextTopic;
        for (int i = 0; i < n; i++) {
            publish(topic, endOfBatch(i, n));
            topic = topic + 1 == topics ? 0 : topic + 1;
        }
        nextTopic = topic;
        expected += (long) n * subscribers;
        awaitDelivered(deliveredSoFar, expected);
        return delivered() - before;
    }

    /** Deliveries (one update received by one subscriber) in one benchmark operation. */
    public long deliveriesPerOp() {
        return (long) updates * subscribers;
    }

    /**
     * Updates each trial publishes in its setup, untimed: enough that every topic's history is full
     * and recycling, the ring and the queues have wrapped many times and the code is compiled, so a
     * large point can run without a warm-up iteration of its own.
     */
    int primeUpdates() {
        return PRIME_UPDATES_PER_TOPIC * topics;
    }

    /** Whether update {@code i} of an operation of {@code n} ends a batch: every 64th, and the last. */
    static boolean endOfBatch(int i, int n) {
        return i % BATCH_UPDATES == BATCH_UPDATES - 1 || i == n - 1;
    }

    /**
     * Waits until {@code delivered} reaches {@code target}. It parks rather than spins: on 2 cores a
     * spinning publisher thread would take CPU from the very readers it waits for.
     *
     * @throws IllegalStateException when nothing is delivered for a minute (a lost update)
     */
    static void awaitDelivered(LongSupplier delivered, long target) {
        long seen = delivered.getAsLong();
        long progressNs = System.nanoTime();
        for (int spins = 0; seen < target; spins++) {
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(10_000);
            }
            long now = delivered.getAsLong();
            if (now != seen) {
                seen = now;
                progressNs = System.nanoTime();
            } else if (spins % 1024 == 0 && System.nanoTime() - progressNs > STALL_NS) {
                throw new IllegalStateException("deliveries stuck at " + now + ", expected " + target);
            }
        }
    }
}
