package io.ringcast.client.internal;

import io.netty.buffer.ByteBufUtil;

/**
 * What the client knows of one topic for its life across connections, or until the topic is
 * removed: the last sequence it delivered (for dropping duplicates and for resume lists), the
 * topic's incarnation and, cached, the subscriptions whose selectors match. A removed topic's
 * state is dropped, not reset: a topic created again at the path gets a new one. Event-loop
 * confined (owned by {@link SubscriptionTable}).
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
     * The incarnation its {@code TOPIC} named (a {@code u32}): another one for the same path means
     * this topic was removed and the path created again. 0: not known (a server of no incarnations).
     */
    int incarnation;
    /**
     * Set once the topic was removed and this state forgotten: an alias that still names it (a
     * second {@code TOPIC_REMOVED}) tells nobody again.
     */
    boolean removed;
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
