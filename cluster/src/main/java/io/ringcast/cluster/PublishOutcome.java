package io.ringcast.cluster;

/** How a publish handed to {@link ClusterNode#publish} ended. */
public enum PublishOutcome {
    /**
     * Committed on a majority and applied, with the topic sequence given; or, for a publish sent
     * again with the same publisher id and correlation id, applied before with that sequence. Told
     * only once this node has applied the entry too: its {@code UpdateSink} has the update.
     */
    ACKED,
    /** Its correlation id was first used for another topic (named in the callback): not applied. */
    CONFLICT,
    /** A {@code REPUBLISH} whose publisher's ledger was forgotten: whether it was applied before is unknown. */
    OUTCOME_UNKNOWN,
    /** It would have created a topic beyond {@code limits.maxTopics}: not applied. */
    TOO_MANY_TOPICS,
    /**
     * No leader this node can reach (an election; it is on the minority side; or the leader has
     * not answered it for {@code failureDetectionMs}): not submitted.
     */
    NO_MAJORITY,
    /** Not committed within the submit timeout (or its entry failed): it may or may not be applied. */
    TIMED_OUT,
    /**
     * Not applied: a publish before it in its session never reached the log (it may have gone to a
     * leader that died), and it must not overtake that one, which the client sends again first.
     */
    OUT_OF_ORDER
}
