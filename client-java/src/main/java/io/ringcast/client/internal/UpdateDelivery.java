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
 * Inbound {@code SNAPSHOT} and {@code UPDATE} messages to the subscriptions they are for: keeps
 * each topic's last sequence and value, drops duplicates, applies deltas.
 *
 * <p>Thread contract: event-loop confined, owned by {@link ClientSession}; listeners are called
 * from here, on the event loop.
 */
final class UpdateDelivery {
    private static final byte[] NO_VALUE = new byte[0];

    private final SubscriptionTable subscriptions;
    private long duplicatesDropped;

    UpdateDelivery(SubscriptionTable subscriptions) {
        this.subscriptions = subscriptions;
    }

    /**
     * {@code SNAPSHOT}: to the subscription it names, or with id 0 to every matching one. Always
     * delivered (it is a subscription's starting value even when the topic's sequence is known).
     * Any snapshot sets the topic's last sequence, even backwards: it is the server's current one,
     * at or above anything this session was sent, so a higher number the client remembers comes
     * from a server that lost its state and numbers the topic from 1 again.
     */
    void onSnapshot(int subscriptionId, TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                    int valueLength) {
        boolean gap = (flags & UpdateFlags.GAP) != 0;
        boolean noValue = gap && (flags & UpdateFlags.NO_VALUE) != 0;
        byte[] value = noValue ? NO_VALUE : ByteBufUtil.getBytes(frame, valueIndex, valueLength);
        t.lastSequence = sequence;
        t.lastValue = noValue ? null : value;
        UpdateKind kind = noValue ? UpdateKind.GAP_WITHOUT_VALUE
                : gap ? UpdateKind.SNAPSHOT_AFTER_GAP : UpdateKind.SNAPSHOT;
        if (subscriptionId == 0) {
            ClientSubscription[] matches = subscriptions.matching(t);
            if (matches.length > 0) {
                ReceivedUpdate u = new ReceivedUpdate(t.path, sequence, value, kind);
                for (ClientSubscription s : matches) {
                    s.deliver(u);
                }
            }
        } else {
            ClientSubscription s = subscriptions.get(subscriptionId);
            if (s != null) {
                s.deliver(new ReceivedUpdate(t.path, sequence, value, kind));
            }
        }
    }

    /**
     * {@code UPDATE}: dropped when not newer than the topic's last sequence, else (a delta applied
     * to the previous value first) to every matching subscription live on {@code connection}.
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
            value = applyDelta(t, sequence, frame, valueIndex, valueLength);
        } else {
            value = ByteBufUtil.getBytes(frame, valueIndex, valueLength);
        }
        t.lastSequence = sequence;
        t.lastValue = value;
        UpdateKind kind = (flags & UpdateFlags.CONFLATED) != 0 ? UpdateKind.CONFLATED : UpdateKind.UPDATE;
        ReceivedUpdate u = null;
        for (ClientSubscription s : subscriptions.matching(t)) {
            if (s.liveConnection == connection) {
                if (u == null) {
                    u = new ReceivedUpdate(t.path, sequence, value, kind);
                }
                s.deliver(u);
            }
        }
    }

    long duplicatesDropped() {
        return duplicatesDropped;
    }

    private static byte[] applyDelta(TopicState t, long sequence, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        if (t.lastValue == null || t.lastSequence != sequence - 1) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "delta for " + t.path + " #" + sequence
                    + " does not follow the value the client has (#" + t.lastSequence
                    + (t.lastValue == null ? ", none kept" : "") + ")");
        }
        ByteBuf target = Unpooled.buffer(Math.max(t.lastValue.length, valueLength));
        try {
            Delta.apply(Unpooled.wrappedBuffer(t.lastValue), frame.slice(valueIndex, valueLength), target);
            return ByteBufUtil.getBytes(target);
        } catch (DeltaFormatException e) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "bad delta for " + t.path + " #" + sequence + ": "
                    + e.getMessage());
        } finally {
            target.release();
        }
    }
}
