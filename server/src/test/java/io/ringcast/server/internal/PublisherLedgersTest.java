package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PublisherLedgersTest {

    @Test
    void ledgerGivesTheSequenceOfARememberedPublishAndZeroOtherwise() {
        PublisherLedgers.Ledger ledger = new PublisherLedgers(4, 8).of(7);
        ledger.record(1 << 30, 41);
        ledger.record((1 << 30) + 1, 42);

        assertThat(ledger.sequenceOf(1 << 30)).isEqualTo(41);
        assertThat(ledger.sequenceOf((1 << 30) + 1)).isEqualTo(42);
        assertThat(ledger.sequenceOf((1 << 30) + 2)).isZero();
        assertThat(ledger.sequenceOf(0)).as("empty slots are never matched").isZero();
    }

    @Test
    void ledgerForgetsTheOldestPublishOnceFull() {
        PublisherLedgers.Ledger ledger = new PublisherLedgers(4, 8).of(7);
        for (int i = 1; i <= 11; i++) {
            ledger.record(i, 100 + i);
        }

        for (int i = 1; i <= 3; i++) {
            assertThat(ledger.sequenceOf(i)).as("publish %d, pushed out", i).isZero();
        }
        for (int i = 4; i <= 11; i++) {
            assertThat(ledger.sequenceOf(i)).as("publish %d", i).isEqualTo(100 + i);
        }
    }

    @Test
    void publisherWhoseSessionStartedLongestAgoIsForgottenFirst() {
        PublisherLedgers ledgers = new PublisherLedgers(2, 8);
        ledgers.of(1).record(5, 50);
        ledgers.of(2).record(5, 60);
        ledgers.of(1); // publisher 1 started a new session
        ledgers.of(3).record(5, 70);

        assertThat(ledgers.size()).isEqualTo(2);
        assertThat(ledgers.of(1).sequenceOf(5)).isEqualTo(50);
        assertThat(ledgers.of(2).sequenceOf(5)).as("publisher 2, forgotten").isZero();
    }
}
