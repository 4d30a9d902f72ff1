package io.ringcast.log;

/**
 * What was decided for one publish ({@link PublisherLedgers.Ledger#screen}, then its topic's bounds):
 * on a single node, in-line by its sequencer; in a cluster, by a group's log for one publish of an
 * entry, or one removal, as the node that submitted it reads it from the entry's response.
 * A removal is always {@link Outcome#APPLIED}: with the removed topic's last sequence, or 0 when it
 * removed nothing.
 *
 * @param outcome   what happened
 * @param sequence  the topic sequence for {@link Outcome#APPLIED} and {@link Outcome#ALREADY_APPLIED}, else 0
 *                  (for a removal, see above)
 * @param firstPath for {@link Outcome#CONFLICT}, the topic the correlation id was first published to, else null
 */
public record PublishResult(Outcome outcome, long sequence, String firstPath) {

    /** The outcomes, with their codes in the response (never renumber: they are on the wire). */
    public enum Outcome {
        /** Applied now with {@code sequence}: ack it. */
        APPLIED(1),
        /** Applied before with {@code sequence} (a publish sent again): ack it with that sequence; not applied again. */
        ALREADY_APPLIED(2),
        /** Its correlation id was first published to {@code firstPath}: {@code REPUBLISH_CONFLICT}; not applied. */
        CONFLICT(3),
        /** A {@code REPUBLISH} whose publisher's ledger was forgotten: {@code PUBLISH_OUTCOME_UNKNOWN}; not applied. */
        OUTCOME_UNKNOWN(4),
        /** It would have created a topic beyond the bound: {@code TOO_MANY_TOPICS}; not applied. */
        TOO_MANY_TOPICS(5),
        /**
         * The publish before it in its session never reached the log (it went to a leader that died,
         * say): not applied, so that it does not overtake that one, which its client sends again
         * first, through another connection.
         */
        OUT_OF_ORDER(6);

        private final int code;

        Outcome(int code) {
            this.code = code;
        }

        /** Its code in a cluster entry's response. */
        public int code() {
            return code;
        }

        /** The outcome of a code, or null for none. */
        public static Outcome ofCode(int code) {
            for (Outcome o : values()) {
                if (o.code == code) {
                    return o;
                }
            }
            return null;
        }
    }

    public static final PublishResult OUTCOME_UNKNOWN = new PublishResult(Outcome.OUTCOME_UNKNOWN, 0, null);
    public static final PublishResult TOO_MANY_TOPICS = new PublishResult(Outcome.TOO_MANY_TOPICS, 0, null);
    public static final PublishResult OUT_OF_ORDER = new PublishResult(Outcome.OUT_OF_ORDER, 0, null);

    public static PublishResult applied(long sequence) {
        return new PublishResult(Outcome.APPLIED, sequence, null);
    }

    public static PublishResult alreadyApplied(long sequence) {
        return new PublishResult(Outcome.ALREADY_APPLIED, sequence, null);
    }

    public static PublishResult conflict(String firstPath) {
        return new PublishResult(Outcome.CONFLICT, 0, firstPath);
    }

    /** Whether the publisher gets a {@code PUBLISH_ACK} with {@link #sequence}. */
    public boolean acked() {
        return outcome == Outcome.APPLIED || outcome == Outcome.ALREADY_APPLIED;
    }
}
