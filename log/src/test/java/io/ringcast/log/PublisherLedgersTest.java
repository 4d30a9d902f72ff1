package io.ringcast.log;

import static io.ringcast.log.PublisherLedgers.ABSENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringcast.log.PublisherLedgers.Ledger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** The rules of {@link PublisherLedgers}, asked directly as a sequencer asks them. */
@Timeout(10)
class PublisherLedgersTest {
    private static final long FIRST = PublishingSessions.ordered(1);
    private static final long SECOND = PublishingSessions.ordered(2);
    /** Snapshot topics: one the snapshot names by index, one it writes out. */
    private static final String INDEXED = "topics/indexed";
    private static final String NAMED = "topics/named";

    /** Each topic's last sequence, as the sequencer keeps it. */
    private final Map<String, Long> lastSequences = new HashMap<>();

    /** A publisher's {@code connection}-th connection, or for 0 one without a session (no order kept). */
    private Connection connect(PublisherLedgers ledgers, String principal, long publisherId, long connection) {
        return new Connection(ledgers, principal, publisherId, connection == 0 ? 0 : PublishingSessions.ordered(connection));
    }

    /** Numbers its publishes 1, 2, 3... in its session, as production does. */
    private final class Connection {
        private final PublisherLedgers ledgers;
        private final String principal;
        private final long publisherId;
        private final long session;
        private long places;

        Connection(PublisherLedgers ledgers, String principal, long publisherId, long session) {
            this.ledgers = ledgers;
            this.principal = principal;
            this.publisherId = publisherId;
            this.session = session;
        }

        PublishResult publish(int correlationId, String topic) {
            return send(session == 0 ? 0 : ++places, correlationId, false, topic);
        }

        PublishResult republish(int correlationId, String topic) {
            return send(session == 0 ? 0 : ++places, correlationId, true, topic);
        }

        /** One publish as the sequencer decides it: screened by its ledger, else sequenced and recorded. */
        PublishResult send(long place, int correlationId, boolean republish, String topic) {
            Ledger ledger = ledgers.ledgerOf(principal, publisherId);
            PublishResult answer = ledger.screen(session, place, correlationId, republish, topic);
            if (answer != null) {
                return answer;
            }
            long sequence = lastSequences.merge(topic, 1L, Long::sum);
            ledger.recordApplied(session, correlationId, topic, sequence, republish);
            return PublishResult.applied(sequence);
        }
    }

    @Test
    void aRepublishOfARecordedPublishToItsTopicGetsTheSequenceOfItsFirstSend() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 10);
        Connection first = connect(ledgers, "ann", 7, 1);
        first.publish(101, "a");
        first.publish(102, "a");
        // a plain publish carried twice (a node's retry): a client never reuses an id within its window
        assertThat(first.publish(102, "a")).isEqualTo(PublishResult.alreadyApplied(2));

        Connection second = connect(ledgers, "ann", 7, 2);
        assertThat(second.republish(101, "a")).isEqualTo(PublishResult.alreadyApplied(1));
        assertThat(second.republish(102, "a")).isEqualTo(PublishResult.alreadyApplied(2));
        assertThat(lastSequences).containsEntry("a", 2L); // nothing sequenced twice
        assertThat(ledgers.ledgerOf("ann", 7).size()).isEqualTo(2);
    }

    @Test
    void aCorrelationIdSentAgainToAnotherTopicIsAConflictNamingItsFirstTopic() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 10);
        connect(ledgers, "ann", 7, 1).publish(101, "a");

        Connection second = connect(ledgers, "ann", 7, 2);
        assertThat(second.republish(101, "b")).isEqualTo(PublishResult.conflict("a"));
        assertThat(second.publish(101, "b")).isEqualTo(PublishResult.conflict("a"));
        assertThat(lastSequences).doesNotContainKey("b");
    }

    @Test
    void afterAStartWithHistoryARepublishNotInTheLedgerHasAnUnknownOutcomeUntilItRecordsANewPublishOfASession() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 10);
        ledgers.startedWithHistory(); // 101 and 102 may have been applied before the restart

        Connection second = connect(ledgers, "ann", 7, 2);
        assertThat(second.republish(101, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(second.republish(101, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(second.republish(102, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(ledgers.ledgerOf("ann", 7).vouches()).isFalse();
        assertThat(second.publish(103, "a")).isEqualTo(PublishResult.applied(1));
        assertThat(ledgers.ledgerOf("ann", 7).vouches()).isTrue();

        // every publish unacked before 103 was sent again before it, so one not in the ledger was never applied
        Connection third = connect(ledgers, "ann", 7, 3);
        assertThat(third.republish(104, "a")).isEqualTo(PublishResult.applied(2));
        // the same answer as before: it may have been applied before the restart
        assertThat(third.republish(101, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
    }

    @Test
    void aNewLedgerVouchesFromTheStartOnlyWhileNoLedgerOfItsPrincipalWasForgotten() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 1);
        assertThat(connect(ledgers, "ann", 1, 1).republish(101, "a")).isEqualTo(PublishResult.applied(1));
        // forgets ann's publisher 1, but was made while nothing of ann was lost: it vouches
        assertThat(ledgers.ledgerOf("ann", 2).vouches()).isTrue();

        // made after: a publish of ann's not in it may have gone into the forgotten one
        assertThat(connect(ledgers, "ann", 3, 1).republish(301, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        // 101 was applied: its publisher's new ledger must not apply it again
        assertThat(connect(ledgers, "ann", 1, 2).republish(101, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        // another principal's publishers could not have lost anything
        assertThat(connect(ledgers, "bob", 1, 1).republish(101, "a")).isEqualTo(PublishResult.applied(2));
    }

    @Test
    void pastTheBoundOfPrincipalsRememberedAsForgetfulNoNewLedgerOfAnyPrincipalVouches() {
        PublisherLedgers ledgers = new PublisherLedgers(100_000, 1);
        for (int i = 0; i < PublisherLedgers.MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL; i++) {
            ledgers.ledgerOf("p" + i, 1);
            ledgers.ledgerOf("p" + i, 2); // p_i loses its first
        }
        assertThat(ledgers.ledgerOf("fresh", 1).vouches()).isTrue();
        assertThat(ledgers.ledgerOf("p0", 3).vouches()).isFalse();

        ledgers.ledgerOf("one-more", 1);
        ledgers.ledgerOf("one-more", 2);
        // no longer known who lost one: everyone counts as such
        assertThat(ledgers.ledgerOf("fresher", 1).vouches()).isFalse();
    }

    @Test
    void aNewPublishWithoutASessionNeverMakesALedgerVouchButANewPublishOfASessionDoes() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 1);
        Connection unordered = connect(ledgers, "ann", 7, 0);
        assertThat(unordered.publish(100, "a")).isEqualTo(PublishResult.applied(1));
        ledgers.ledgerOf("ann", 8); // forgets ann's publisher 7, and 100 with it

        assertThat(unordered.publish(101, "a")).isEqualTo(PublishResult.applied(2));
        assertThat(ledgers.ledgerOf("ann", 7).vouches()).isFalse();
        // 100 went before 101 into the forgotten ledger: were the new ledger to vouch, 100 would be applied twice
        assertThat(unordered.republish(100, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);

        assertThat(connect(ledgers, "ann", 7, 1).publish(102, "a")).isEqualTo(PublishResult.applied(3));
        assertThat(ledgers.ledgerOf("ann", 7).vouches()).isTrue();
    }

    @Test
    void aPublishThatIsNotTheNextOfItsSessionIsOutOfOrderAndChangesNothing() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 10);
        Connection first = connect(ledgers, "ann", 7, 1);
        first.publish(101, "a");

        // 102 is still on its way (or went to a leader that died)
        assertThat(first.send(3, 103, false, "a")).isEqualTo(PublishResult.OUT_OF_ORDER);
        assertThat(ledgers.ledgerOf("ann", 7).find(103)).isEqualTo(ABSENT);
        assertThat(first.send(2, 102, false, "a")).isEqualTo(PublishResult.applied(2));
        assertThat(first.send(3, 103, false, "a")).isEqualTo(PublishResult.applied(3));
        // the client's next connection starts over at 1 wherever the last one stopped
        assertThat(connect(ledgers, "ann", 7, 2).publish(201, "a")).isEqualTo(PublishResult.applied(4));
    }

    @Test
    void aLedgerMadeInTheMiddleOfASessionRefusesItsPublishesUntilTheClientsNextConnection() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 1);
        Connection first = connect(ledgers, "ann", 7, 1);
        first.publish(101, "a");
        first.publish(102, "a");
        ledgers.ledgerOf("ann", 8); // forgets ann's publisher 7

        // the new ledger did not see places 1 and 2: it cannot tell what came before
        assertThat(first.publish(103, "a")).isEqualTo(PublishResult.OUT_OF_ORDER);
        assertThat(first.publish(104, "a")).isEqualTo(PublishResult.OUT_OF_ORDER);

        Connection second = connect(ledgers, "ann", 7, 2);
        assertThat(second.republish(101, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(second.republish(103, "a")).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        assertThat(second.publish(105, "a")).isEqualTo(PublishResult.applied(3));
    }

    @Test
    void aPublishOfAnOlderSessionIsOutOfOrderEvenAtItsFirstPlaceButACopyIsStillAnswered() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 10);
        Connection second = connect(ledgers, "ann", 7, 2);
        second.publish(201, "a");

        // a straggler of a connection its client has left: what it carries was sent again since
        Connection first = connect(ledgers, "ann", 7, 1);
        assertThat(first.publish(101, "a")).isEqualTo(PublishResult.OUT_OF_ORDER);
        assertThat(first.publish(201, "a")).isEqualTo(PublishResult.alreadyApplied(1));
        assertThat(second.publish(202, "a")).isEqualTo(PublishResult.applied(2));
    }

    @Test
    void aLedgersArraysGrowOnDemandAndItForgetsItsOldestPublishOnceItsWindowIsFull() {
        PublisherLedgers byDefault = new PublisherLedgers(10, 10);
        Connection connection = connect(byDefault, "ann", 7, 1);
        for (int id = 1; id <= 8; id++) {
            connection.publish(id, "a");
        }
        assertThat(byDefault.ledgerOf("ann", 7).capacity()).isEqualTo(8);
        connection.publish(9, "a");
        assertThat(byDefault.ledgerOf("ann", 7).capacity()).isEqualTo(16);

        PublisherLedgers ledgers = new PublisherLedgers(10, 10, 16);
        Connection first = connect(ledgers, "ann", 7, 1);
        for (int id = 1; id <= 20; id++) {
            first.publish(id, "b");
        }
        Ledger ledger = ledgers.ledgerOf("ann", 7);
        assertThat(ledger.capacity()).isEqualTo(16);
        assertThat(ledger.size()).isEqualTo(16);
        for (int id = 1; id <= 20; id++) {
            assertThat(ledger.find(id) != ABSENT).as("id %d remembered", id).isEqualTo(id > 4);
        }
        Connection second = connect(ledgers, "ann", 7, 2);
        assertThat(second.republish(20, "b")).isEqualTo(PublishResult.alreadyApplied(20));
        // a client keeps at most a window unacked, so it never sends 4 again; were it to, 4 is taken as new
        assertThat(second.republish(4, "b")).isEqualTo(PublishResult.applied(21));
    }

    @Test
    void aPublishAnsweredAgainInOrderBecomesTheNewestAndIsForgottenLast() {
        PublisherLedgers ledgers = new PublisherLedgers(10, 10, 16);
        Connection first = connect(ledgers, "ann", 7, 1);
        for (int id = 1; id <= 16; id++) {
            first.publish(id, "a");
        }
        // its client still holds 1 unacked, and may send it again after 16 later publishes
        Connection second = connect(ledgers, "ann", 7, 2);
        assertThat(second.republish(1, "a")).isEqualTo(PublishResult.alreadyApplied(1));
        second.publish(17, "a");

        Ledger ledger = ledgers.ledgerOf("ann", 7);
        assertThat(ledger.find(1)).isNotEqualTo(ABSENT);
        assertThat(ledger.find(2)).isEqualTo(ABSENT);
    }

    @Test
    void aPrincipalPastItsBoundForgetsItsOwnLeastRecentlyUsedLedger() {
        PublisherLedgers ledgers = new PublisherLedgers(10, 2);
        connect(ledgers, "ann", 1, 1).publish(101, "a");
        connect(ledgers, "ann", 2, 1).publish(201, "a");
        connect(ledgers, "bob", 1, 1).publish(301, "a");
        ledgers.ledgerOf("ann", 1); // a use: ann's publisher 2 is now its least recently used

        ledgers.ledgerOf("ann", 3);
        assertThat(ledgers.size()).isEqualTo(3);
        assertThat(ledgers.forgotten()).isEqualTo(1);
        assertThat(ledgers.ledgerOf("ann", 1).find(101)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("bob", 1).find(301)).isNotEqualTo(ABSENT);
        Ledger madeAgain = ledgers.ledgerOf("ann", 2); // forgets ann's publisher 3 in turn
        assertThat(madeAgain.find(201)).isEqualTo(ABSENT);
        assertThat(ledgers.size()).isEqualTo(3);
        assertThat(ledgers.forgotten()).isEqualTo(2);
    }

    @Test
    void pastTheTotalThePrincipalHoldingTheMostLosesItsLeastRecentlyUsedLedger() {
        PublisherLedgers ledgers = new PublisherLedgers(4, 10);
        connect(ledgers, "bob", 1, 1).publish(101, "a");
        connect(ledgers, "ann", 1, 1).publish(201, "a");
        connect(ledgers, "ann", 2, 1).publish(202, "a");
        connect(ledgers, "ann", 3, 1).publish(203, "a");
        ledgers.ledgerOf("ann", 1);

        ledgers.ledgerOf("cy", 1);
        assertThat(ledgers.size()).isEqualTo(4);
        assertThat(ledgers.forgotten()).isEqualTo(1);
        // bob's one ledger is the least recently used of all, but bob holds only one
        assertThat(ledgers.ledgerOf("bob", 1).find(101)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("ann", 1).find(201)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("ann", 3).find(203)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("ann", 2).find(202)).isEqualTo(ABSENT);
    }

    @Test
    void onATieThePrincipalThatGotItsFirstLedgerEarliestLosesAndNeverTheLedgerJustMade() {
        PublisherLedgers ledgers = new PublisherLedgers(4, 10);
        connect(ledgers, "bob", 1, 1).publish(101, "a");
        connect(ledgers, "ann", 1, 1).publish(201, "a");
        connect(ledgers, "ann", 2, 1).publish(202, "a");
        connect(ledgers, "bob", 2, 1).publish(102, "a");
        ledgers.ledgerOf("bob", 1); // ann's publisher 1 is now the least recently used of all

        ledgers.ledgerOf("cy", 1);
        assertThat(ledgers.ledgerOf("ann", 1).find(201)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("ann", 2).find(202)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("bob", 1).find(101)).isNotEqualTo(ABSENT);
        assertThat(ledgers.ledgerOf("bob", 2).find(102)).isEqualTo(ABSENT);

        // with room for one, the ledger just made stays, though it ties with the older principal's
        PublisherLedgers one = new PublisherLedgers(1, 1);
        one.ledgerOf("ann", 1);
        Ledger made = one.ledgerOf("bob", 1);
        assertThat(one.ledgerOf("bob", 1)).isSameAs(made);
        Ledger madeNext = one.ledgerOf("bob", 2);
        assertThat(one.ledgerOf("bob", 2)).isSameAs(madeNext);
        assertThat(one.size()).isEqualTo(1);
    }

    @Test
    void theSamePublisherIdUnderTwoPrincipalsIsTwoLedgers() {
        PublisherLedgers ledgers = new PublisherLedgers(100, 10);
        connect(ledgers, "ann", 7, 1).publish(101, "a");

        assertThat(connect(ledgers, "bob", 7, 1).republish(101, "a")).isEqualTo(PublishResult.applied(2));
        assertThat(connect(ledgers, "ann", 7, 2).republish(101, "a")).isEqualTo(PublishResult.alreadyApplied(1));
        assertThat(ledgers.size()).isEqualTo(2);
    }

    @Test
    void aSnapshotRestoresLedgersThatAnswerAndForgetAsTheOriginal() throws IOException {
        PublisherLedgers original = new PublisherLedgers(4, 2);
        Connection annFirst = connect(original, "ann", 1, 1);
        annFirst.publish(101, INDEXED);
        annFirst.publish(102, NAMED);
        original.ledgerOf("ann", 2);
        original.ledgerOf("ann", 1);
        original.ledgerOf("ann", 3); // forgets ann's publisher 2
        original.ledgerOf("ann", 1);
        // forgets ann's publisher 3; made after ann lost one, it does not vouch
        assertThat(connect(original, "ann", 4, 1).republish(401, INDEXED)).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
        connect(original, "bob", 1, 1).publish(501, INDEXED);

        byte[] snapshot = bytes(original);
        PublisherLedgers restored = read(new PublisherLedgers(4, 2), snapshot);
        assertThat(bytes(restored)).isEqualTo(snapshot);
        // a topic among the snapshot's by its index, another by its path
        assertThat(new String(snapshot, StandardCharsets.ISO_8859_1)).contains(NAMED).doesNotContain(INDEXED);

        List<Object> expected = Arrays.asList(PublishResult.OUT_OF_ORDER, PublishResult.alreadyApplied(1),
                PublishResult.conflict(NAMED), PublishResult.OUTCOME_UNKNOWN, PublishResult.OUTCOME_UNKNOWN, null,
                true, false, true, 4);
        assertThat(answers(original)).isEqualTo(expected);
        assertThat(answers(restored)).isEqualTo(expected);
        assertThat(bytes(restored)).isEqualTo(bytes(original)); // the same ledgers forgotten, the rest in the same order

        PublisherLedgers startedWithHistory = new PublisherLedgers(4, 2);
        startedWithHistory.startedWithHistory();
        assertThat(read(new PublisherLedgers(4, 2), bytes(startedWithHistory)).ledgerOf("cy", 1).vouches()).isFalse();
    }

    /** Every kind of answer the snapshot's ledgers give, then one more ledger per principal bound and in total. */
    private static List<Object> answers(PublisherLedgers ledgers) {
        return Arrays.asList(
                ledgers.ledgerOf("ann", 1).screen(FIRST, 4, 104, false, INDEXED), // its session's place 2 was last
                ledgers.ledgerOf("ann", 1).screen(SECOND, 1, 101, true, INDEXED),
                ledgers.ledgerOf("ann", 1).screen(SECOND, 2, 102, true, INDEXED),
                ledgers.ledgerOf("ann", 4).screen(SECOND, 1, 401, true, INDEXED),
                ledgers.ledgerOf("ann", 4).screen(SECOND, 2, 402, true, INDEXED),
                ledgers.ledgerOf("bob", 1).screen(SECOND, 1, 502, true, INDEXED),
                ledgers.ledgerOf("cy", 1).vouches(),
                ledgers.ledgerOf("ann", 5).vouches(), // forgets ann's publisher 1, its least recently used
                ledgers.ledgerOf("dan", 1).vouches(), // past the total: forgets ann's publisher 4
                ledgers.size());
    }

    @Test
    void aFrozenCopyWritesTheLedgersAsTheyWereWhenFrozenWhateverHappensAfter() throws IOException {
        PublisherLedgers ledgers = new PublisherLedgers(4, 2, 4); // a window of 4: the ring wraps below
        Connection ann = connect(ledgers, "ann", 1, 1);
        for (int id = 1; id <= 6; id++) {
            ann.publish(100 + id, id % 2 == 0 ? INDEXED : NAMED);
        }
        connect(ledgers, "bob", 1, 1).publish(501, INDEXED);
        byte[] before = bytes(ledgers);

        PublisherLedgers.Frozen frozen = ledgers.freeze();
        ann.publish(107, INDEXED);
        connect(ledgers, "cy", 1, 1).publish(601, NAMED);
        ledgers.ledgerOf("bob", 2);

        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        frozen.write(new DataOutputStream(buffer), Map.of(INDEXED, 0, "a", 1));
        assertThat(buffer.toByteArray()).isEqualTo(before);
        assertThat(bytes(ledgers)).isNotEqualTo(before);
    }

    @Test
    void readingIntoSmallerBoundsForgetsPerPrincipalFirstThenInTotal() throws IOException {
        PublisherLedgers original = new PublisherLedgers(10, 10);
        connect(original, "ann", 1, 1).publish(101, "a");
        connect(original, "bob", 1, 1).publish(201, "a");
        connect(original, "ann", 2, 1).publish(102, "a");
        connect(original, "ann", 3, 1).publish(103, "a");
        connect(original, "bob", 2, 1).publish(202, "a");
        connect(original, "cy", 1, 1).publish(301, "a");
        original.ledgerOf("ann", 1); // ann's, least recently used first: 2, 3, 1

        // past ann's bound alone: ann's least recently used goes, though the total has room
        PublisherLedgers perPrincipal = read(new PublisherLedgers(10, 2), bytes(original));
        assertThat(perPrincipal.size()).isEqualTo(5);
        assertThat(perPrincipal.ledgerOf("ann", 3).find(103)).isNotEqualTo(ABSENT);
        assertThat(perPrincipal.ledgerOf("ann", 1).find(101)).isNotEqualTo(ABSENT);

        // as making them one by one in the snapshot's order would: ann's 2 past ann's bound; past the total,
        // ann's 3 (ann and bob hold two each, ann came first), then bob's 1
        PublisherLedgers restored = read(new PublisherLedgers(3, 2), bytes(original));
        assertThat(restored.size()).isEqualTo(3);
        assertThat(restored.forgotten()).isEqualTo(3);
        assertThat(restored.ledgerOf("ann", 1).find(101)).isNotEqualTo(ABSENT);
        assertThat(restored.ledgerOf("bob", 2).find(202)).isNotEqualTo(ABSENT);
        assertThat(restored.ledgerOf("cy", 1).find(301)).isNotEqualTo(ABSENT);
        assertThat(restored.size()).isEqualTo(3); // none of those was made again
        // ann lost ledgers in the reading: its new one must not vouch
        assertThat(restored.ledgerOf("ann", 2).vouches()).isFalse();
    }

    @Test
    void aCorruptSnapshotIsRefusedNamingWhatIsWrong() throws IOException {
        assertThatThrownBy(() -> read(new PublisherLedgers(4, 2), new byte[] {9}))
                .isInstanceOf(IOException.class).hasMessage("unknown ledger snapshot version 9");

        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(buffer);
        out.writeByte(2); // version
        out.writeBoolean(false); // forgot any
        SnapshotFields.writeVarLong(out, 0); // principals forgotten
        SnapshotFields.writeVarLong(out, 1); // ledgers
        SnapshotFields.writeString(out, "ann");
        out.writeLong(7);
        out.writeBoolean(true); // vouches
        out.writeLong(FIRST);
        SnapshotFields.writeVarLong(out, 2); // last place in it
        SnapshotFields.writeVarLong(out, 2); // entries
        for (int sequence = 1; sequence <= 2; sequence++) {
            SnapshotFields.writeVarLong(out, 101); // twice
            SnapshotFields.writeVarLong(out, 1); // topic index 0 + 1
            SnapshotFields.writeVarLong(out, sequence + 1);
        }
        assertThatThrownBy(() -> read(new PublisherLedgers(4, 2), buffer.toByteArray()))
                .isInstanceOf(IOException.class).hasMessage("correlation id 101 twice in the ledger of publisher 7 of ann");
    }

    private static byte[] bytes(PublisherLedgers ledgers) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        ledgers.write(new DataOutputStream(buffer), Map.of(INDEXED, 0, "a", 1));
        return buffer.toByteArray();
    }

    private static PublisherLedgers read(PublisherLedgers into, byte[] snapshot) throws IOException {
        return into.read(new DataInputStream(new ByteArrayInputStream(snapshot)), new String[] {INDEXED, "a"});
    }

    @Test
    void theCorrelationIndexAgreesWithAMap() {
        Random random = new Random(1024);
        for (int capacity : new int[] {1, 2, 8, 100, 1024}) {
            PublisherLedgers.CorrelationIndex index = new PublisherLedgers.CorrelationIndex(capacity);
            Map<Integer, Integer> model = new HashMap<>();
            for (int op = 0; op < 200_000; op++) {
                // keys from a small range so that puts, removes and probing runs collide
                int key = random.nextInt(capacity * 3) * (random.nextBoolean() ? 1 : -65_537);
                if (model.size() < capacity && random.nextInt(3) > 0) {
                    int slot = random.nextInt(capacity);
                    index.put(key, slot);
                    model.put(key, slot);
                } else {
                    index.remove(key);
                    model.remove(key);
                }
                int probe = random.nextInt(capacity * 3) * (random.nextBoolean() ? 1 : -65_537);
                assertThat(index.get(probe)).isEqualTo(model.getOrDefault(probe, ABSENT));
            }
            for (Map.Entry<Integer, Integer> e : model.entrySet()) {
                assertThat(index.get(e.getKey())).isEqualTo(e.getValue());
            }
        }
    }
}
