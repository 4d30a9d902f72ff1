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
    SNAPSHOT_AFTER_GAP
}
