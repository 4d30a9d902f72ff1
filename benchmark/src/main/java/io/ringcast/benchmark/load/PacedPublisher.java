package io.ringcast.benchmark.load;

import io.ringcast.client.RingcastClient;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

/**
 * One publisher connection and the thread that paces it. Publish {@code n} of the whole run (all
 * publishers together) is meant to leave at {@code start + n / rate}; publisher {@code p} of
 * {@code P} takes the slots {@code n = p, p + P, p + 2P ...}, so together they are evenly spaced,
 * not bursty. Each publisher owns the topics {@code t} with {@code t % P == p} and cycles through
 * them, writing a per-topic counter and the intended send time into each value.
 *
 * <p>When the thread falls behind its schedule it sends the late publishes at once, still stamped
 * with their intended times, so the delay shows in the latency (the coordinated-omission
 * correction). It never skips one.
 *
 * <p>Threads: {@link #run} on the publisher's own thread, which alone touches the counters and
 * issue fields; acks arrive on the client's event loop and touch only the atomics. Read the plain
 * fields after {@link Thread#join()}.
 */
final class PacedPublisher implements Runnable {
    /**
     * Publishes issued and not yet acked, at most: the same bound as the client's
     * {@code maxInFlightPublishes}, enforced here by waiting, so the client never refuses one.
     */
    static final int MAX_IN_FLIGHT = 65_536;
    private static final long IN_FLIGHT_PAUSE_NS = TimeUnit.MICROSECONDS.toNanos(50);

    private final int id;
    private final RingcastClient client;
    private final LoadSpec spec;
    private final int runId;
    private final String[] topicPaths;
    /** The topic indexes this publisher owns. */
    private final int[] owned;
    /** Per owned slot: the last counter published. */
    private final long[] counters;
    private final double nsPerPublish;

    private long startNs;
    private long untilNs;
    private MeasurementWindow window;

    private long issued;
    private long measuredIssued;
    private long lastMeasuredIssueNs;

    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    /** One completion handler for every publish: no capturing lambda per call. */
    private final BiConsumer<Long, Throwable> onAck = this::onAck;

    PacedPublisher(int id, RingcastClient client, LoadSpec spec, int runId, String[] topicPaths) {
        this.id = id;
        this.client = client;
        this.spec = spec;
        this.runId = runId;
        this.topicPaths = topicPaths;
        int p = spec.publishers();
        this.owned = new int[(spec.topics() - id + p - 1) / p];
        for (int k = 0; k < owned.length; k++) {
            owned[k] = id + k * p;
        }
        this.counters = new long[owned.length];
        this.nsPerPublish = 1e9 / spec.rate();
    }

    /** Control thread, before the thread starts (its start orders these writes before {@link #run}). */
    void schedule(long startNs, MeasurementWindow window) {
        this.startNs = startNs;
        this.untilNs = window.untilNs();
        this.window = window;
    }

    @Override
    public void run() {
        int p = spec.publishers();
        for (long k = 0; ; k++) {
            long slot = k * p + id;
            long intendedNs = startNs + (long) (slot * nsPerPublish);
            if (intendedNs >= untilNs) {
                return;
            }
            awaitTime(intendedNs);
            awaitInFlightRoom();
            int o = (int) (k % owned.length);
            long counter = ++counters[o];
            int topic = owned[o];
            byte[] value = PayloadCodec.encode(spec.payloadBytes(), spec.padding(), runId, id, topic, counter, intendedNs);
            CompletableFuture<Long> ack = client.publish(topicPaths[topic], value);
            issued++;
            if (window.contains(intendedNs)) {
                measuredIssued++;
                lastMeasuredIssueNs = System.nanoTime();
            }
            ack.whenComplete(onAck);
        }
    }

    private static void awaitTime(long deadlineNs) {
        for (long waitNs; (waitNs = deadlineNs - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(waitNs);
        }
    }

    private void awaitInFlightRoom() {
        while (issued - (acked.get() + failed.get()) >= MAX_IN_FLIGHT) {
            LockSupport.parkNanos(IN_FLIGHT_PAUSE_NS);
        }
    }

    private void onAck(Long sequence, Throwable failure) {
        if (failure == null) {
            acked.incrementAndGet();
        } else {
            firstFailure.compareAndSet(null, "publisher " + id + ": " + failure.getMessage());
            failed.incrementAndGet();
        }
    }

    /** Whether every issued publish has its ack or failure. After {@link Thread#join()}. */
    boolean allCompleted() {
        return acked.get() + failed.get() == issued;
    }

    /** Copies this publisher's final counters into {@code finalCounters} by topic index. After join. */
    void finalCounters(long[] finalCounters) {
        for (int k = 0; k < owned.length; k++) {
            finalCounters[owned[k]] = counters[k];
        }
    }

    long issued() {
        return issued;
    }

    long measuredIssued() {
        return measuredIssued;
    }

    long lastMeasuredIssueNs() {
        return lastMeasuredIssueNs;
    }

    long acked() {
        return acked.get();
    }

    long failed() {
        return failed.get();
    }

    String firstFailure() {
        return firstFailure.get();
    }

    RingcastClient client() {
        return client;
    }
}
