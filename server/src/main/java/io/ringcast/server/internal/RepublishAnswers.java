package io.ringcast.server.internal;

import io.ringcast.log.PublishRefusals;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublisherLedgers;
import io.ringcast.protocol.ErrorCode;

/**
 * A single node's publishers' ledgers ({@link PublisherLedgers}, the rules a cluster's log applies
 * too), asked in-line before each publish of a publisher is sequenced, and the answer to each publish
 * they decide: the sequence its first send got, a conflict, outcome unknown, or out of order.
 * Sequencer thread only.
 */
final class RepublishAnswers {
    private final PublisherLedgers ledgers;
    private final PublishRefusals refusals;
    private final DirectedReplies replies;
    private final ServerCounters counters;
    /** The ledger of the publish {@link #screen} passed last, for {@link #recordApplied}; null for none. */
    private PublisherLedgers.Ledger screened;
    private int ledgersSeen;
    private long forgottenSeen;

    RepublishAnswers(int maxTopics, int maxLedgers, int maxLedgersPerPrincipal, DirectedReplies replies,
                     ServerCounters counters) {
        this.ledgers = new PublisherLedgers(maxLedgers, maxLedgersPerPrincipal);
        this.refusals = new PublishRefusals(maxTopics, maxLedgers, maxLedgersPerPrincipal);
        this.replies = replies;
        this.counters = counters;
    }

    /**
     * Asks the ledger of the publish's publisher, when its client gave a publisher id: numbers the
     * publish in its session's order, and answers it when the ledger decides it
     * ({@link PublisherLedgers.Ledger#screen}).
     *
     * @return whether it is to be sequenced; if not, it was answered
     */
    boolean screen(InboundEvent e) {
        screened = null;
        Session publisher = e.session;
        if (publisher == null || publisher.publisherId == 0) {
            return true;
        }
        PublisherLedgers.Ledger ledger = ledgers.ledgerOf(publisher.permissions.who(), publisher.publisherId);
        if (ledgers.size() != ledgersSeen || ledgers.forgotten() != forgottenSeen) {
            ledgersSeen = ledgers.size();
            forgottenSeen = ledgers.forgotten();
            counters.publisherLedgers(ledgersSeen, forgottenSeen);
        }
        PublishResult decided = ledger.screen(publisher.publishingSession, ++publisher.publishesDecided, e.id,
                e.republish, e.path);
        if (decided == null) {
            screened = ledger;
            return true;
        }
        if (decided.acked()) {
            // sent again after a lost connection, applied the first time: the same answer, once more
            replies.publishAck(e.session, e.id, decided.sequence());
            replies.flush();
            counters.republishesRecognised.increment();
        } else {
            refuse(e, decided);
        }
        return false;
    }

    /** Refuses a publish the rules did not apply, as a cluster's node refuses it. */
    void refuse(InboundEvent e, PublishResult decided) {
        replies.refuse(e.session, errorOf(decided.outcome()), e.id, refusals.text(decided, e.id, e.path));
    }

    /** The protocol error that carries a refusal, in both modes. */
    static ErrorCode errorOf(PublishResult.Outcome outcome) {
        return switch (outcome) {
            case CONFLICT -> ErrorCode.REPUBLISH_CONFLICT;
            case OUTCOME_UNKNOWN -> ErrorCode.PUBLISH_OUTCOME_UNKNOWN;
            case TOO_MANY_TOPICS -> ErrorCode.TOO_MANY_TOPICS;
            // its client publishes through another connection, which sends the one before it again first
            case OUT_OF_ORDER -> ErrorCode.NO_MAJORITY;
            case APPLIED, ALREADY_APPLIED -> throw new IllegalArgumentException(outcome + " is acked, not refused");
        };
    }

    /** The publish {@link #screen} passed last was applied with {@code sequence} to {@code topic} (its own path string). */
    void recordApplied(InboundEvent e, String topic, long sequence) {
        if (screened != null) {
            screened.recordApplied(e.session.publishingSession, e.id, topic, sequence, e.republish);
            screened = null;
        }
    }

    /** What publishers sent before a restart is in no ledger: a {@code REPUBLISH} of it has an unknown outcome. */
    void startedWithHistory() {
        ledgers.startedWithHistory();
    }
}
