package io.ringcast.benchmark.load;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * End-to-end latencies of one run, in nanoseconds, one {@link SingleWriterRecorder} per recording
 * thread. Listeners of every subscriber run on the few event-loop threads of the shared group, so
 * a recorder per thread (not per subscriber) keeps 1,000 subscribers to a few histograms and no
 * two threads ever write the same one.
 *
 * <p>Threads: {@link #record} from any thread (each gets its own recorder); {@link #drain} from
 * one thread at a time, at any moment (the recorders' interval swap is safe against writers).
 */
final class LatencyRecorders {
    /** Values below 1 µs share the first bucket: a network round trip is never that short. */
    static final long LOWEST_DISCERNIBLE_NS = TimeUnit.MICROSECONDS.toNanos(1);
    /** Latencies above a minute are recorded as a minute. */
    static final long HIGHEST_TRACKABLE_NS = TimeUnit.SECONDS.toNanos(60);
    /** Three significant digits: 0.1% resolution at every magnitude. */
    static final int SIGNIFICANT_DIGITS = 3;

    private final CopyOnWriteArrayList<SingleWriterRecorder> recorders = new CopyOnWriteArrayList<>();
    private final ThreadLocal<SingleWriterRecorder> mine = ThreadLocal.withInitial(this::newRecorder);

    /** Records one latency on the calling thread's recorder. */
    void record(long latencyNs) {
        mine.get().recordValue(Math.max(1, Math.min(latencyNs, HIGHEST_TRACKABLE_NS)));
    }

    /** Everything recorded since the previous drain, merged. */
    Histogram drain() {
        Histogram total = newHistogram();
        for (SingleWriterRecorder r : recorders) {
            total.add(r.getIntervalHistogram());
        }
        return total;
    }

    static Histogram newHistogram() {
        return new Histogram(LOWEST_DISCERNIBLE_NS, HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS);
    }

    private SingleWriterRecorder newRecorder() {
        SingleWriterRecorder r = new SingleWriterRecorder(LOWEST_DISCERNIBLE_NS, HIGHEST_TRACKABLE_NS,
                SIGNIFICANT_DIGITS);
        recorders.add(r);
        return r;
    }
}
