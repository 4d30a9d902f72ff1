package io.ringcast.benchmark.load;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What one subscriber connection saw over a whole run, warm-up included.
 *
 * @param subscriber         the subscriber's index, 0-based
 * @param lost               acked values never received: skipped counters plus what was missing at the end,
 *                           less the unacked ones
 * @param duplicated         values received twice
 * @param outOfOrder         values older than one already received, or new values under an old server sequence
 * @param snapshots          {@code SNAPSHOT}s of this run's values (only after a reconnect)
 * @param gapSnapshots       {@code SNAPSHOT_AFTER_GAP}s: the server could not replay what was missed
 * @param conflated          values skipped by conflation (announced by a {@code CONFLATED} update), not lost
 * @param sequenceGaps       server sequences skipped between two in-order values (someone else published)
 * @param foreignValues      values not written by this run (earlier runs' snapshots), ignored
 * @param deliveries         in-order {@code UPDATE}s of this run
 * @param measuredDeliveries of those, the ones whose intended send time lies in the measured window
 * @param errors             {@code UpdateListener.onError} calls (refused subscription, fatal session error),
 *                           and failures
 * @param lastError          the last error's or failure's message, or null
 * @param unackedMissed      values whose publish failed ({@link UnackedValues}) and that never arrived: not lost
 * @param unackedLate        values whose publish failed and that arrived after a later value: not out of order
 * @param firstLate          the first acked value that arrived after a later one of its topic ("topic 7: 12 after
 *                           15"), or null: where to start looking
 * @param failures           what made the subscriber stop because it could not check on honestly (a lean
 *                           subscriber given a delta, or losing its connection): any makes the run not clean
 * @param unchecked          values a subscriber that failed never received: not lost, not checked either
 * @param lostThenReceived   of {@code lost}, the acked values that came after a later value of their topic:
 *                           counted lost when it came, and out of order when they did; {@code lost} less this
 *                           is what never came
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record SubscriberCounts(int subscriber, long lost, long duplicated, long outOfOrder, long snapshots,
                        long gapSnapshots, long conflated, long sequenceGaps, long foreignValues, long deliveries,
                        long measuredDeliveries, long errors, String lastError, long unackedMissed,
                        long unackedLate, String firstLate, long failures, long unchecked, long lostThenReceived) {

    /** Lost, duplicated and out-of-order values together: zero for a clean subscriber. */
    long violations() {
        return lost + duplicated + outOfOrder;
    }

    /** Why the subscriber failed ({@code lastError} when {@code failures > 0}), or null. */
    String failure() {
        return failures > 0 ? lastError : null;
    }
}
