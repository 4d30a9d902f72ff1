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
    /** Bytes of every message written so far: a streamed subscribe reply measures its window by it. */
    private long writtenBytes;
    /** How the frames begun from now on are flagged: {@link #holdFrames}. */
    private Boolean holdOverride;
    /** Whether the frame being built is held by the target's poller ({@link FanOutProxy#directed}). */
    private boolean frameHeld;
    /** The payload the next frame begun has room for at first: {@link #expect}. */
    private int nextFrameBytes = MIN_FRAME_BYTES;

    DirectedReplies(ByteBufAllocator alloc, FanOutProxy fanOut, UpdateEncoder encoder, ServerCounters counters) {
        this.alloc = alloc;
        this.fanOut = fanOut;
        this.encoder = encoder;
        this.counters = counters;
    }

    void topic(Session session, Topic topic) {
        topic.writeDefinition(room(session, topicBytes(topic)));
    }

    /** The size of {@link #topic}'s message. */
    static int topicBytes(Topic topic) {
        return topic.definitionBytes();
    }

    /** The size of {@link #snapshot}'s message of the topic's last value (a {@link #gapWithoutValue} when it has none). */
    static int snapshotBytes(Topic topic) {
        return WireCodec.snapshotBytes(topic.hasValue() ? topic.lastValueLength() : 0);
    }

    /** The size of {@link #replay}'s messages. */
    static long replayBytes(Topic topic, long lastSeen) {
        long bytes = 0;
        for (long s = lastSeen + 1; s <= topic.sequence; s++) {
            bytes += topic.historyUpdateLength(s);
        }
        return bytes;
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

    /** {@code VIEW}: the subscription's reply comes through view {@code viewId}; the reply's first message. */
    void view(Session session, int subscriptionId, int viewId) {
        WireCodec.writeView(room(session, WireCodec.VIEW_BYTES), subscriptionId, viewId);
    }

    /** A {@code SNAPSHOT} through view {@code viewId} of update {@code sequence} of the topic, which shows as {@code value}. */
    void snapshot(Session session, int subscriptionId, Topic topic, long sequence, int flags, int viewId, ByteBuf value,
                  int valueIndex, int valueLength) {
        WireCodec.writeSnapshot(room(session, WireCodec.viewedSnapshotBytes(valueLength)), subscriptionId, topic.alias,
                sequence, flags, viewId, value, valueIndex, valueLength);
    }

    /**
     * A rewind: a {@code SNAPSHOT} for the subscription of each update of the topic from
     * {@code from} to the newest whose value the history knows, oldest first.
     */
    void rewind(Session session, int subscriptionId, Topic topic, long from) {
        for (long s = from; s <= topic.sequence; s++) {
            if (topic.historyValueKnown(s)) {
                int length = topic.historyValueLength(s);
                WireCodec.writeSnapshot(room(session, WireCodec.snapshotBytes(length)), subscriptionId, topic.alias, s,
                        0, topic.historyValueBuffer(s), topic.historyValueIndex(s), length);
            }
        }
    }

    /** The size of {@link #rewind}'s messages. */
    static long rewindBytes(Topic topic, long from) {
        long bytes = 0;
        for (long s = from; s <= topic.sequence; s++) {
            if (topic.historyValueKnown(s)) {
                bytes += WireCodec.snapshotBytes(topic.historyValueLength(s));
            }
        }
        return bytes;
    }

    /** At most the size of a rewind through any view ({@link ViewedUpdates#rewind}). */
    static long viewedRewindBytes(Topic topic, long from) {
        long bytes = WireCodec.UNMATCHED_BYTES;
        for (long s = from; s <= topic.sequence; s++) {
            if (topic.historyValueKnown(s)) {
                bytes += WireCodec.viewedSnapshotBytes(FieldProjection.maxBytes(topic.historyValueLength(s)));
            }
        }
        return bytes;
    }

    /** At most the size of {@link #snapshot(Session, int, TopicView, int)}'s message of {@code topic} through any view. */
    static int viewedSnapshotBytes(Topic topic) {
        return WireCodec.viewedSnapshotBytes(topic.hasValue() ? FieldProjection.maxBytes(topic.lastValueLength()) : 0);
    }

    /** {@code UNMATCHED}: the view's topic's value of {@code sequence} no longer passes its filter. */
    void unmatched(Session session, TopicView view, long sequence) {
        WireCodec.writeUnmatched(room(session, WireCodec.UNMATCHED_BYTES), view.view.id, view.topic.alias, sequence);
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
    /** {@code REMOVED}: the answer to a session's {@code REMOVE}; flushed. */
    void removed(Session session, int correlationId, int removedTopics) {
        WireCodec.writeRemoved(room(session, WireCodec.REMOVED_BYTES), correlationId, removedTopics);
        flush();
    }

    void refuse(Session publisher, ErrorCode code, int correlationId, String reason) {
        counters.error(code);
        if (publisher != null) {
            WireCodec.writeError(room(publisher, WireCodec.errorBytes(reason)), code, correlationId, reason);
            flush();
        }
    }

    /**
     * Whether the target's poller holds the frames begun from now on, with the updates it holds for
     * a session whose subscribe reply is streamed ({@link SubscriberSet#holds}): {@code true} or
     * {@code false} for frames about a topic the session is a held or an ordinary member of, and
     * frames of the streamed reply itself ({@code false}); null, the default, for the rest (acks,
     * refusals): held while the target's reply is pending, so they keep their order with the acks
     * the poller holds.
     */
    void holdFrames(Boolean hold) {
        holdOverride = hold;
    }

    /**
     * {@code TOPIC_REMOVED} for every member of {@code audience}, on the fan-out ring in order with
     * the topic's updates before it; a member's conflation drops what it holds of the stream.
     */
    void topicRemoved(Audience audience) {
        flush();
        Topic topic = audience.topic();
        ByteBuf removed = OutboundFrame.allocate(alloc, WireCodec.TOPIC_REMOVED_BYTES);
        WireCodec.writeTopicRemoved(removed, topic.alias, topic.sequence);
        fanOut.update(OutboundFrame.finish(removed), null, null, audience, audience.subscribers, null, 0,
                System.nanoTime(), topic.sequence);
    }

    /** Bytes of every message written so far, flushed or not. */
    long writtenBytes() {
        return writtenBytes;
    }

    /**
     * The next frame begun is about to take {@code bytes} of messages (at most a gathered frame's):
     * it starts with room for them. A streamed reply's window fills a frame, and one that started at
     * {@link #MIN_FRAME_BYTES} was copied eight times as it doubled (10,000 subscribers of {@code #}
     * over 1,000 topics: a fifth of the sequencer's time).
     */
    void expect(int bytes) {
        nextFrameBytes = Math.max(MIN_FRAME_BYTES, Math.min(bytes, OutboundFrame.GATHERED_PAYLOAD_BYTES));
    }

    /** The frame for {@code session}, with room for a message of {@code bytes}. */
    private ByteBuf room(Session session, int bytes) {
        assert target == null || target == session : "replies to " + target + " not flushed before " + session;
        writtenBytes += bytes;
        if (frame != null && OutboundFrame.payloadBytes(frame) + bytes > OutboundFrame.GATHERED_PAYLOAD_BYTES) {
            flush();
        }
        if (frame == null) {
            frame = OutboundFrame.allocate(alloc, Math.max(bytes, nextFrameBytes));
            nextFrameBytes = MIN_FRAME_BYTES;
            target = session;
            frameHeld = holdOverride != null ? holdOverride : session.pendingRequests != null;
        }
        return frame;
    }

    /** Puts the frame being built (if any) on the fan-out ring. */
    void flush() {
        if (frame != null) {
            Session to = target;
            boolean held = frameHeld;
            fanOut.directed(to, finishFrame(), held);
        }
    }

    /**
     * Puts the frame being built, which must exist, on the fan-out ring as the last of a window of a
     * streamed subscribe reply: {@code windowBytes} of messages, written to the socket once this
     * frame is; {@code continues} when the reply goes on after it; {@code replied} when it ends with
     * a reply's {@code SUBSCRIBED}, after which the poller writes what it held for the session
     * ({@link FanOutPoller}).
     */
    void flushWindow(int windowBytes, boolean continues, boolean replied) {
        assert frame != null && !frameHeld : "a window ends with a frame of its own";
        Session to = target;
        fanOut.replyWindowEnd(to, finishFrame(), windowBytes, continues, replied);
    }

    private ByteBuf finishFrame() {
        ByteBuf finished = encoder.compressedFor(target, OutboundFrame.finish(frame));
        frame = null;
        target = null;
        return finished;
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
