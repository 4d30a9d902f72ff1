package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;

/**
 * Holds each publisher's ledger ({@link PublisherLedgers}) and answers a {@code REPUBLISH} from
 * it: the sequence its first send got, a conflict, outcome unknown, or "apply it now". Sequencer
 * thread only.
 */
final class RepublishAnswers {
    private final PublisherLedgers ledgers;
    private final DirectedReplies replies;
    private final ServerCounters counters;
    /** {@code limits.publisherLedgers} and {@code limits.publisherLedgersPerPrincipal}, named in refusals. */
    private final int maxDetachedLedgers;
    private final int maxDetachedLedgersPerPrincipal;

    RepublishAnswers(int maxDetachedLedgers, int maxDetachedLedgersPerPrincipal, DirectedReplies replies,
                     ServerCounters counters) {
        this.ledgers = new PublisherLedgers(maxDetachedLedgers, maxDetachedLedgersPerPrincipal);
        this.maxDetachedLedgers = maxDetachedLedgers;
        this.maxDetachedLedgersPerPrincipal = maxDetachedLedgersPerPrincipal;
        this.replies = replies;
        this.counters = counters;
    }

    /** The ledger of the session's publisher, attached on its first publish; null when its client gave no publisher id. */
    PublisherLedgers.Ledger ledgerOf(Session publisher) {
        if (publisher == null || publisher.publisherId == 0) {
            return null;
        }
        if (publisher.ledger == null) {
            publisher.ledger = ledgers.attach(publisher.permissions.who(), publisher.publisherId);
            counters.publisherLedgers(ledgers.size(), ledgers.forgotten());
        }
        return publisher.ledger;
    }

    /**
     * Answers a {@code REPUBLISH} from its publisher's ledger.
     *
     * @return whether it is to be applied now; if not, it was answered
     */
    boolean appliesNow(InboundEvent e, PublisherLedgers.Ledger ledger) {
        long answer = ledger.answer(e.id, e.path);
        if (answer == PublisherLedgers.APPLY) {
            return true; // the ledger vouches that its first send was never applied
        }
        if (answer > 0) {
            // sent again after a lost connection, applied the first time: the same answer, once more
            replies.publishAck(e.session, e.id, answer);
            replies.flush();
            counters.republishesRecognised.increment();
        } else if (answer == PublisherLedgers.CONFLICT) {
            replies.refuse(e.session, ErrorCode.REPUBLISH_CONFLICT, e.id, "REPUBLISH of correlation id " + e.id + " to '"
                    + e.path + "' refused: this publisher's correlation id " + e.id + " was first published to '"
                    + ledger.topicOf(e.id) + "'; not applied");
        } else {
            ledger.recordOutcomeUnknown(e.id, e.path);
            replies.refuse(e.session, ErrorCode.PUBLISH_OUTCOME_UNKNOWN, e.id, "the server no longer knows whether publish "
                    + e.id + " to '" + e.path + "' was applied: its publisher's ledger was forgotten (a restart, or "
                    + "past limits.publisherLedgers = " + maxDetachedLedgers + " / limits.publisherLedgersPerPrincipal = "
                    + maxDetachedLedgersPerPrincipal + " while the publisher was away); it was not applied again");
        }
        return false;
    }

    /** The session closed: its ledger is kept, detached, for a reconnect. */
    void sessionClosed(Session session) {
        if (session.ledger != null) {
            ledgers.detach(session.ledger);
            session.ledger = null;
            counters.publisherLedgers(ledgers.size(), ledgers.forgotten());
        }
    }

    /** What publishers sent before a restart is in no ledger: a {@code REPUBLISH} of it has an unknown outcome. */
    void startedWithHistory() {
        ledgers.startedWithHistory();
    }
}
