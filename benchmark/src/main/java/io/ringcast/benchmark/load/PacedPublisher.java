package io.ringcast.benchmark.load;

import io.ringcast.client.RingcastException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One publisher connection ({@link Publication}: a Ringcast client, or a JetStream one) and the
 * thread that paces it. Publish {@code n} of the whole run (all
 * publishers together) is meant to leave at {@code start + n / rate}; publisher {@code p} of
 * {@code P} takes the slots {@code n = p, p + P, p + 2P ...}, so together they are evenly spaced,
 * not bursty. Each publisher owns the topics {@code t} with {@code t % P == p} and cycles through
 * them, writing a per-topic counter and the intended send time into each value.
 *
 * <p>When the thread falls behind its schedule it sends the late publishes at once, still stamped
 * with their intended times, so the delay shows in the latency (the coordinated-omission
 * correction). It never skips one.
 *
 * <p>A publish the client fails after its own retries ({@code REPUBLISH} through the next node after
 * a lost connection, another node after {@code NO_MAJORITY}; JetStream's: {@link JetStreamPublication})
 * is counted by its reason and its value
 * noted in the run's {@link UnackedValues}: it is not sent again (a plain publish of a value whose
 * outcome is unknown could apply it twice), and the subscribers' checks do not count it as lost.
 * The longest time between two acks ({@link LongestGap}) is the pause this publisher saw. Each ack
 * of a measured publish records its latency from the intended send time, as deliveries do, into the
 * run's ack recorders: what the publishing application waits for an ack, stalls included.
 *
 * <p>Threads: {@link #run} on the publisher's own thread, which alone touches the counters and
 * issue fields; acks arrive on the client's event loop (or on this thread, for a publish completed
 * at once) and touch only the atomics, the unacked set, the ack recorders (one per thread) and, under
 * the ack gap's lock, the ack gap and the measured acks. Read the plain fields after
 * {@link Thread#join()}.
 */
final class PacedPublisher implements Runnable {
    /**
     * Publishes issued and not yet acked, at most: the same bound as the client's
     * {@code maxInFlightPublishes}, enforced here by waiting, so the client never refuses one.
     */
    static final int MAX_IN_FLIGHT = 65_536;
    private static final long IN_FLIGHT_PAUSE_NS = TimeUnit.MICROSECONDS.toNanos(50);

    private final int id;
    private final Publication publication;
    private final LoadSpec spec;
    private final int runId;
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
    /** Failed publishes by reason: the server's error code, or the client's message. */
    private final Map<String, AtomicLong> failedByReason = new ConcurrentHashMap<>();
    private final UnackedValues unacked;
    /** Guarded by itself: completions come from the event loop and, rarely, this thread. */
    private final LongestGap ackGap = new LongestGap();
    /** Acks of measured publishes; guarded by {@link #ackGap}. */
    private long measuredAcked;
    /** System.nanoTime() of the last of them, 0 before any; guarded by {@link #ackGap}. */
    private long lastMeasuredAckNs;
    private final LatencyRecorders ackLatencies;

    /**
     * @param ackLatencies where each measured publish's ack latency (ack time - intended send time) goes
     */
    PacedPublisher(int id, Publication publication, LoadSpec spec, int runId, UnackedValues unacked,
                   LatencyRecorders ackLatencies) {
        this.id = id;
        this.publication = publication;
        this.spec = spec;
        this.runId = runId;
        this.unacked = unacked;
        this.ackLatencies = ackLatencies;
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
            byte[] value = spec.encodeValue(runId, id, topic, counter, intendedNs);
            CompletableFuture<?> ack = publication.publish(topic, counter, value);
            issued++;
            if (window.contains(intendedNs)) {
                measuredIssued++;
                lastMeasuredIssueNs = System.nanoTime();
            }
            // a completion per publish, to name its value if it fails; the value is allocated per publish anyway
            ack.whenComplete((answer, failure) -> onAnswer(topic, counter, intendedNs, failure));
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

    private void onAnswer(int topic, long counter, long intendedNs, Throwable failure) {
        if (failure == null) {
            acked.incrementAndGet();
            long nowNs = System.nanoTime();
            boolean measured = window.contains(intendedNs);
            if (measured) {
                ackLatencies.record(nowNs - intendedNs);
            }
            synchronized (ackGap) {
                ackGap.record(nowNs, window);
                if (measured) {
                    measuredAcked++;
                    lastMeasuredAckNs = Math.max(lastMeasuredAckNs, nowNs);
                }
            }
            return;
        }
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        unacked.add(topic, counter);
        failedByReason.computeIfAbsent(reason(cause), r -> new AtomicLong()).incrementAndGet();
        firstFailure.compareAndSet(null, "publisher " + id + ": " + cause.getMessage());
        failed.incrementAndGet();
    }

    /**
     * The server's error code, else the client's own message (a closed client, a connection never made;
     * a {@link JetStreamPublication}'s reason).
     */
    static String reason(Throwable failure) {
        if (failure instanceof RingcastException e && e.code() != null) {
            return e.code().name();
        }
        return failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
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

    /** Failed publishes by reason, sorted by reason. */
    Map<String, Long> failedByReason() {
        Map<String, Long> byReason = new TreeMap<>();
        failedByReason.forEach((reason, n) -> byReason.put(reason, n.get()));
        return byReason;
    }

    /**
     * The longest pause between two acks; with {@code endNs}, a pause still open then (publishes
     * never answered) counts up to it. After every publish was answered or given up on.
     */
    LongestGap ackGap(long endNs) {
        synchronized (ackGap) {
            if (!allCompleted()) {
                ackGap.closeOpenGap(endNs, window);
            }
            return ackGap;
        }
    }

    /** Acks of publishes whose intended send time lies in the measured window. After every answer. */
    long measuredAcked() {
        synchronized (ackGap) {
            return measuredAcked;
        }
    }

    /** System.nanoTime() of the last ack of a measured publish, 0 before any. After every answer. */
    long lastMeasuredAckNs() {
        synchronized (ackGap) {
            return lastMeasuredAckNs;
        }
    }
}
