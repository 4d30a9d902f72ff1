package io.ringcast.cluster.internal;

import static io.ringcast.cluster.internal.TopicLogTesting.apply;
import static io.ringcast.cluster.internal.TopicLogTesting.restore;
import static io.ringcast.cluster.internal.TopicLogTesting.snapshot;
import static io.ringcast.cluster.internal.TopicLogTesting.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLogTesting.Applied;
import io.ringcast.cluster.internal.TopicLogTesting.RecordingSink;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublishingSessions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The fault suite's bridge run of 2026-11-30 01:49 (fault-bridge-20261130-014903), replayed at the
 * log: publisher-2's publishes #2910-3004 were applied at sequences ~290-303 and again at ~430.
 *
 * <p>What its nodes' logs hold (all five the same, decoded): session 3 (node 5) put #2910-3004 in
 * the log (indexes 5170-5381), then #3005-3504 (6330-6331); node 5 was cut off from the leader, so
 * it answered the first as timed out (AnswerPoller's apply wait) and acked the later ones once it
 * caught up. Session 4 (node 1) sent #2910-3004 again, answered ALREADY_APPLIED in the log (7130-7132),
 * then new publishes #3505-4409; node 1 lagged behind the leader too, so the first entries timed out
 * again and the later ones were acked. Session 5 (node 2) sent #2910-3004 again (7754-7756): by then
 * the publisher's ledger had recorded 500 + 905 publishes after them and forgot them (its last
 * 1,024), and being a ledger that vouches, it applied them a second time.
 *
 * <p>The client kept the protocol's rule throughout: at most 1,024 publishes unacked (at most 1,000
 * here). The ledger's window holds for it only while acks come in the order of the publishes.
 */
class TopicLogRetryWindowTest {
    private final RecordingSink sink = new RecordingSink();
    private final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 100_000, 16); // the real window, 1,024

    private static LoggedPublish sent(long connection, long place, int n, boolean republish) {
        return new LoggedPublish("anonymous", 0x358b3491b05910b7L, PublishingSessions.ordered(connection), place,
                (1 << 30) + n, republish, "faults/p/t" + (n % 30), utf8("publisher-2@node-3#" + n));
    }

    /** Publishes #from to #to (inclusive) of the session's places from {@code firstPlace}, one entry each. */
    private List<PublishResult> send(long connection, long firstPlace, int from, int to, boolean republish) {
        List<PublishResult> results = new ArrayList<>();
        long place = firstPlace;
        for (int n = from; n <= to; n++) {
            results.addAll(apply(log, sent(connection, place++, n, republish)).results());
        }
        return results;
    }

    private void theBridgeRunUpToItsFifthSession() {
        send(3, 1, 2800, 2909, false);  // the third session's earlier publishes, acked
        send(3, 111, 2910, 3004, false); // committed; the node could not apply them in time: timed out
        send(3, 206, 3005, 3504, false); // committed and acked once the node caught up
        // the fourth session: the 95 again first (unacked: 95), then new ones while acks come
        assertThat(send(4, 1, 2910, 3004, true)).allMatch(r -> r.outcome() == PublishResult.Outcome.ALREADY_APPLIED);
        send(4, 96, 3505, 4409, false); // unacked at most 95 + 905 = 1,000 of them: the rule kept
        // the fourth session's first entries timed out on its node as well; the later ones were acked
    }

    @Test
    void aPublishTheClientStillHoldsUnackedIsRecognisedAfterItsLaterPublishesWereAcked() {
        theBridgeRunUpToItsFifthSession();

        List<PublishResult> fifth = send(5, 1, 2910, 3004, true);

        assertThat(fifth).as("the fifth session's REPUBLISH of #2910-3004")
                .allMatch(r -> r.outcome() == PublishResult.Outcome.ALREADY_APPLIED);
        Set<String> values = new HashSet<>();
        assertThat(sink.applied).extracting(Applied::value).allMatch(values::add, "applied once");
    }

    @Test
    void theLedgerOfASnapshotTakenMeanwhileRecognisesThemAlike() throws Exception {
        theBridgeRunUpToItsFifthSession();
        TopicLog restored = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100_000, 16);
        restore(restored, snapshot(log));

        PublishResult first = apply(restored, sent(5, 1, 2910, true)).results().get(0);

        assertThat(first.outcome()).isEqualTo(PublishResult.Outcome.ALREADY_APPLIED);
    }

    @Test
    void aCopyAnsweredFromTheLedgerBecomesItsNewestEntryInAWrappedRingAndInTheSnapshot() throws Exception {
        TopicLog remembersFour = new TopicLog(sink, SnapshotContent.NONE, 100, 16, 4);
        for (int id = 1; id <= 6; id++) { // the ring wrapped: 3, 4, 5, 6
            apply(remembersFour, TopicLogTesting.publish("ann", 7, id, "a", "v" + id));
        }
        assertThat(apply(remembersFour, TopicLogTesting.republish("ann", 7, 3, "a", "v3")).results())
                .containsExactly(PublishResult.alreadyApplied(3)); // 4, 5, 6, 3
        for (int id = 7; id <= 9; id++) { // 3, 7, 8, 9
            apply(remembersFour, TopicLogTesting.publish("ann", 7, id, "a", "v" + id));
        }
        TopicLog restored = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, 16, 4);
        restore(restored, snapshot(remembersFour));

        for (TopicLog l : List.of(remembersFour, restored)) {
            assertThat(apply(l, TopicLogTesting.republish("ann", 7, 3, "a", "v3")).results())
                    .containsExactly(PublishResult.alreadyApplied(3));
            assertThat(apply(l, TopicLogTesting.republish("ann", 7, 9, "a", "v9")).results())
                    .containsExactly(PublishResult.alreadyApplied(9));
            assertThat(apply(l, TopicLogTesting.republish("ann", 7, 6, "a", "v6")).results())
                    .as("forgotten, and the ledger vouches").containsExactly(PublishResult.applied(10));
        }
    }
}
