package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.Features;

/**
 * Encodes each update once, whatever the number of its subscribers: the delta against the
 * topic's last value (deltas on, and only when smaller), the outbound frame (with the topic's
 * {@code TOPIC} definition in front when the update created it), the compressed copy of that
 * frame (compression on and a subscriber that negotiated it), and the full value that conflation
 * and the next delta need. Sequencer thread only: the delta encoder, its scratch buffer and the
 * deflater are reused.
 */
final class UpdateEncoder implements AutoCloseable {
    /** zlib level of permessage-deflate: fast, since it runs once per update on this one thread. */
    static final int COMPRESSION_LEVEL = 1;

    /** One encoded update, reused: valid until the next {@link #encode}. */
    static final class Encoded {
        /** The finished frame; one reference, for the fan-out ring. */
        ByteBuf frame;
        /** The frame compressed, one reference for the fan-out ring; or null. */
        ByteBuf compressedFrame;
        /** Offset of the {@code UPDATE} message in {@link #frame}. */
        int updateOffset;
        /**
         * Where the value starts in {@link #frame}, and its length: the full value when
         * {@link #flags} is 0 (when it holds a delta, the full value is {@link #fullValueOfDelta}).
         */
        int valueIndex;
        int valueLength;
        /** {@link UpdateFlags#DELTA} or 0. */
        int flags;
        /** A copy of the full value when the frame holds a delta (one reference, for the topic); else null. */
        ByteBuf fullValueOfDelta;
        /** The full value for sessions that fall behind (conflation on; one reference, for the ring); else null. */
        ByteBuf heldValue;
    }

    private final ByteBufAllocator alloc;
    private final ServerCounters counters;
    private final Delta.Encoder deltaEncoder = new Delta.Encoder();
    /** Reused for each update's delta; it grows to the largest delta and stays. */
    private final ByteBuf deltaScratch;
    private final Encoded encoded = new Encoded();
    private final Encoded viewed = new Encoded();
    private FrameCompressor compressor;
    private boolean compressionAnywhere;

    UpdateEncoder(ByteBufAllocator alloc, Features features, ServerCounters counters) {
        this.alloc = alloc;
        this.counters = counters;
        this.deltaScratch = alloc.heapBuffer(256);
        reload(features);
    }

    /** A hot reload: the compression threshold may have changed. */
    void reload(Features features) {
        if (compressor != null) {
            compressor.close();
        }
        compressor = new FrameCompressor(COMPRESSION_LEVEL, features.compressionMinBytes());
        compressionAnywhere = features.compressionAnywhere();
    }

    /**
     * Encodes update {@code sequence} of {@code topic}, whose value is {@code value} (not consumed):
     * {@code created} puts the topic's definition in the same frame, since everyone subscribed now is
     * new to its alias.
     */
    Encoded encode(Topic topic, boolean created, long sequence, ByteBuf value) {
        Encoded u = encoded;
        ByteBuf payload = deltaOrValue(topic, value);
        u.flags = payload == value ? 0 : UpdateFlags.DELTA;
        int payloadLength = payload.readableBytes();
        ByteBuf frame = frameAfterDefinition(alloc, topic, created, WireCodec.updateBytes(payloadLength));
        u.updateOffset = frame.writerIndex();
        u.valueIndex = u.updateOffset + WireCodec.UPDATE_OVERHEAD_BYTES;
        u.valueLength = value.readableBytes();
        WireCodec.writeUpdate(frame, topic.alias, sequence, u.flags, payload, payload.readerIndex(), payloadLength);
        u.frame = OutboundFrame.finish(frame);
        // a frame holding a delta cannot give the full value: the topic keeps a copy for the next
        // delta and for snapshots, and sessions with held-back updates need it too
        u.fullValueOfDelta = u.flags == UpdateFlags.DELTA ? copyOf(value) : null;
        if (u.fullValueOfDelta != null) {
            u.heldValue = u.fullValueOfDelta.retain();
        } else if (topic.features.conflation() != Conflation.OFF) {
            u.heldValue = frame.retainedSlice(u.valueIndex, u.valueLength);
        } else {
            u.heldValue = null;
        }
        u.compressedFrame = compressedFor(topic, topic.subscribers, frame);
        return u;
    }

    /**
     * A frame with room for a message of {@code messageBytes}, after the topic's definition when
     * {@code created}: everyone the frame goes to as the topic is made is new to its alias.
     */
    static ByteBuf frameAfterDefinition(ByteBufAllocator alloc, Topic topic, boolean created, int messageBytes) {
        ByteBuf frame = OutboundFrame.allocate(alloc, (created ? topic.definitionBytes() : 0) + messageBytes);
        if (created) {
            topic.writeDefinition(frame);
        }
        return frame;
    }

    /** The frame compressed when the topic's compression is on and one of {@code to} negotiated it (and it gains); else null. */
    private ByteBuf compressedFor(Topic topic, SubscriberSet to, ByteBuf frame) {
        return topic.features.compression() && to.anyCompressed() ? compress(frame) : null;
    }

    /**
     * Encodes update {@code sequence} of a topic through {@code view}: what the view shows of it
     * ({@code shown}'s readable bytes), flagged {@code VIEWED} and {@code flags}, after the topic's
     * definition when {@code created}; compressed when the topic's compression is on and a member
     * negotiated it; the value held for conflation as for a plain update. Never a delta: a view's
     * value is its own (a projection), and the members hold no base for one. Valid until the next call.
     */
    Encoded encodeViewed(TopicView view, ByteBuf value, boolean created, long sequence, int flags) {
        Encoded u = viewed;
        Topic topic = view.topic;
        int length = value.readableBytes();
        ByteBuf frame = frameAfterDefinition(alloc, topic, created, WireCodec.viewedUpdateBytes(length));
        u.updateOffset = frame.writerIndex();
        u.valueIndex = u.updateOffset + WireCodec.VIEWED_UPDATE_OVERHEAD_BYTES;
        u.valueLength = length;
        u.flags = flags;
        WireCodec.writeUpdate(frame, topic.alias, sequence, flags, view.view.id, value, value.readerIndex(), length);
        u.frame = OutboundFrame.finish(frame);
        u.fullValueOfDelta = null;
        u.heldValue = topic.features.conflation() != Conflation.OFF ? frame.retainedSlice(u.valueIndex, length) : null;
        u.compressedFrame = compressedFor(topic, view.subscribers, frame);
        return u;
    }

    /** The delta of {@code value} against the topic's last value when deltas are on and it is smaller; else the value. */
    private ByteBuf deltaOrValue(Topic topic, ByteBuf value) {
        if (!topic.features.deltas() || !topic.hasValue()) {
            return value;
        }
        int valueLength = value.readableBytes();
        deltaScratch.clear();
        int deltaLength = deltaEncoder.encode(topic.lastValueBuffer(), topic.lastValueIndex(), topic.lastValueLength(),
                value, value.readerIndex(), valueLength, deltaScratch, valueLength);
        if (deltaLength <= 0) {
            return value;
        }
        counters.deltaSent(valueLength - deltaLength, topic.subscribers.size());
        return deltaScratch;
    }

    /**
     * A frame of one saved {@code UPDATE}, as a restored topic's history keeps it: the message
     * starts at {@link OutboundFrame#HEADER_RESERVE_BYTES}.
     */
    ByteBuf savedUpdateFrame(int alias, long sequence, int flags, byte[] payload) {
        ByteBuf frame = OutboundFrame.allocate(alloc, WireCodec.updateBytes(payload.length));
        WireCodec.writeUpdate(frame, alias, sequence, flags, Unpooled.wrappedBuffer(payload), 0, payload.length);
        return OutboundFrame.finish(frame);
    }

    /** A direct copy of {@code value}'s readable bytes, one reference. */
    ByteBuf copyOf(ByteBuf value) {
        ByteBuf copy = alloc.directBuffer(value.readableBytes());
        copy.writeBytes(value, value.readerIndex(), value.readableBytes());
        return copy;
    }

    /**
     * A reply frame for {@code target}, compressed when it negotiated compression and the
     * features compress anywhere (and compressing gains); else {@code frame} itself.
     */
    ByteBuf compressedFor(Session target, ByteBuf frame) {
        if (!target.compressed || !compressionAnywhere) {
            return frame;
        }
        ByteBuf compressed = compress(frame);
        if (compressed == null) {
            return frame;
        }
        frame.release();
        return compressed;
    }

    private ByteBuf compress(ByteBuf frame) {
        ByteBuf compressed = compressor.compress(alloc, frame);
        counters.compressed(OutboundFrame.payloadBytes(frame),
                compressed == null ? -1 : OutboundFrame.payloadBytes(compressed));
        return compressed;
    }

    @Override
    public void close() {
        deltaScratch.release();
        compressor.close();
    }
}
