package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

/**
 * Frames the sequencer's replies to one session (a subscribe's topics, snapshots and replay, a
 * republish's ack, a refusal) and puts them on the fan-out ring, so they reach the session in
 * order with the updates around them. Consecutive replies to one session share a frame of about
 * {@link OutboundFrame#GATHERED_PAYLOAD_BYTES} bytes; {@link #flush} ends the current one. Sequencer thread only.
 */
final class DirectedReplies implements AutoCloseable {
    /** The smallest buffer a reply frame starts with. */
    private static final int MIN_FRAME_BYTES = 256;

    private final ByteBufAllocator alloc;
    private final FanOutProxy fanOut;
    private final UpdateEncoder encoder;
    private final ServerCounters counters;
    /** The frame being built, or null; for {@link #target}. */
    private ByteBuf frame;
    private Session target;

    DirectedReplies(ByteBufAllocator alloc, FanOutProxy fanOut, UpdateEncoder encoder, ServerCounters counters) {
        this.alloc = alloc;
        this.fanOut = fanOut;
        this.encoder = encoder;
        this.counters = counters;
    }

    void topic(Session session, Topic topic) {
        WireCodec.writeTopic(room(session, WireCodec.topicBytes(topic.path)), topic.alias, topic.path);
    }

    /** A {@code SNAPSHOT} of the topic's last value, which it must have. */
    void snapshot(Session session, int subscriptionId, Topic topic, int flags) {
        snapshot(session, subscriptionId, topic, flags, topic.lastValueBuffer(), topic.lastValueIndex(),
                topic.lastValueLength());
    }

    void snapshot(Session session, int subscriptionId, Topic topic, int flags, ByteBuf value, int valueIndex,
                  int valueLength) {
        WireCodec.writeSnapshot(room(session, WireCodec.snapshotBytes(valueLength)), subscriptionId, topic.alias,
                topic.sequence, flags, value, valueIndex, valueLength);
    }

    /** The topic keeps no value (cache off): a snapshot that says updates were missed, and nothing more. */
    void gapWithoutValue(Session session, Topic topic) {
        WireCodec.writeSnapshot(room(session, WireCodec.snapshotBytes(0)), 0, topic.alias, topic.sequence,
                UpdateFlags.GAP | UpdateFlags.NO_VALUE, Unpooled.EMPTY_BUFFER, 0, 0);
    }

    /** The {@code UPDATE}s after {@code lastSeen}, copied from the topic's history, which must hold them. */
    void replay(Session session, Topic topic, long lastSeen) {
        for (long s = lastSeen + 1; s <= topic.sequence; s++) {
            int length = topic.historyUpdateLength(s);
            room(session, length).writeBytes(topic.historyFrame(s), topic.historyUpdateOffset(s), length);
        }
    }

    void subscribed(Session session, int subscriptionId, int matchedTopics) {
        WireCodec.writeSubscribed(room(session, WireCodec.SUBSCRIBED_BYTES), subscriptionId, matchedTopics);
    }

    void publishAck(Session session, int correlationId, long sequence) {
        WireCodec.writePublishAck(room(session, WireCodec.PUBLISH_ACK_BYTES), correlationId, sequence);
    }

    /** A refused publish, counted: the {@code ERROR} goes to the publisher (if any) in order with its acks. */
    void refuse(Session publisher, ErrorCode code, int correlationId, String reason) {
        counters.error(code);
        if (publisher != null) {
            WireCodec.writeError(room(publisher, WireCodec.errorBytes(reason)), code, correlationId, reason);
            flush();
        }
    }

    /** The frame for {@code session}, with room for a message of {@code bytes}. */
    private ByteBuf room(Session session, int bytes) {
        assert target == null || target == session : "replies to " + target + " not flushed before " + session;
        if (frame != null && OutboundFrame.payloadBytes(frame) + bytes > OutboundFrame.GATHERED_PAYLOAD_BYTES) {
            flush();
        }
        if (frame == null) {
            frame = OutboundFrame.allocate(alloc, Math.max(bytes, MIN_FRAME_BYTES));
            target = session;
        }
        return frame;
    }

    /** Puts the frame being built (if any) on the fan-out ring. */
    void flush() {
        if (frame != null) {
            ByteBuf finished = encoder.compressedFor(target, OutboundFrame.finish(frame));
            Session to = target;
            frame = null;
            target = null;
            fanOut.directed(to, finished);
        }
    }

    /** Releases a frame left unflushed. Only after the sequencer stopped. */
    @Override
    public void close() {
        if (frame != null) {
            frame.release();
            frame = null;
        }
    }
}
