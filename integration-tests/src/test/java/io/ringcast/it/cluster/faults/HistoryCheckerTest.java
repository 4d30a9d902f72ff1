package io.ringcast.it.cluster.faults;

import static io.ringcast.client.UpdateKind.SNAPSHOT;
import static io.ringcast.client.UpdateKind.SNAPSHOT_AFTER_GAP;
import static io.ringcast.client.UpdateKind.UPDATE;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.client.UpdateKind;
import io.ringcast.it.cluster.faults.History.Attempt;
import io.ringcast.it.cluster.faults.History.Delivery;
import io.ringcast.it.cluster.faults.History.Outcome;
import io.ringcast.it.cluster.faults.History.TopicValue;
import io.ringcast.it.cluster.faults.HistoryChecker.Kind;
import io.ringcast.it.cluster.faults.HistoryChecker.Verdict;
import org.junit.jupiter.api.Test;

import java.util.EnumMap;
import java.util.Map;

/** The checker on hand-made histories: a clean one passes, each kind of violation is found and counted. */
class HistoryCheckerTest {
    /** Two subscribers, topic t acked 1..3 with a, b, c and delivered to both; equal final states. */
    private static History clean() {
        History h = new History();
        h.subscriber("s1");
        h.subscriber("s2");
        ack(h, "t", 1, "a");
        ack(h, "t", 2, "b");
        ack(h, "t", 3, "c");
        for (String s : new String[] {"s1", "s2"}) {
            deliver(h, s, "t", 1, "a", UPDATE);
            deliver(h, s, "t", 2, "b", UPDATE);
            deliver(h, s, "t", 3, "c", UPDATE);
        }
        h.finalState("node-1", Map.of("t", new TopicValue(3, "c")));
        h.finalState("node-2", Map.of("t", new TopicValue(3, "c")));
        return h;
    }

    @Test
    void aCleanHistoryPasses() {
        Verdict v = HistoryChecker.check(clean());
        assertThat(v.ok()).as(v.toString()).isTrue();
    }

    @Test
    void refusedAndUnansweredAttemptsPromiseNothing() {
        History h = clean();
        h.attempt(new Attempt("p", "t", "x", 0, 1, Outcome.REFUSED, 0, "NO_MAJORITY"));
        h.attempt(new Attempt("p", "t", "y", 0, 1, Outcome.UNANSWERED, 0, null));
        assertThat(HistoryChecker.check(h).ok()).isTrue();
    }

    @Test
    void anAckedUpdateOneSubscriberNeverGotIsLost() {
        History h = clean();
        ack(h, "t", 4, "d");
        deliver(h, "s1", "t", 4, "d", UPDATE);
        h.finalState("node-1", Map.of("t", new TopicValue(4, "d")));
        h.finalState("node-2", Map.of("t", new TopicValue(4, "d")));
        assertOnly(HistoryChecker.check(h), Kind.LOST, 1);
    }

    @Test
    void anUpdateOlderThanTheSubscriptionsOpeningSnapshotIsCoveredButAGapSnapshotCoversNothing() {
        History h = new History();
        h.subscriber("late");
        ack(h, "t", 1, "a");
        ack(h, "t", 2, "b");
        deliver(h, "late", "t", 2, "b", SNAPSHOT);
        assertThat(HistoryChecker.check(h).ok()).isTrue();

        History gap = new History();
        gap.subscriber("s");
        ack(gap, "t", 1, "a");
        ack(gap, "t", 2, "b");
        ack(gap, "t", 3, "c");
        deliver(gap, "s", "t", 1, "a", UPDATE);
        deliver(gap, "s", "t", 3, "c", SNAPSHOT_AFTER_GAP);
        Verdict v = HistoryChecker.check(gap);
        assertThat(v.count(Kind.GAP)).isEqualTo(1);
        assertThat(v.count(Kind.LOST)).as("2 = b skipped by the gap").isEqualTo(1);
    }

    @Test
    void aFinalStateOlderThanTheNewestAckIsLost() {
        History h = clean();
        h.finalState("node-1", Map.of("t", new TopicValue(2, "b")));
        h.finalState("node-2", Map.of("t", new TopicValue(2, "b")));
        assertOnly(HistoryChecker.check(h), Kind.LOST, 2);
    }

    @Test
    void aSequenceWithTwoValuesIsFound() {
        History h = clean();
        // s2 receives another value at 2: two values there, and s2 never got the acked b
        h = rebuild(h, "s2", 2, "z");
        Verdict v = HistoryChecker.check(h);
        assertThat(v.count(Kind.TWO_VALUES)).isEqualTo(1);
        assertThat(v.count(Kind.LOST)).isEqualTo(1);
        assertThat(v.count(Kind.APPLIED_TWICE)).isZero();
    }

    @Test
    void twoAcksOfOneSequenceWithDifferentValuesAreFound() {
        History h = clean();
        ack(h, "t", 3, "c2"); // the other side of a split acked 3 too; nobody received it
        Verdict v = HistoryChecker.check(h);
        assertThat(v.count(Kind.TWO_VALUES)).isEqualTo(1);
        assertThat(v.count(Kind.LOST)).isEqualTo(1);
    }

    @Test
    void aPublishAppliedTwiceIsFound() {
        History h = clean();
        ack(h, "t", 4, "c"); // c applied again as 4 (a retry not recognised)
        for (String s : new String[] {"s1", "s2"}) {
            deliver(h, s, "t", 4, "c", UPDATE);
        }
        h.finalState("node-1", Map.of("t", new TopicValue(4, "c")));
        h.finalState("node-2", Map.of("t", new TopicValue(4, "c")));
        assertOnly(HistoryChecker.check(h), Kind.APPLIED_TWICE, 1);
    }

    @Test
    void aStepBackOrARepeatedUpdateIsAReorderButARepeatedSnapshotIsNot() {
        History h = clean();
        deliver(h, "s1", "t", 3, "c", SNAPSHOT); // a re-subscription's snapshot of the current value
        assertThat(HistoryChecker.check(h).ok()).isTrue();
        deliver(h, "s1", "t", 2, "b", UPDATE);
        deliver(h, "s2", "t", 3, "c", UPDATE);
        assertOnly(HistoryChecker.check(h), Kind.REORDER, 2);
    }

    @Test
    void skippedSequencesAndGapKindsAreGaps() {
        History h = new History();
        h.subscriber("s");
        deliver(h, "s", "t", 1, "a", UPDATE);
        deliver(h, "s", "t", 3, "c", UPDATE); // 2 skipped
        deliver(h, "s", "t", 5, "e", SNAPSHOT); // a plain snapshot skipping 4 after the stream began
        deliver(h, "s", "u", 2, "x", UPDATE); // a stream starting above 1 without a snapshot
        deliver(h, "s", "v", 1, "", UpdateKind.GAP_WITHOUT_VALUE);
        assertOnly(HistoryChecker.check(h), Kind.GAP, 4);
    }

    @Test
    void differingOrUnreadableFinalStatesAreFound() {
        History h = clean();
        h.finalState("node-3", Map.of("t", new TopicValue(3, "c"), "extra", new TopicValue(1, "q")));
        h.finalState("node-4", null);
        assertOnly(HistoryChecker.check(h), Kind.FINAL_STATES_DIFFER, 2);
    }

    private static void assertOnly(Verdict v, Kind kind, int count) {
        Map<Kind, Integer> expected = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            expected.put(k, k == kind ? count : 0);
        }
        assertThat(v.counts()).as(v.examples().toString()).isEqualTo(expected);
    }

    /** The history with one subscriber's delivery of {@code t@seq} carrying {@code value} instead. */
    private static History rebuild(History h, String subscriber, long seq, String value) {
        History copy = new History();
        h.subscribers().forEach(copy::subscriber);
        h.attempts().forEach(copy::attempt);
        for (Delivery d : h.deliveries()) {
            copy.delivery(d.subscriber().equals(subscriber) && d.sequence() == seq
                    ? new Delivery(d.subscriber(), d.topic(), seq, value, d.kind(), d.atNs()) : d);
        }
        h.finalStates().forEach(copy::finalState);
        return copy;
    }

    private static void ack(History h, String topic, long seq, String value) {
        h.attempt(new Attempt("p", topic, value, 0, 1, Outcome.ACKED, seq, null));
    }

    private static void deliver(History h, String subscriber, String topic, long seq, String value, UpdateKind kind) {
        h.delivery(new Delivery(subscriber, topic, seq, value, kind, 0));
    }
}
