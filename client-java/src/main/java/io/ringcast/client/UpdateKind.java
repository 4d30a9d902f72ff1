package io.ringcast.client;

/** How an {@link Update} came to the client. */
public enum UpdateKind {
    /** The topic's current value, sent when a subscription starts (wire {@code SNAPSHOT}). */
    SNAPSHOT,
    /** A new value published to the topic, or a replayed one after a reconnect (wire {@code UPDATE}). */
    UPDATE,
    /**
     * The topic's current value after updates that the client missed and the server could no
     * longer replay (wire {@code SNAPSHOT} with the {@code GAP} flag): values were lost to this
     * client between its last sequence and this one.
     */
    SNAPSHOT_AFTER_GAP,
    /**
     * The newest value of a topic whose older updates the server skipped for this client because
     * the client fell behind and the topic is conflated (wire {@code UPDATE} with the
     * {@code CONFLATED} flag): the sequence jumps on purpose; nothing was lost that the topic's
     * conflation policy did not allow.
     */
    CONFLATED,
    /**
     * Updates were missed and the topic keeps no value to send instead (its last-value cache is
     * off; wire {@code SNAPSHOT} with {@code GAP} and {@code NO_VALUE}): {@link Update#value()} is
     * empty, the next update brings the next value.
     */
    GAP_WITHOUT_VALUE
}
