package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import org.junit.jupiter.api.Test;

/** The per-subscriber checks, fed by hand: each kind of violation is seen, and a clean stream has none. */
class SubscriberTallyTest {
    static final int RUN = 7;
    static final int TOPICS = 4;

    record FakeUpdate(String topic, long sequence, byte[] value, UpdateKind kind) implements Update {
    }

    final MeasurementWindow window = new MeasurementWindow();
    final LatencyRecorders latencies = new LatencyRecorders();
    final SubscriberTally tally = new SubscriberTally(3, RUN, TOPICS, window, latencies);

    static Update update(int topic, long counter, long sequence) {
        return update(topic, counter, sequence, UpdateKind.UPDATE, 0);
    }

    static Update update(int topic, long counter, long sequence, UpdateKind kind, long intendedNs) {
        return new FakeUpdate("bench/t000" + topic, sequence,
                PayloadCodec.encode(64, Padding.ZEROS, RUN, 0, topic, counter, intendedNs), kind);
    }

    final UnackedValues unacked = new UnackedValues();

    SubscriberCounts counts(long... finalCounters) {
        boolean[] matched = new boolean[TOPICS];
        java.util.Arrays.fill(matched, true);
        long[] finals = new long[TOPICS];
        System.arraycopy(finalCounters, 0, finals, 0, finalCounters.length);
        return tally.counts(finals, matched, unacked, System.nanoTime());
    }

    @Test
    void inOrderValuesOnSeveralTopicsAreClean() {
        tally.onUpdate(update(0, 1, 11));
        tally.onUpdate(update(1, 1, 1));
        tally.onUpdate(update(0, 2, 12));
        tally.onUpdate(update(1, 2, 2));
        SubscriberCounts c = counts(2, 2);
        assertThat(c.violations()).isZero();
        assertThat(c.deliveries()).isEqualTo(4);
        assertThat(tally.progress()).isEqualTo(4);
    }

    @Test
    void aSkippedCounterIsLost() {
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 4, 4));
        assertThat(counts(4).lost()).isEqualTo(2);
    }

    @Test
    void theSameCounterTwiceIsADuplicate() {
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 1, 1));
        SubscriberCounts c = counts(1);
        assertThat(c.duplicated()).isEqualTo(1);
        assertThat(c.lost()).isZero();
        assertThat(c.outOfOrder()).isZero();
    }

    @Test
    void anOlderCounterOrANewValueUnderAnOldSequenceIsOutOfOrder() {
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 3, 3)); // 2 skipped: lost when 3 arrives
        tally.onUpdate(update(0, 2, 2)); // and then late
        tally.onUpdate(update(1, 1, 5));
        tally.onUpdate(update(1, 2, 4)); // the server gave a newer value an older sequence
        SubscriberCounts c = counts(3, 2);
        assertThat(c.outOfOrder()).isEqualTo(2);
        assertThat(c.lost()).isEqualTo(1);
    }

    @Test
    void anAckedValueThatCameAfterALaterOneIsLostAndOutOfOrderAndSaidToHaveCome() {
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 4, 2)); // 2 and 3 skipped: lost when 4 arrives
        tally.onUpdate(update(0, 2, 3)); // 2 comes after all: out of order
        tally.onUpdate(update(0, 2, 4)); // and again: out of order again, but it came once
        tally.onUpdate(update(1, 3, 1)); // 1 and 2 of topic 1 skipped, and never come
        SubscriberCounts c = counts(4, 3);
        assertThat(c.lost()).isEqualTo(4);
        assertThat(c.outOfOrder()).isEqualTo(2);
        assertThat(c.lostThenReceived()).isEqualTo(1);
    }

    @Test
    void anUnackedValueThatCameLateIsNotSaidToHaveBeenLost() {
        unacked.add(0, 2);
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 3, 2));
        tally.onUpdate(update(0, 2, 3));
        SubscriberCounts c = counts(3);
        assertThat(c.lost()).isZero();
        assertThat(c.unackedLate()).isEqualTo(1);
        assertThat(c.lostThenReceived()).isZero();
    }

    @Test
    void whatIsMissingAtTheEndIsLost() {
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 2, 2));
        SubscriberCounts c = counts(5, 3); // 3 more of topic 0, all 3 of topic 1 never came
        assertThat(c.lost()).isEqualTo(6);
    }

    @Test
    void valuesOfAnotherRunAreIgnoredAndSnapshotsCountedApart() {
        tally.onUpdate(new FakeUpdate("bench/t0000", 9, PayloadCodec.encode(64, Padding.ZEROS, RUN + 1, 0, 0, 9, 0),
                UpdateKind.SNAPSHOT));
        tally.onUpdate(new FakeUpdate("bench/t0000", 9, new byte[3], UpdateKind.SNAPSHOT));
        tally.onUpdate(update(0, 1, 10));
        tally.onUpdate(update(0, 3, 12, UpdateKind.SNAPSHOT_AFTER_GAP, 0));
        SubscriberCounts c = counts(3);
        assertThat(c.foreignValues()).isEqualTo(2);
        assertThat(c.gapSnapshots()).isEqualTo(1);
        assertThat(c.lost()).isEqualTo(1);
        assertThat(c.deliveries()).isEqualTo(1);
    }

    @Test
    void onlyUpdatesMeantToBeSentInsideTheWindowAreMeasured() {
        long now = System.nanoTime();
        window.open(now - 1_000_000_000L, now + 1_000_000_000L);
        tally.onUpdate(update(0, 1, 1, UpdateKind.UPDATE, now - 2_000_000_000L)); // warm-up
        tally.onUpdate(update(0, 2, 2, UpdateKind.UPDATE, now - 5_000_000L));     // 5 ms late at least
        SubscriberCounts c = counts(2);
        assertThat(c.deliveries()).isEqualTo(2);
        assertThat(c.measuredDeliveries()).isEqualTo(1);
        var h = latencies.drain();
        assertThat(h.getTotalCount()).isEqualTo(1);
        assertThat(h.getMinValue()).isGreaterThanOrEqualTo(4_990_000L);
    }

    @Test
    void aFailedSubscriberStopsAndWhatItNeverReceivedIsUncheckedNotLost() {
        tally.onValue(0, 1, 1, UpdateKind.UPDATE, System.nanoTime(), 0);
        tally.onValue(1, 1, 2, UpdateKind.UPDATE, System.nanoTime(), 0);
        assertThat(tally.stopped()).isFalse();
        tally.fail("lean subscriber 3: UPDATE #3 of bench/t0000 is a delta; use --subscriber-client java");
        assertThat(tally.stopped()).isTrue();
        SubscriberCounts c = counts(4, 2);
        assertThat(c.failures()).isEqualTo(1);
        assertThat(c.unchecked()).isEqualTo(3 + 1);
        assertThat(c.lost()).isZero();
        assertThat(c.violations()).isZero();
        assertThat(c.deliveries()).isEqualTo(2);
        assertThat(c.failure()).contains("--subscriber-client java");
        assertThat(tally.deliveryGap().longestNs()).as("no pause: it stopped looking").isZero();
    }

    @Test
    void conflatedValuesSkipCountersOnPurposeAndForeignOnesAreIgnored() {
        tally.onValue(0, 1, 1, UpdateKind.UPDATE, System.nanoTime(), 0);
        tally.onValue(0, 5, 9, UpdateKind.CONFLATED, System.nanoTime(), 0);
        tally.onValue(TOPICS, 1, 1, UpdateKind.UPDATE, System.nanoTime(), 0); // a topic index past the run's
        tally.foreignValue();
        SubscriberCounts c = counts(5);
        assertThat(c.conflated()).isEqualTo(3);
        assertThat(c.lost()).isZero();
        assertThat(c.sequenceGaps()).isZero();
        assertThat(c.foreignValues()).isEqualTo(2);
        assertThat(c.failures()).isZero();
        assertThat(c.failure()).isNull();
    }

    @Test
    void valuesWhosePublishFailedAreMissedOrLateNotLostOrOutOfOrder() {
        unacked.add(0, 2); // failed, never applied
        unacked.add(0, 3); // failed, applied after 4
        unacked.add(1, 3); // failed, the last of its topic, never applied
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 4, 2));
        tally.onUpdate(update(0, 3, 3));
        tally.onUpdate(update(1, 1, 1));
        tally.onUpdate(update(1, 2, 2));
        SubscriberCounts c = counts(4, 3);
        assertThat(c.lost()).isZero();
        assertThat(c.outOfOrder()).isZero();
        assertThat(c.unackedMissed()).isEqualTo(2);
        assertThat(c.unackedLate()).isEqualTo(1);
    }

    @Test
    void anAckedValueSkippedIsLostBesideUnackedOnes() {
        unacked.add(0, 2);
        tally.onUpdate(update(0, 1, 1));
        tally.onUpdate(update(0, 4, 2)); // 2 failed, 3 was acked: lost
        tally.onUpdate(update(0, 3, 3)); // and arrives late: out of order
        SubscriberCounts c = counts(4);
        assertThat(c.lost()).isEqualTo(1);
        assertThat(c.outOfOrder()).isEqualTo(1);
        assertThat(c.unackedMissed()).isEqualTo(1);
        assertThat(c.firstLate()).isEqualTo("topic 0: 3 after 4");
    }
}
