package io.ringcast.client.internal;

import io.netty.buffer.ByteBufUtil;

/**
 * What the client knows of one topic for its whole life, across connections: the last sequence
 * it delivered (for dropping duplicates and for resume lists) and, cached, the subscriptions
 * whose selectors match. Event-loop confined (owned by {@link SubscriptionTable}).
 */
final class TopicState {
    static final ClientSubscription[] NO_SUBSCRIPTIONS = new ClientSubscription[0];

    final String path;
    final String[] segments;
    /** UTF-8 bytes of {@link #path}, for sizing resume entries. */
    final int pathBytes;
    /** The last sequence delivered; 0 before any. */
    long lastSequence;
    /**
     * The value of {@link #lastSequence} (shared with the listeners, never modified): the base of
     * the next delta. Null before any value and after a gap without one.
     */
    byte[] lastValue;
    /**
     * Open subscriptions matching this topic, valid while {@link #matchesVersion} is the
     * {@link SubscriptionTable}'s.
     */
    ClientSubscription[] matches = NO_SUBSCRIPTIONS;
    int matchesVersion = -1;

    TopicState(String path, String[] segments) {
        this.path = path;
        this.segments = segments;
        this.pathBytes = ByteBufUtil.utf8Bytes(path);
    }
}
