package io.ringcast.benchmark.load;

/**
 * The longest time between two consecutive events of one stream: the acks of one publisher, or
 * the deliveries to one subscriber. Under a steady load that is a millisecond or so; when a
 * cluster's leader dies it is the pause its publishers and subscribers saw, from the last event
 * before the death to the first after the recovery. Only gaps that end at or after the measured
 * window's start count (the warm-up's connection set-up is not a pause).
 *
 * <p>Threads: single writer. {@link #record} from one thread at a time (a subscriber's event loop;
 * a publisher's completions under its own lock); the getters after the writer is done (a thread
 * join or the client's close orders the writes before them).
 */
final class LongestGap {
    /** {@link #record}'s previous event, 0 before the first. */
    private long lastNs;
    private long longestNs;
    private long longestEndNs;

    /** An event at {@code nowNs} (System.nanoTime()). */
    void record(long nowNs, MeasurementWindow window) {
        long last = lastNs;
        lastNs = nowNs;
        if (last != 0 && nowNs - last > longestNs && nowNs >= window.fromNs()) {
            longestNs = nowNs - last;
            longestEndNs = nowNs;
        }
    }

    /**
     * Closes a gap still open at {@code endNs}: when the stream never resumed (values still missing,
     * publishes never answered), the time since its last event counts as a gap ending then.
     */
    void closeOpenGap(long endNs, MeasurementWindow window) {
        if (lastNs != 0 && endNs > lastNs) {
            long last = lastNs;
            record(endNs, window);
            lastNs = last;
        }
    }

    /** The longest gap in ns, 0 when none ended inside the window. */
    long longestNs() {
        return longestNs;
    }

    /** System.nanoTime() at the end of the longest gap (0 when none). */
    long longestEndNs() {
        return longestEndNs;
    }
}
