package io.ringcast.benchmark.load;

import io.ringcast.client.RingcastException;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.UpdateListener;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One subscriber connection's checks: every value it receives, per topic, and the end-to-end
 * latency of the measured ones. O(1) work per update: two array slots, a few counters, one
 * histogram record, and no allocation. Two kinds of subscriber feed it: the Java client, through
 * this class's {@link UpdateListener} side ({@link #onUpdate}, which reads the header from the
 * value's copy), and a {@link LeanSubscriber}, which reads the header in place from the frame; both
 * end in {@link #onValue}, where every check is made.
 *
 * <p>Per topic it keeps the last payload counter and the last server sequence. A value whose
 * counter is the last plus one is in order; a larger one means values were <b>lost</b> in between
 * (counted as many as were skipped); the same counter again is a <b>duplicate</b>; a smaller one
 * is <b>out of order</b>, and so is a new value arriving with a server sequence at or below the
 * last one. A value flagged conflated ({@link UpdateKind#CONFLATED}) may skip counters: those are
 * counted as <b>conflated</b>, not lost, because the server said it skipped them on purpose. What
 * was still missing when the run ended is added by {@link #counts}.
 *
 * <p>Values whose publish failed ({@link UnackedValues}) are held apart at the end: one never
 * received is <b>unacked, missed</b>, not lost; one received after a later value is <b>unacked,
 * late</b>, not out of order (it was applied after its successors, which a failed publish may be).
 * To tell, the tally notes each skipped range and each late value (rare; at most
 * {@link #MAX_NOTED} of each, past which nothing is excused). It also keeps the longest gap between
 * two of its deliveries ({@link LongestGap}): the pause this subscriber saw.
 *
 * <p>A subscriber that meets what it cannot check honestly (a lean subscriber given a delta, or
 * losing its connection, which it does not resume; a view's {@code UNMATCHED}, which the run's view
 * shapes never call for) <b>fails</b> ({@link #fail}): the run is not
 * clean, the subscriber stops, and what it never received is counted as <b>unchecked</b>, not lost.
 *
 * <p>Threads: {@link #onUpdate}, {@link #onValue}, {@link #foreignValue}, {@link #fail},
 * {@link #onError} and {@link #noteError} run on the subscriber's event-loop thread only (a
 * {@link JetStreamSubscriber}'s, whose client calls from more than one, holds the tally's lock); {@link #progress()} and
 * {@link #stopped()} from any thread; {@link #counts} only after the subscriber was closed (its
 * close waits for a task on the same loop, or for the channel's close there, which orders every
 * write before the read).
 */
final class SubscriberTally implements UpdateListener {
    /** Skipped ranges, and late values, noted at most: past it, nothing is excused as unacked. */
    static final int MAX_NOTED = 1 << 16;

    private final int index;
    private final int runId;
    /** The header of the value {@link #onUpdate} reads, filled per value. */
    private final ValueHeader header;
    private final MeasurementWindow window;
    private final LatencyRecorders latencies;
    /** Per topic index: the last counter seen, 0 before any. */
    private final long[] lastCounter;
    /** Per topic index: the last server sequence seen, 0 before any. */
    private final long[] lastSequence;

    private long progressed;
    private long lost;
    private long duplicated;
    private long outOfOrder;
    private long snapshots;
    private long gapSnapshots;
    private long conflated;
    private long sequenceGaps;
    private long foreignValues;
    private long deliveries;
    private long measuredDeliveries;
    private long lastMeasuredReceiveNs;
    private long errors;
    private long failures;
    private String lastError;
    /** Set by {@link #fail}: the subscriber checks nothing more; volatile for the drain loop. */
    private volatile boolean stopped;
    /**
     * {@link #progressed} published with a release store after each value: the drain loop polls it
     * without making the listener pay for a full volatile write per update.
     */
    private final AtomicLong progressVisible = new AtomicLong();
    private final LongestGap deliveryGap = new LongestGap();
    /** (topic, first skipped counter, last skipped counter) of each skip. */
    private final Triples skipped = new Triples();
    /** (topic, counter, the later counter received before it) of each value received after a later one. */
    private final Triples late = new Triples();
    /** More than {@link #MAX_NOTED} skips or late values: they are not held against the unacked ones. */
    private boolean notesOverflowed;

    SubscriberTally(int index, int runId, int topics, MeasurementWindow window, LatencyRecorders latencies) {
        this(index, runId, topics, window, latencies, ValueFormat.BINARY);
    }

    /** @param format what the Java client's listener side ({@link #onUpdate}) reads each value as */
    SubscriberTally(int index, int runId, int topics, MeasurementWindow window, LatencyRecorders latencies,
                    ValueFormat format) {
        this.header = new ValueHeader(format);
        this.index = index;
        this.runId = runId;
        this.window = window;
        this.latencies = latencies;
        this.lastCounter = new long[topics];
        this.lastSequence = new long[topics];
    }

    /** The Java client's listener: reads the header from the value's copy; the checks are {@link #onValue}'s. */
    @Override
    public void onUpdate(Update update) {
        long receivedNs = System.nanoTime();
        if (stopped) {
            return;
        }
        if (!header.read(update.value()) || header.runId != runId) {
            foreignValue(); // e.g. the last value of an earlier run, sent as a snapshot
            return;
        }
        onValue(header.topicIndex, header.counter, update.sequence(), update.kind(), receivedNs,
                header.intendedSendNs);
    }

    /**
     * The Java client's listener: a value stopped passing its subscription's filter. The generator's
     * view shapes filter on what every value it publishes passes ({@link JsonPayload#viewShape}), so
     * this is the server dropping updates it should send: the subscriber fails.
     */
    @Override
    public void onUnmatched(String topic, long sequence) {
        if (!stopped) {
            fail(unmatchedMessage(topic, sequence));
        }
    }

    /** Why an {@code UNMATCHED} fails a subscriber, for either kind of subscriber. */
    static String unmatchedMessage(String topic, long sequence) {
        return "UNMATCHED for " + topic + " #" + sequence + ", but every value of the run passes the filters of its"
                + " view shapes: the server filtered out an update it should have sent";
    }

    /** A value that this run did not write (an earlier run's snapshot, a value without a header): ignored. */
    void foreignValue() {
        foreignValues++;
    }

    /**
     * One value of this run, whichever subscriber read it: every check, and the latency when its
     * intended send time falls in the measured window. Allocates nothing.
     *
     * @param t              the topic index in the value's header
     * @param counter        the counter in the value's header
     * @param sequence       the server's sequence of the update or snapshot
     * @param kind           how it came (the wire type and its flags)
     * @param receivedNs     System.nanoTime() when it was received
     * @param intendedSendNs the intended send time in the value's header
     */
    void onValue(int t, long counter, long sequence, UpdateKind kind, long receivedNs, long intendedSendNs) {
        if (t < 0 || t >= lastCounter.length) {
            foreignValues++;
            return;
        }
        if (kind == UpdateKind.SNAPSHOT) {
            snapshots++;
        } else if (kind == UpdateKind.SNAPSHOT_AFTER_GAP) {
            gapSnapshots++;
        }
        long last = lastCounter[t];
        if (counter == last) {
            duplicated++;
            return;
        }
        if (counter < last) {
            outOfOrder++;
            notesOverflowed |= !late.add(t, counter, last);
            return;
        }
        if (kind == UpdateKind.CONFLATED) {
            conflated += counter - last - 1; // skipped on purpose by the topic's conflation, said so
        } else if (counter > last + 1) {
            lost += counter - last - 1;
            notesOverflowed |= !skipped.add(t, last + 1, counter - 1);
        }
        lastCounter[t] = counter;
        progressed += counter - last;
        long lastSeq = lastSequence[t];
        boolean live = kind == UpdateKind.UPDATE || kind == UpdateKind.CONFLATED;
        if (live && lastSeq != 0) {
            if (sequence <= lastSeq) {
                outOfOrder++; // a new value under an old sequence: the server reordered
            } else if (sequence > lastSeq + 1 && kind == UpdateKind.UPDATE) {
                sequenceGaps += sequence - lastSeq - 1;
            }
        }
        lastSequence[t] = live ? Math.max(sequence, lastSeq) : sequence;
        if (live) {
            deliveries++;
            deliveryGap.record(receivedNs, window);
            if (window.contains(intendedSendNs)) {
                // from the INTENDED send time: a publisher that fell behind its schedule adds its delay
                latencies.record(receivedNs - intendedSendNs);
                measuredDeliveries++;
                lastMeasuredReceiveNs = receivedNs;
            }
        }
        progressVisible.lazySet(progressed);
    }

    /**
     * The subscriber met something it cannot check honestly and stops: a failure, which makes the
     * run not clean, with {@code reason} as its error message (say what to do instead). What it
     * never received is counted as unchecked, not lost, and the drain no longer waits for it.
     */
    void fail(String reason) {
        failures++;
        errors++;
        lastError = reason;
        stopped = true;
    }

    /** Whether {@link #fail} was called. Any thread. */
    boolean stopped() {
        return stopped;
    }

    @Override
    public void onError(RingcastException error) {
        noteError(error.getMessage());
    }

    /** An error the client reported that does not stop the subscriber (counted, its message kept as the last). */
    void noteError(String message) {
        errors++;
        lastError = message;
    }

    /**
     * How many values, summed over topics, this subscriber has received in order so far: equal to
     * the sum of the final counters of its topics once it has everything. Any thread.
     */
    long progress() {
        return progressVisible.get();
    }

    /**
     * The totals, with every value still missing at the end counted as lost, except values whose
     * publish failed: those are counted as unacked (missed or late) instead; and except everything
     * a subscriber that {@link #fail}ed never received, which is unchecked. Only after the
     * subscriber was closed.
     *
     * @param finalCounters per topic index, the last counter published
     * @param matched       per topic index, whether the selector matches it
     * @param unacked       the values whose publish failed
     * @param endNs         when the run ended (System.nanoTime()): a subscriber still missing values
     *                      then has been pausing since its last delivery
     */
    SubscriberCounts counts(long[] finalCounters, boolean[] matched, UnackedValues unacked, long endNs) {
        long missing = 0;
        long unchecked = 0;
        long unackedMissed = 0;
        for (int t = 0; t < lastCounter.length; t++) {
            if (!matched[t] || finalCounters[t] <= lastCounter[t]) {
                continue;
            }
            if (stopped) {
                unchecked += finalCounters[t] - lastCounter[t]; // it stopped looking: not lost, not checked
                continue;
            }
            missing += finalCounters[t] - lastCounter[t];
            for (long c = lastCounter[t] + 1; !unacked.isEmpty() && c <= finalCounters[t]; c++) {
                unackedMissed += unacked.contains(t, c) ? 1 : 0;
            }
        }
        if (missing > 0) {
            deliveryGap.closeOpenGap(endNs, window);
        }
        long unackedLate = 0;
        if (!unacked.isEmpty() && !notesOverflowed) {
            Set<Long> lateUnacked = new HashSet<>();
            for (int i = 0; i < late.length; i += 3) {
                if (unacked.contains((int) late.values[i], late.values[i + 1])) {
                    unackedLate++;
                    lateUnacked.add(UnackedValues.key((int) late.values[i], late.values[i + 1]));
                }
            }
            for (int i = 0; i < skipped.length; i += 3) {
                int t = (int) skipped.values[i];
                for (long c = skipped.values[i + 1]; c <= skipped.values[i + 2]; c++) {
                    if (unacked.contains(t, c) && !lateUnacked.contains(UnackedValues.key(t, c))) {
                        unackedMissed++;
                    }
                }
            }
        }
        // an unacked value skipped and never received is missed; skipped and received late, it is late
        long lostAcked = lost + missing - unackedMissed - unackedLate;
        return new SubscriberCounts(index, lostAcked, duplicated, outOfOrder - unackedLate, snapshots, gapSnapshots,
                conflated, sequenceGaps, foreignValues, deliveries, measuredDeliveries, errors, lastError,
                unackedMissed, unackedLate, firstLateAcked(unacked), failures, unchecked, lostThenReceived(unacked));
    }

    /**
     * Acked values counted lost when a later value of their topic came first, that came after all:
     * each noted late value whose publish was acked and whose counter lies in a noted skip, once.
     * They stay lost and out of order (the rule above); this tells how many of the lost were late
     * rather than never received. A lower bound past {@link #MAX_NOTED} notes.
     */
    private long lostThenReceived(UnackedValues unacked) {
        if (late.length == 0 || skipped.length == 0) {
            return 0;
        }
        // the skips sorted by topic, then first counter: ranges of one topic never overlap (each starts past the last)
        int n = skipped.length / 3;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> skipped.values[3 * a] != skipped.values[3 * b]
                ? Long.compare(skipped.values[3 * a], skipped.values[3 * b])
                : Long.compare(skipped.values[3 * a + 1], skipped.values[3 * b + 1]));
        Set<Long> counted = new HashSet<>();
        long received = 0;
        for (int i = 0; i < late.length; i += 3) {
            int t = (int) late.values[i];
            long c = late.values[i + 1];
            if (!unacked.contains(t, c) && inSkip(order, t, c) && counted.add(UnackedValues.key(t, c))) {
                received++;
            }
        }
        return received;
    }

    /** Whether counter {@code c} of topic {@code t} lies in a noted skip; {@code order} sorts the skips. */
    private boolean inSkip(Integer[] order, int t, long c) {
        int lo = 0;
        int hi = order.length - 1;
        while (lo <= hi) { // the last skip that starts at or before (t, c)
            int mid = (lo + hi) >>> 1;
            int k = 3 * order[mid];
            if (skipped.values[k] < t || skipped.values[k] == t && skipped.values[k + 1] <= c) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (hi < 0) {
            return false;
        }
        int k = 3 * order[hi];
        return skipped.values[k] == t && c <= skipped.values[k + 2];
    }

    /** The longest pause between two deliveries to this subscriber. Only after {@link #counts}. */
    LongestGap deliveryGap() {
        return deliveryGap;
    }

    /** A growing list of (a, b, c) triples, at most {@link #MAX_NOTED}; event-loop thread only, as its tally. */
    private static final class Triples {
        long[] values = new long[0];
        /** Used slots of {@link #values}: three per triple. */
        int length;

        /** Adds a triple; false, adding nothing, when {@link #MAX_NOTED} are held already. */
        boolean add(long a, long b, long c) {
            if (length / 3 >= MAX_NOTED) {
                return false;
            }
            if (length + 3 > values.length) {
                values = Arrays.copyOf(values, Math.max(48, values.length * 2));
            }
            values[length++] = a;
            values[length++] = b;
            values[length++] = c;
            return true;
        }
    }

    /** The first value noted late whose publish was acked, said for a reader ("topic 7: 12 after 15"), or null. */
    private String firstLateAcked(UnackedValues unacked) {
        for (int i = 0; i < late.length; i += 3) {
            if (!unacked.contains((int) late.values[i], late.values[i + 1])) {
                return "topic " + late.values[i] + ": " + late.values[i + 1] + " after " + late.values[i + 2];
            }
        }
        return null;
    }

    /** System.nanoTime() of the last measured delivery, 0 if none. Only after the subscriber was closed. */
    long lastMeasuredReceiveNs() {
        return lastMeasuredReceiveNs;
    }
}
