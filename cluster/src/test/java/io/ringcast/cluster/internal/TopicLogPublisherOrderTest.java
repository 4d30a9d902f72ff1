package io.ringcast.cluster.internal;

import static io.ringcast.cluster.internal.TopicLogTesting.apply;
import static io.ringcast.cluster.internal.TopicLogTesting.applyOne;
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

/**
 * A publisher's publishes are applied in the order its sessions sent them ({@link TopicLog},
 * {@link ReplicatedLedgers.Ledger#inOrder}): what a leader's death does to a session's pipeline,
 * replayed as the entries the new leader's log would hold.
 */
class TopicLogPublisherOrderTest {
    private static final long FIRST_SESSION = 0x5E55_1011L;
    private static final long NEXT_SESSION = 0x5E55_1022L;

    private final RecordingSink sink = new RecordingSink();
    private final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 100_000, 16);

    /** Publish {@code correlationId} of publisher 7, the {@code sequence}-th its session handed to the log. */
    private static LoggedPublish sent(long session, long sequence, int correlationId, boolean republish) {
        return new LoggedPublish("ann", 7, session, sequence, correlationId, republish, "a", utf8("v" + correlationId));
    }

    @Test
    void aPublishWhosePredecessorNeverReachedTheLogIsNotAppliedNorAreItsSuccessors() {
        apply(log, sent(FIRST_SESSION, 1, 101, false), sent(FIRST_SESSION, 2, 102, false));
        // 103 and 104 went to a leader that died; 105 and 106 reached the next one
        assertThat(apply(log, sent(FIRST_SESSION, 5, 105, false), sent(FIRST_SESSION, 6, 106, false)).results())
                .containsExactly(PublishResult.OUT_OF_ORDER, PublishResult.OUT_OF_ORDER);

        assertThat(sink.applied).extracting(Applied::value).containsExactly("v101", "v102");
        assertThat(log.publishesOutOfOrder()).isEqualTo(2);
    }

    @Test
    void theClientsNextSessionSendsTheUnackedAgainOldestFirstAndAllAreAppliedInTheirOrder() {
        apply(log, sent(FIRST_SESSION, 1, 101, false), sent(FIRST_SESSION, 2, 102, false));
        apply(log, sent(FIRST_SESSION, 5, 105, false)); // refused: 3 and 4 were lost

        assertThat(apply(log, sent(NEXT_SESSION, 1, 103, true), sent(NEXT_SESSION, 2, 104, true),
                sent(NEXT_SESSION, 3, 105, true), sent(NEXT_SESSION, 4, 106, false)).results())
                .containsExactly(PublishResult.applied(3), PublishResult.applied(4), PublishResult.applied(5),
                        PublishResult.applied(6));
        assertThat(sink.applied).extracting(Applied::value)
                .containsExactly("v101", "v102", "v103", "v104", "v105", "v106");
    }

    @Test
    void aPublishAppliedBeforeItsClientSentItAgainIsAnsweredWithItsSequenceAndTheNextFollowsIt() {
        // the old session's entry did commit, though its answer was lost with the leader
        apply(log, sent(FIRST_SESSION, 1, 101, false), sent(FIRST_SESSION, 2, 102, false));

        assertThat(apply(log, sent(NEXT_SESSION, 1, 101, true), sent(NEXT_SESSION, 2, 102, true),
                sent(NEXT_SESSION, 3, 103, false)).results())
                .containsExactly(PublishResult.alreadyApplied(1), PublishResult.alreadyApplied(2),
                        PublishResult.applied(3));
    }

    @Test
    void aStragglerOfASessionItsClientLeftIsNotAppliedButADuplicateIsStillAnswered() {
        apply(log, sent(FIRST_SESSION, 1, 101, false));
        apply(log, sent(NEXT_SESSION, 1, 101, true), sent(NEXT_SESSION, 2, 102, true));
        // the first session's later entries arrive late, through a slow forward
        assertThat(apply(log, sent(FIRST_SESSION, 2, 102, false), sent(FIRST_SESSION, 3, 103, false)).results())
                .containsExactly(PublishResult.alreadyApplied(2), PublishResult.OUT_OF_ORDER);
        // the client sends 103 through its session of now: applied after 102
        assertThat(applyOne(log, sent(NEXT_SESSION, 3, 103, false))).isEqualTo(PublishResult.applied(3));
        assertThat(sink.applied).extracting(Applied::value).containsExactly("v101", "v102", "v103");
    }

    /**
     * Issue 28's one-way cut then flapping partition: a node held copies of a session's publishes
     * (its {@code REPUBLISH}es of what an earlier one left unacked) while its client moved on, got
     * them acked through another node and published more than the ledger remembers; the copies then
     * reached the log. The client numbered its connections, so the log knows that session is behind.
     */
    @Test
    void aCopyOfASessionItsClientHasLeftIsNotAppliedOnceTheLedgerForgotWhatItCarries() {
        TopicLog remembersFour = new TopicLog(sink, SnapshotContent.NONE, 100_000, 16, 4);
        long second = PublishingSessions.ordered(2);
        long third = PublishingSessions.ordered(3);
        apply(remembersFour, sent(PublishingSessions.ordered(1), 1, 101, false));
        // the third session sends 101 again (answered), then new ones: the ledger forgets 101
        apply(remembersFour, sent(third, 1, 101, true), sent(third, 2, 102, false), sent(third, 3, 103, false),
                sent(third, 4, 104, false), sent(third, 5, 105, false));

        assertThat(apply(remembersFour, sent(second, 1, 101, true), sent(second, 2, 102, false)).results())
                .as("the second session's copies, late").containsExactly(PublishResult.OUT_OF_ORDER,
                        PublishResult.alreadyApplied(2));
        assertThat(sink.applied).extracting(Applied::value).containsExactly("v101", "v102", "v103", "v104", "v105");
        assertThat(applyOne(remembersFour, sent(third, 6, 106, false))).as("the third goes on")
                .isEqualTo(PublishResult.applied(6));
    }

    @Test
    void aLaterNumberedSessionStartsAfterAnyEarlierOne() {
        apply(log, sent(PublishingSessions.ordered(1), 1, 101, false));
        assertThat(applyOne(log, sent(PublishingSessions.ordered(4), 1, 102, false)))
                .as("connections 2 and 3 published nothing").isEqualTo(PublishResult.applied(2));
        assertThat(applyOne(log, sent(PublishingSessions.ordered(3), 1, 103, false)))
                .isEqualTo(PublishResult.OUT_OF_ORDER);
    }

    @Test
    void anEntryCarriedTwiceIsAnsweredFromTheLedgerAndDoesNotBreakTheOrder() {
        apply(log, sent(FIRST_SESSION, 1, 101, false), sent(FIRST_SESSION, 2, 102, false));
        assertThat(apply(log, sent(FIRST_SESSION, 1, 101, false), sent(FIRST_SESSION, 2, 102, false)).results())
                .containsExactly(PublishResult.alreadyApplied(1), PublishResult.alreadyApplied(2));
        assertThat(applyOne(log, sent(FIRST_SESSION, 3, 103, false))).isEqualTo(PublishResult.applied(3));
    }

    @Test
    void aPublishRefusedForItsTopicCountIsDecidedAndItsSuccessorIsApplied() {
        TopicLog small = new TopicLog(sink, SnapshotContent.NONE, 1, 16);
        applyOne(small, sent(FIRST_SESSION, 1, 101, false));
        LoggedPublish another = new LoggedPublish("ann", 7, FIRST_SESSION, 2, 102, false, "b", utf8("v102"));
        assertThat(applyOne(small, another)).isEqualTo(PublishResult.TOO_MANY_TOPICS);
        assertThat(applyOne(small, sent(FIRST_SESSION, 3, 103, false))).isEqualTo(PublishResult.applied(2));
    }

    @Test
    void publishersWithoutASessionOrWithoutAPublisherIdAreAppliedAsTheyCome() {
        assertThat(applyOne(log, new LoggedPublish("ann", 7, 105, false, "a", utf8("x"))))
                .isEqualTo(PublishResult.applied(1));
        assertThat(applyOne(log, new LoggedPublish(null, 0, FIRST_SESSION, 9, 0, false, "a", utf8("y"))))
                .as("no publisher id: no ledger, so no order either").isEqualTo(PublishResult.applied(2));
    }

    @Test
    void theOrderOfEachPublisherIsInTheSnapshot() throws Exception {
        apply(log, sent(FIRST_SESSION, 1, 101, false), sent(FIRST_SESSION, 2, 102, false));
        TopicLog restored = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100_000, 16);
        restore(restored, snapshot(log));

        assertThat(applyOne(restored, sent(FIRST_SESSION, 4, 104, false))).isEqualTo(PublishResult.OUT_OF_ORDER);
        assertThat(applyOne(restored, sent(FIRST_SESSION, 3, 103, false))).isEqualTo(PublishResult.applied(3));
    }
}
