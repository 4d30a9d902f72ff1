package io.ringcast.cluster.internal;

import static io.ringcast.cluster.internal.TopicLogTesting.apply;
import static io.ringcast.cluster.internal.TopicLogTesting.applyOne;
import static io.ringcast.cluster.internal.TopicLogTesting.publish;
import static io.ringcast.cluster.internal.TopicLogTesting.republish;
import static io.ringcast.cluster.internal.TopicLogTesting.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLogTesting.Applied;
import io.ringcast.cluster.internal.TopicLogTesting.RecordingSink;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublishingSessions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/** The replicated duplicate ledger, as {@link TopicLog} uses it. */
class TopicLogLedgerTest {
    private final RecordingSink sink = new RecordingSink();
    private final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 100_000, 3);

    @Test
    void aPublishSentAgainIsNotAppliedTwiceAndGetsItsFirstSequence() {
        apply(log, publish("ann", 7, 1, "a", "x"), publish("ann", 7, 2, "a", "y"));

        assertThat(applyOne(log, republish("ann", 7, 1, "a", "x"))).isEqualTo(PublishResult.alreadyApplied(1));
        assertThat(applyOne(log, republish("ann", 7, 2, "a", "y"))).isEqualTo(PublishResult.alreadyApplied(2));
        // a plain publish carried twice (the engine, or a node's retry): the same
        assertThat(applyOne(log, publish("ann", 7, 2, "a", "y"))).isEqualTo(PublishResult.alreadyApplied(2));
        // twice in one entry
        assertThat(apply(log, publish("ann", 7, 3, "a", "z"), republish("ann", 7, 3, "a", "z")).results())
                .containsExactly(PublishResult.applied(3), PublishResult.alreadyApplied(3));
        assertThat(sink.applied).containsExactly(new Applied("a", 1, "x"), new Applied("a", 2, "y"),
                new Applied("a", 3, "z"));
    }

    @Test
    void aCorrelationIdFirstPublishedToAnotherTopicIsAConflict() {
        applyOne(log, publish("ann", 7, 1, "a", "x"));
        assertThat(applyOne(log, republish("ann", 7, 1, "b", "x"))).isEqualTo(PublishResult.conflict("a"));
        assertThat(applyOne(log, publish("ann", 7, 1, "b", "x"))).isEqualTo(PublishResult.conflict("a"));
        assertThat(log.topics()).isEqualTo(1);
        assertThat(sink.applied).hasSize(1);
    }

    @Test
    void publishersAreTheirPrincipalAndIdTogether() {
        applyOne(log, publish("ann", 7, 1, "a", "x"));
        // another principal with the same id, and the same principal with another id: ledgers of their own
        assertThat(applyOne(log, publish("bob", 7, 1, "b", "x"))).isEqualTo(PublishResult.applied(1));
        assertThat(applyOne(log, publish("ann", 8, 1, "a", "x"))).isEqualTo(PublishResult.applied(2));
        // without a publisher id, nothing is recognised: every publish is applied
        assertThat(applyOne(log, publish("ann", 0, 1, "a", "x"))).isEqualTo(PublishResult.applied(3));
        assertThat(applyOne(log, republish("ann", 0, 1, "a", "x"))).isEqualTo(PublishResult.applied(4));
        assertThat(log.publishers()).isEqualTo(3);
    }

    @Test
    void aRepublishOfANewPublisherIsAppliedWhileNothingOfItsPrincipalWasForgotten() {
        // the ledger is made now and none of ann's was ever lost: nothing of this publisher was applied
        assertThat(applyOne(log, republish("ann", 7, 5, "a", "x"))).isEqualTo(PublishResult.applied(1));
        assertThat(applyOne(log, republish("ann", 7, 5, "a", "x"))).isEqualTo(PublishResult.alreadyApplied(1));
    }

    @Test
    void aRepublishWhoseLedgerWasForgottenHasAnUnknownOutcomeAndIsNotApplied() {
        applyOne(log, publish("ann", 1, 10, "a", "x"));
        applyOne(log, publish("ann", 2, 10, "b", "x"));
        applyOne(log, publish("ann", 3, 10, "c", "x"));
        applyOne(log, publish("ann", 2, 11, "b", "y")); // publisher 2 used: 1 is now the least recently used
        applyOne(log, publish("bob", 4, 10, "d", "x")); // a fourth ledger: 1 is forgotten
        assertThat(log.publishers()).isEqualTo(3);
        assertThat(log.forgottenPublishers()).isEqualTo(1);
        int applied = sink.applied.size();

        assertThat(applyOne(log, republish("ann", 1, 10, "a", "x"))).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(applyOne(log, republish("ann", 1, 10, "a", "x"))).as("the same answer again")
                .isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(sink.applied).hasSize(applied);
        assertThat(log.lastSequence("a")).isEqualTo(1);
        // a new publisher of ann cannot vouch (a ledger of ann's was forgotten); a new one of bob can
        assertThat(applyOne(log, republish("ann", 9, 1, "a", "x"))).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(applyOne(log, republish("bob", 9, 1, "e", "x"))).isEqualTo(PublishResult.applied(1));
    }

    private static LoggedPublish inSession(long session, long place, int correlationId, boolean republish,
                                           String value) {
        return new LoggedPublish("ann", 1, session, place, correlationId, republish, "a", utf8(value));
    }

    @Test
    void aForgottenLedgerVouchesAgainOnceItRecordsANewPublishOfASessionItSawFromItsStart() {
        long first = PublishingSessions.ordered(1);
        long second = PublishingSessions.ordered(2);
        assertThat(applyOne(log, inSession(first, 1, 10, false, "x"))).isEqualTo(PublishResult.applied(1));
        for (int p = 2; p <= 4; p++) {
            applyOne(log, publish("ann", p, 10, "a", "x")); // three more ledgers of ann: publisher 1's is forgotten
        }
        // the session goes on: a new ledger must not take its publishes, as one before them may be in the forgotten one
        assertThat(applyOne(log, inSession(first, 2, 11, false, "y"))).isEqualTo(PublishResult.OUT_OF_ORDER);
        // the client's next connection sends both again first: the ledger cannot tell, and says so
        assertThat(applyOne(log, inSession(second, 1, 10, true, "x"))).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(applyOne(log, inSession(second, 2, 11, true, "y"))).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(applyOne(log, inSession(second, 3, 12, false, "z"))).isEqualTo(PublishResult.applied(5));
        // by the client's rules, anything sent again now was sent after that publish: absent means never applied
        assertThat(applyOne(log, inSession(second, 4, 13, true, "w"))).isEqualTo(PublishResult.applied(6));
        assertThat(applyOne(log, inSession(second, 5, 11, true, "y"))).as("still the answer it had")
                .isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(log.lastSequence("a")).isEqualTo(6);
    }

    @Test
    void aNewPublishWithoutASessionNeverMakesAForgottenLedgerVouch() {
        // applied into publisher 1's first ledger, whose ack is lost
        assertThat(applyOne(log, publish("ann", 1, 10, "a", "x"))).isEqualTo(PublishResult.applied(1));
        for (int p = 2; p <= 4; p++) {
            applyOne(log, publish("ann", p, 10, "b", "x")); // publisher 1's ledger is forgotten
        }
        // a new publish with no session order: it may follow publish 10 on the same connection
        assertThat(applyOne(log, publish("ann", 1, 11, "a", "y"))).isEqualTo(PublishResult.applied(2));
        assertThat(applyOne(log, republish("ann", 1, 10, "a", "x"))).as("publish 10 was applied: not again")
                .isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(sink.applied).filteredOn(a -> a.path().equals("a") && a.value().equals("x")).hasSize(1);
        assertThat(log.lastSequence("a")).isEqualTo(2);
    }

    @Test
    void aLedgerRemembersTheLastWindowOfPublishes() {
        TopicLog small = new TopicLog(sink, SnapshotContent.NONE, 100, 10, 16);
        for (int id = 0; id < 40; id++) {
            applyOne(small, publish("ann", 7, id, "a", "v" + id));
        }
        // the newest 16 are recognised, the older are not (the client never sends those again)
        assertThat(applyOne(small, republish("ann", 7, 24, "a", "v24"))).isEqualTo(PublishResult.alreadyApplied(25));
        assertThat(applyOne(small, republish("ann", 7, 39, "a", "v39"))).isEqualTo(PublishResult.alreadyApplied(40));
        assertThat(applyOne(small, republish("ann", 7, 23, "a", "v23"))).isEqualTo(PublishResult.applied(41));
    }

    @Test
    @Timeout(60)
    void theBoundsHoldUnderAHundredThousandPublishers() {
        TopicLog bounded = new TopicLog(sink, SnapshotContent.NONE, 1_000, 1_000);
        for (int p = 1; p <= 100_000; p++) {
            // 20,000 principals, five publishers each, each publishing five times in one entry
            String principal = "principal " + p % 20_000;
            apply(bounded, publish(principal, p, 1, "t/" + p % 100, "1"), publish(principal, p, 2, "t/" + p % 100, "2"),
                    publish(principal, p, 3, "t/" + p % 100, "3"), publish(principal, p, 4, "t/" + p % 100, "4"),
                    publish(principal, p, 5, "t/" + p % 100, "5"));
            assertThat(bounded.publishers()).isLessThanOrEqualTo(1_000);
        }
        assertThat(bounded.publishers()).isEqualTo(1_000);
        assertThat(bounded.forgottenPublishers()).isEqualTo(99_000);
        assertThat(bounded.topics()).isEqualTo(100);
        assertThat(sink.applied).hasSize(500_000);
        // the newest are recognised; the oldest are not, and their retries are not applied again
        assertThat(applyOne(bounded, republish("principal 0", 100_000, 5, "t/0", "5")))
                .isEqualTo(PublishResult.alreadyApplied(5_000));
        assertThat(applyOne(bounded, republish("principal 1", 1, 5, "t/1", "5")))
                .isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        // more than 4,096 principals lost a ledger: no new ledger vouches, for any principal
        assertThat(applyOne(bounded, republish("someone new", 1, 1, "t/1", "x")))
                .isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(sink.applied).hasSize(500_000);
        // the snapshot stays as bounded as the state
        assertThat(TopicLogTesting.snapshot(bounded).length).isLessThan(1_000 * 60 + 100 * 20 + 100);
    }
}
