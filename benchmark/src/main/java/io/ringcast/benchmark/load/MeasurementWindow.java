package io.ringcast.benchmark.load;

/**
 * The intended-send-time interval whose deliveries count for latency and throughput: after the
 * warm-up, before the end. Written once by the run's control thread before the publishers start,
 * read by every listener (volatile: a plain load on x86, and the listeners' threads exist before
 * the window is known). Until {@link #open} nothing is inside.
 */
final class MeasurementWindow {
    private volatile long fromNs = Long.MAX_VALUE;
    private volatile long untilNs = Long.MIN_VALUE;

    /** Control thread, once, before the first publish. */
    void open(long fromNs, long untilNs) {
        assert fromNs <= untilNs : fromNs + " > " + untilNs;
        this.untilNs = untilNs;
        this.fromNs = fromNs;
    }

    /** Whether a value meant to be sent at {@code intendedSendNs} is measured. */
    boolean contains(long intendedSendNs) {
        return intendedSendNs >= fromNs && intendedSendNs < untilNs;
    }

    long fromNs() {
        return fromNs;
    }

    long untilNs() {
        return untilNs;
    }
}
