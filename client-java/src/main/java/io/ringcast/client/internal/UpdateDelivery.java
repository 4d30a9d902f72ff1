package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.DeltaFormatException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.UpdateFlags;

/**
 * Inbound {@code SNAPSHOT}, {@code UPDATE}, {@code VIEW} and {@code UNMATCHED} messages to the
 * subscriptions they are for, and a topic's removal to those that had it, as two kinds of stream:
 * <ul>
 *   <li><b>plain</b>: a message not flagged {@code VIEWED} goes to the plain subscriptions (those
 *       without a view). They share each topic's last sequence and value ({@link TopicState}),
 *       which drop duplicates and are the base of deltas;</li>
 *   <li><b>viewed</b>: a message flagged {@code VIEWED} goes to the subscriptions whose view has
 *       its view id (named by {@code VIEW} on this connection) and whose selector matches the
 *       topic. Each keeps its own last sequence and value per topic ({@link ViewedTopic}), for
 *       duplicates and deltas; its sequences jump by design, so no gap is ever inferred.</li>
 * </ul>
 * So a session with a plain and a viewed subscription on one topic delivers each exactly its own
 * stream. A {@code VIEW} for a subscription the client does not have, or a viewed message no
 * subscription has the view of, is dropped and counted: it can race an {@code UNSUBSCRIBE}.
 *
 * <p>Thread contract: event-loop confined, owned by {@link ClientSession}; listeners are called
 * from here, on the event loop.
 */
final class UpdateDelivery {
    private static final byte[] NO_VALUE = new byte[0];

    private final SubscriptionTable subscriptions;
    private long duplicatesDropped;
    private long viewMessagesDropped;

    UpdateDelivery(SubscriptionTable subscriptions) {
        this.subscriptions = subscriptions;
    }

    // ------------------------------------------------------------------ plain

    /**
     * {@code SNAPSHOT}: to the plain subscription it names, or with id 0 to every matching plain
     * one. Always delivered (it is a subscription's starting value even when the topic's sequence
     * is known). Any snapshot sets the topic's last sequence, even backwards: it is the server's
     * current one, at or above anything this session was sent, so a higher number the client
     * remembers comes from a server that lost its state and numbers the topic from 1 again.
     */
    void onSnapshot(int subscriptionId, TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                    int valueLength) {
        ReceivedUpdate u = snapshot(t, sequence, flags, frame, valueIndex, valueLength);
        t.lastSequence = sequence;
        t.lastValue = u.kind() == UpdateKind.GAP_WITHOUT_VALUE ? null : u.value();
        if (subscriptionId == 0) {
            for (ClientSubscription s : subscriptions.matching(t)) {
                if (!s.hasView()) {
                    s.deliver(u);
                }
            }
        } else {
            ClientSubscription s = subscriptions.get(subscriptionId);
            if (s != null && !s.hasView()) {
                s.deliver(u);
            }
        }
    }

    /**
     * {@code UPDATE}: dropped when not newer than the topic's last sequence, else (a delta applied
     * to the previous value first) to every matching plain subscription live on {@code connection}.
     *
     * @throws ProtocolException when a delta cannot be applied: it does not follow the value the
     *                           client has, or it is corrupt. Nothing is delivered; the connection
     *                           ends and the client resumes from its last good value.
     */
    void onUpdate(TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength,
                  int connection) throws ProtocolException {
        if (sequence <= t.lastSequence) {
            duplicatesDropped++;
            return;
        }
        byte[] value;
        if ((flags & UpdateFlags.DELTA) != 0) {
            value = applyPlainDelta(t, sequence, frame, valueIndex, valueLength);
        } else {
            value = ByteBufUtil.getBytes(frame, valueIndex, valueLength);
        }
        t.lastSequence = sequence;
        t.lastValue = value;
        UpdateKind kind = updateKind(flags);
        ReceivedUpdate u = null;
        for (ClientSubscription s : subscriptions.matching(t)) {
            if (!s.hasView() && s.liveConnection == connection) {
                if (u == null) {
                    u = new ReceivedUpdate(t.path, sequence, value, kind);
                }
                s.deliver(u);
            }
        }
    }

    // ------------------------------------------------------------------ viewed

    /**
     * {@code VIEW}: from now on, on this connection, the subscription takes the messages flagged
     * {@code VIEWED} with {@code viewId}. Dropped (and counted) for a subscription the client does
     * not have, or one that asked for no view.
     */
    void onView(int subscriptionId, long viewId) {
        ClientSubscription s = subscriptions.get(subscriptionId);
        if (s == null || !s.hasView()) {
            viewMessagesDropped++;
            return;
        }
        s.viewId = viewId;
    }

    /**
     * {@code SNAPSHOT} flagged {@code VIEWED}: to the subscription it names when that one has the
     * view, or with id 0 to every subscription with the view whose selector matches the topic.
     * Each takes it as its own stream: dropped as a duplicate where that subscription had the
     * topic at or beyond {@code sequence}, except a snapshot after a gap, which is the server's
     * current value and sets the subscription's sequence even backwards (a server that lost its
     * state numbers the topic from 1 again), as a plain one sets the topic's.
     */
    void onViewedSnapshot(int subscriptionId, long viewId, TopicState t, long sequence, int flags, ByteBuf frame,
                          int valueIndex, int valueLength) {
        ReceivedUpdate u = snapshot(t, sequence, flags, frame, valueIndex, valueLength);
        boolean gap = (flags & UpdateFlags.GAP) != 0;
        boolean taken = false;
        if (subscriptionId == 0) {
            for (ClientSubscription s : subscriptions.matching(t)) {
                if (s.viewId == viewId) {
                    taken = true;
                    takeViewedSnapshot(s, t, u, gap);
                }
            }
        } else {
            ClientSubscription s = subscriptions.get(subscriptionId);
            if (s != null && s.viewId == viewId) {
                taken = true;
                takeViewedSnapshot(s, t, u, gap);
            }
        }
        if (!taken) {
            viewMessagesDropped++;
        }
    }

    /**
     * {@code UPDATE} flagged {@code VIEWED}: to every subscription with the view whose selector
     * matches the topic and that takes updates on {@code connection}, each as its own stream:
     * dropped as a duplicate where that subscription had the topic at or beyond {@code sequence},
     * and a delta applied to the value that subscription holds of the topic.
     *
     * @throws ProtocolException when a delta cannot be applied for one of them: it holds no value
     *                           of the topic, or the delta does not fit that value or is corrupt.
     *                           Nothing is delivered to any of them; the connection ends and the
     *                           client resumes.
     */
    void onViewedUpdate(long viewId, TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                        int valueLength) throws ProtocolException {
        ClientSubscription[] matches = subscriptions.matching(t);
        UpdateKind kind = updateKind(flags);
        boolean taken = false;
        if ((flags & UpdateFlags.DELTA) != 0) {
            // every recipient's value first, each from its own base: a delta that does not apply reaches nobody
            ReceivedUpdate[] rebuilt = new ReceivedUpdate[matches.length];
            for (int i = 0; i < matches.length; i++) {
                ClientSubscription s = matches[i];
                if (s.viewId == viewId) {
                    taken = true;
                    if (takesViewed(s, t, sequence)) {
                        rebuilt[i] = new ReceivedUpdate(t.path, sequence,
                                applyViewedDelta(s, t, sequence, frame, valueIndex, valueLength), kind);
                    }
                }
            }
            for (int i = 0; i < matches.length; i++) {
                if (rebuilt[i] != null) {
                    takeViewed(matches[i], t, rebuilt[i]);
                }
            }
        } else {
            ReceivedUpdate u = null;
            for (ClientSubscription s : matches) {
                if (s.viewId == viewId) {
                    taken = true;
                    if (takesViewed(s, t, sequence)) {
                        if (u == null) {
                            byte[] value = ByteBufUtil.getBytes(frame, valueIndex, valueLength);
                            u = new ReceivedUpdate(t.path, sequence, value, kind);
                        }
                        takeViewed(s, t, u);
                    }
                }
            }
        }
        if (!taken) {
            viewMessagesDropped++;
        }
    }

    /**
     * {@code UNMATCHED}: the topic's value of {@code sequence} no longer passes the view's filter.
     * To every subscription with the view whose selector matches the topic, unless a duplicate
     * there (a rewind's last message, or a resume's); it records {@code sequence} as that
     * subscription's last of the topic.
     */
    void onUnmatched(long viewId, TopicState t, long sequence) {
        boolean taken = false;
        for (ClientSubscription s : subscriptions.matching(t)) {
            if (s.viewId == viewId) {
                taken = true;
                if (takesViewed(s, t, sequence)) {
                    s.viewedTopic(t).lastSequence = sequence;
                    s.unmatched(t.path, sequence);
                }
            }
        }
        if (!taken) {
            viewMessagesDropped++;
        }
    }

    // ------------------------------------------------------------------ removals

    /**
     * {@code TOPIC_REMOVED}: tells each subscription that received the topic, once, then forgets
     * the topic ({@link SubscriptionTable#forget}), so that a topic created again at the path is
     * delivered from sequence 1 rather than dropped as duplicates of the old one. A topic forgotten
     * already (a second {@code TOPIC_REMOVED}, one per view of it) tells nobody again.
     */
    void onTopicRemoved(TopicState t, long lastSequence, int connection) {
        if (t.removed) {
            return;
        }
        for (ClientSubscription s : subscriptions.matching(t)) {
            if (received(s, t, connection)) {
                s.removed(t.path, lastSequence);
            }
        }
        subscriptions.forget(t);
    }

    /**
     * A {@code TOPIC} named the topic's path with another incarnation than the one the client
     * holds: the topic was removed (and the path created again) while the client could not hear
     * it. Told as {@link #onTopicRemoved} with the last sequence the client received of it, which
     * is all it knows.
     */
    void onIncarnationReplaced(TopicState t, int connection) {
        long lastSequence = t.lastSequence;
        for (ClientSubscription s : subscriptions.matching(t)) {
            ViewedTopic v = s.hasView() ? s.viewedTopics.get(t) : null;
            if (v != null) {
                lastSequence = Math.max(lastSequence, v.lastSequence);
            }
        }
        onTopicRemoved(t, lastSequence, connection);
    }

    /**
     * Whether the subscription received the topic: through its view, when it holds a sequence of
     * it there; a plain one shares the topic's stream, so it did when something of it was
     * delivered and the subscription takes updates on {@code connection} (one whose
     * {@code SUBSCRIBE} is not answered yet has not had the topic).
     */
    private static boolean received(ClientSubscription s, TopicState t, int connection) {
        if (s.hasView()) {
            return s.viewedTopics.containsKey(t);
        }
        return t.lastSequence > 0 && s.liveConnection == connection;
    }

    // ------------------------------------------------------------------ diagnostics

    /** Plain and viewed messages dropped because their subscriptions had that sequence of the topic already. */
    long duplicatesDropped() {
        return duplicatesDropped;
    }

    /** {@code VIEW}s for no subscription with a view, and viewed messages no subscription with their view matched. */
    long viewMessagesDropped() {
        return viewMessagesDropped;
    }

    // ------------------------------------------------------------------ private

    private static ReceivedUpdate snapshot(TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                                           int valueLength) {
        boolean gap = (flags & UpdateFlags.GAP) != 0;
        boolean noValue = gap && (flags & UpdateFlags.NO_VALUE) != 0;
        byte[] value = noValue ? NO_VALUE : ByteBufUtil.getBytes(frame, valueIndex, valueLength);
        UpdateKind kind = noValue ? UpdateKind.GAP_WITHOUT_VALUE
                : gap ? UpdateKind.SNAPSHOT_AFTER_GAP : UpdateKind.SNAPSHOT;
        return new ReceivedUpdate(t.path, sequence, value, kind);
    }

    private static UpdateKind updateKind(int flags) {
        return (flags & UpdateFlags.CONFLATED) != 0 ? UpdateKind.CONFLATED : UpdateKind.UPDATE;
    }

    private void takeViewedSnapshot(ClientSubscription s, TopicState t, ReceivedUpdate u, boolean gap) {
        if (!gap) {
            ViewedTopic v = s.viewedTopics.get(t);
            if (v != null && u.sequence() <= v.lastSequence) {
                duplicatesDropped++;
                return;
            }
        }
        takeViewed(s, t, u);
    }

    /**
     * Whether a subscription with the view takes a viewed update or {@code UNMATCHED}: it does from
     * the {@code VIEW} that starts its reply on (the callers match its view id, which each re-sent
     * {@code SUBSCRIBE} clears), so what its reply holds reaches it, a rewind's closing
     * {@code UNMATCHED} included; unless it had the topic at or beyond {@code sequence} already (a
     * duplicate, counted).
     */
    private boolean takesViewed(ClientSubscription s, TopicState t, long sequence) {
        ViewedTopic v = s.viewedTopics.get(t);
        if (v != null && sequence <= v.lastSequence) {
            duplicatesDropped++;
            return false;
        }
        return true;
    }

    private static void takeViewed(ClientSubscription s, TopicState t, ReceivedUpdate u) {
        ViewedTopic v = s.viewedTopic(t);
        v.lastSequence = u.sequence();
        v.lastValue = u.kind() == UpdateKind.GAP_WITHOUT_VALUE ? null : u.value();
        s.deliver(u);
    }

    /** A plain delta applies to the topic's value of {@code sequence - 1}, which the client must have. */
    private static byte[] applyPlainDelta(TopicState t, long sequence, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        if (t.lastValue == null || t.lastSequence != sequence - 1) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "delta for " + t.path + " #" + sequence
                    + " does not follow the value the client has (#" + t.lastSequence
                    + (t.lastValue == null ? ", none kept" : "") + ")");
        }
        return rebuild(t.lastValue, t.path, sequence, frame, valueIndex, valueLength);
    }

    /**
     * A viewed delta applies to the last value the subscription received of the topic through its
     * view, whatever its sequence (they jump); the delta's base length and checksum catch a base
     * that is not the server's.
     */
    private static byte[] applyViewedDelta(ClientSubscription s, TopicState t, long sequence, ByteBuf frame,
                                           int valueIndex, int valueLength) throws ProtocolException {
        ViewedTopic v = s.viewedTopics.get(t);
        if (v == null || v.lastValue == null) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "delta for " + t.path + " #" + sequence
                    + " through view " + s.viewId + ": subscription " + s.id + " holds no value of the topic"
                    + " to apply it to");
        }
        return rebuild(v.lastValue, t.path, sequence, frame, valueIndex, valueLength);
    }

    private static byte[] rebuild(byte[] base, String path, long sequence, ByteBuf frame, int valueIndex,
                                  int valueLength) throws ProtocolException {
        ByteBuf target = Unpooled.buffer(Math.max(base.length, valueLength));
        try {
            Delta.apply(Unpooled.wrappedBuffer(base), frame.slice(valueIndex, valueLength), target);
            return ByteBufUtil.getBytes(target);
        } catch (DeltaFormatException e) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "bad delta for " + path + " #" + sequence + ": "
                    + e.getMessage());
        } finally {
            target.release();
        }
    }
}
