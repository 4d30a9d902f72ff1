package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import static io.ringcast.server.internal.PublisherLedgers.APPLY;
import static io.ringcast.server.internal.PublisherLedgers.CONFLICT;
import static io.ringcast.server.internal.PublisherLedgers.OUTCOME_UNKNOWN;
import static org.assertj.core.api.Assertions.assertThat;

class PublisherLedgersTest {
    private static final int C = 1 << 30;

    // ------------------------------------------------------------------ the four answers

    @Test
    void republishOfARecordedPublishToItsTopicGetsTheSequenceOfItsFirstSend() {
        PublisherLedgers.Ledger ledger = new PublisherLedgers(4, 4).attach("anonymous", 7);
        ledger.recordApplied(C, "a", 41, false);
        ledger.recordApplied(C + 1, "b", 42, false);

        assertThat(ledger.answer(C, "a")).isEqualTo(41);
        assertThat(ledger.answer(C + 1, "b")).isEqualTo(42);
    }

    @Test
    void republishOfARecordedCorrelationIdToAnotherTopicIsAConflictNamingTheFirstTopic() {
        PublisherLedgers.Ledger ledger = new PublisherLedgers(4, 4).attach("anonymous", 7);
        ledger.recordApplied(C, "a", 41, false);

        assertThat(ledger.answer(C, "b")).isEqualTo(CONFLICT);
        assertThat(ledger.topicOf(C)).isEqualTo("a");
    }

    @Test
    void afterARestartAnAbsentPublishIsAppliedOnlyOnceTheLedgerHasRecordedANewPublish() {
        PublisherLedgers ledgers = new PublisherLedgers(4, 4);
        ledgers.startedWithHistory();
        PublisherLedgers.Ledger ledger = ledgers.attach("anonymous", 7);
        assertThat(ledger.answer(C + 5, "a")).as("a new ledger after a restart vouches for nothing")
                .isEqualTo(OUTCOME_UNKNOWN);

        ledger.recordApplied(C + 6, "a", 1, true);
        assertThat(ledger.answer(C + 5, "a")).as("a publish sent again does not make it vouch").isEqualTo(OUTCOME_UNKNOWN);

        ledger.recordApplied(C + 7, "a", 2, false);
        assertThat(ledger.answer(C + 8, "a")).isEqualTo(APPLY);
        assertThat(ledger.answer(0, "a")).as("empty slots are never matched").isEqualTo(APPLY);
    }

    @Test
    void aNewLedgerVouchesFromTheStartOnlyWhereNoLedgerOfItsPrincipalCanHaveBeenLost() {
        PublisherLedgers ledgers = new PublisherLedgers(1, 1);
        assertThat(ledgers.attach("anonymous", 1).answer(C, "a")).as("nothing forgotten yet: never applied here")
                .isEqualTo(APPLY);
        ledgers.detach(ledgers.attach("anonymous", 2));
        ledgers.detach(ledgers.attach("anonymous", 3)); // forgets publisher 2: one detached ledger per principal
        assertThat(ledgers.forgotten()).isEqualTo(1);
        assertThat(ledgers.attach("anonymous", 2).answer(C, "a")).as("its principal lost a ledger, maybe this one")
                .isEqualTo(OUTCOME_UNKNOWN);
        assertThat(ledgers.attach("principal 'alice'", 2).answer(C, "a")).as("another principal lost none")
                .isEqualTo(APPLY);
    }

    @Test
    void republishAnsweredOutcomeUnknownGetsTheSameAnswerAgainEvenOnceTheLedgerVouches() {
        PublisherLedgers ledgers = new PublisherLedgers(4, 4);
        ledgers.startedWithHistory();
        PublisherLedgers.Ledger ledger = ledgers.attach("anonymous", 7);
        ledger.recordOutcomeUnknown(C, "a");
        ledger.recordApplied(C + 1, "a", 1, false);

        assertThat(ledger.vouches()).isTrue();
        assertThat(ledger.answer(C, "a")).isEqualTo(OUTCOME_UNKNOWN);
    }

    // ------------------------------------------------------------------ window and growth

    @Test
    void ledgerGrowsOnDemandAndForgetsTheOldestPublishOnceItsWindowIsFull() {
        PublisherLedgers.Ledger ledger = new PublisherLedgers(4, 4, 20).attach("anonymous", 7);
        ledger.recordApplied(C, "t", 1, false);
        assertThat(ledger.capacity()).as("a publisher that published once costs little").isEqualTo(8);
        for (int i = 1; i < 23; i++) {
            ledger.recordApplied(C + i, "t", 1 + i, false);
        }

        assertThat(ledger.capacity()).as("grown to the window, not past it").isEqualTo(20);
        for (int i = 0; i < 3; i++) {
            assertThat(ledger.answer(C + i, "t")).as("publish %d, pushed out", i).isEqualTo(APPLY);
        }
        for (int i = 3; i < 23; i++) {
            assertThat(ledger.answer(C + i, "t")).as("publish %d, kept across growth and wrap", i).isEqualTo(1 + i);
        }
    }

    // ------------------------------------------------------------------ bounds

    @Test
    void attachedLedgerIsNeverForgottenWhateverComesAfter() {
        PublisherLedgers ledgers = new PublisherLedgers(2, 2);
        PublisherLedgers.Ledger held = ledgers.attach("anonymous", 1);
        held.recordApplied(C, "t", 9, false);
        for (long id = 2; id < 100; id++) {
            ledgers.detach(ledgers.attach("anonymous", id));
        }

        assertThat(ledgers.attach("anonymous", 1)).isSameAs(held);
        assertThat(ledgers.detached()).isEqualTo(2);
        assertThat(ledgers.forgotten()).isEqualTo(96);
    }

    @Test
    void principalPastItsBoundForgetsItsOwnLeastRecentlyDetachedLedger() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 2);
        PublisherLedgers.Ledger alice = ledgers.attach("principal 'alice'", 1);
        ledgers.detach(alice);
        PublisherLedgers.Ledger first = ledgers.attach("anonymous", 1);
        PublisherLedgers.Ledger second = ledgers.attach("anonymous", 2);
        PublisherLedgers.Ledger third = ledgers.attach("anonymous", 3);
        ledgers.detach(first);
        ledgers.detach(third);
        ledgers.detach(second);

        assertThat(ledgers.forgotten()).isEqualTo(1);
        assertThat(ledgers.attach("anonymous", 1)).as("the least recently detached went").isNotSameAs(first);
        assertThat(ledgers.attach("anonymous", 3)).isSameAs(third);
        assertThat(ledgers.attach("anonymous", 2)).isSameAs(second);
        assertThat(ledgers.attach("principal 'alice'", 1)).as("another principal's ledger stays").isSameAs(alice);
    }

    @Test
    void pastTheTotalThePrincipalHoldingTheMostLosesItsOldestLedger() {
        PublisherLedgers ledgers = new PublisherLedgers(4, 10);
        PublisherLedgers.Ledger alice = ledgers.attach("principal 'alice'", 1);
        ledgers.detach(alice);
        PublisherLedgers.Ledger[] anonymous = new PublisherLedgers.Ledger[4];
        for (int i = 0; i < 4; i++) {
            anonymous[i] = ledgers.attach("anonymous", i);
            ledgers.detach(anonymous[i]);
        }

        assertThat(ledgers.detached()).isEqualTo(4);
        assertThat(ledgers.size()).isEqualTo(4);
        assertThat(ledgers.attach("principal 'alice'", 1)).as("alice held one ledger, anonymous three").isSameAs(alice);
        assertThat(ledgers.attach("anonymous", 0)).as("the oldest anonymous ledger went").isNotSameAs(anonymous[0]);
    }

    @Test
    void samePublisherIdUnderTwoPrincipalsIsTwoLedgers() {
        PublisherLedgers ledgers = new PublisherLedgers(4, 4);
        PublisherLedgers.Ledger alice = ledgers.attach("principal 'alice'", 7);
        alice.recordApplied(C, "alice/t", 1, false);
        PublisherLedgers.Ledger bob = ledgers.attach("token of 'bob'", 7);

        assertThat(bob).isNotSameAs(alice);
        assertThat(bob.answer(C, "alice/t")).as("bob never published C here: alice's publish is not his")
                .isEqualTo(APPLY);
    }

    @Test
    void ledgerOfTwoOpenSessionsIsDetachedOnlyWhenBothClosed() {
        PublisherLedgers ledgers = new PublisherLedgers(0, 0);
        PublisherLedgers.Ledger ledger = ledgers.attach("anonymous", 7);
        assertThat(ledgers.attach("anonymous", 7)).isSameAs(ledger);

        ledgers.detach(ledger);
        assertThat(ledgers.size()).isEqualTo(1);
        ledgers.detach(ledger);
        assertThat(ledgers.size()).as("no room for a ledger of a publisher away").isZero();
    }

    @Test
    void aLedgerAttachedAgainNoLongerCountsAsDetachedSoItIsNotForgottenForAnother() {
        PublisherLedgers ledgers = new PublisherLedgers(1, 1);
        PublisherLedgers.Ledger ledger = ledgers.attach("anonymous", 1);
        ledger.recordApplied(C, "t", 4, false);
        ledgers.detach(ledger);
        assertThat(ledgers.detached()).isEqualTo(1);

        assertThat(ledgers.attach("anonymous", 1)).as("its publisher reconnected").isSameAs(ledger);
        assertThat(ledgers.detached()).isZero();
        ledgers.detach(ledgers.attach("anonymous", 2));

        assertThat(ledgers.forgotten()).as("the one detached ledger fits the bounds").isZero();
        assertThat(ledger.answer(C, "t")).isEqualTo(4);
        assertThat(ledgers.attach("anonymous", 1)).isSameAs(ledger);
    }

    @Test
    void pastFourThousandPrincipalsWithForgottenLedgersNoNewLedgerVouches() {
        PublisherLedgers ledgers = new PublisherLedgers(0, 0); // every detached ledger is forgotten at once
        for (int p = 0; p < 4096; p++) {
            ledgers.detach(ledgers.attach("principal " + p, 1));
        }
        assertThat(ledgers.attach("principal fresh", 1).answer(C, "t")).as("4,096 principals are remembered by name")
                .isEqualTo(APPLY);
        assertThat(ledgers.attach("principal 0", 1).answer(C, "t")).isEqualTo(OUTCOME_UNKNOWN);

        ledgers.detach(ledgers.attach("principal 4096", 1));
        assertThat(ledgers.forgotten()).isEqualTo(4097);
        assertThat(ledgers.attach("principal other", 1).answer(C, "t"))
                .as("past that, any principal may have lost one").isEqualTo(OUTCOME_UNKNOWN);
    }
}
