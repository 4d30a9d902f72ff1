package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;

import java.nio.charset.StandardCharsets;

/**
 * Topics as the sequencer builds them, for tests of {@link Topic}, {@link TopicTree} and
 * {@link TopicStateFile}: history frames are encoded the way {@code TopicSequencer} encodes an
 * update (a pooled direct WebSocket frame, the first one with its {@code TOPIC} message in front),
 * and handed to the topic, which then holds their only reference.
 */
final class TopicFixtures {
    static final TopicFeatures CACHED = new TopicFeatures(true, false, false, Conflation.OFF);
    static final TopicFeatures UNCACHED = new TopicFeatures(false, false, false, Conflation.OFF);

    private TopicFixtures() {
    }

    static Topic topic(int alias, String path, int historyLength) {
        return new Topic(alias, path, path.split("/", -1), SubscriberSet.empty(1), historyLength, CACHED);
    }

    /** Sequences and records the next update of {@code topic}, holding the full {@code value}; returns its frame. */
    static ByteBuf publish(Topic topic, String value) {
        topic.sequence++;
        return encodeAndRecord(topic, 0, utf8(value), null);
    }

    /**
     * Sequences and records the next update of {@code topic} as the sequencer does with deltas on:
     * the frame holds {@code delta}, and the topic takes over a copy of {@code fullValue}. Returns
     * the copy, whose only reference the topic holds.
     */
    static ByteBuf publishDelta(Topic topic, byte[] delta, String fullValue) {
        topic.sequence++;
        ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(utf8(fullValue));
        encodeAndRecord(topic, UpdateFlags.DELTA, delta, copy);
        return copy;
    }

    /** The topic's newest value, read the way a snapshot reads it. */
    static String lastValue(Topic topic) {
        return topic.lastValueBuffer().toString(topic.lastValueIndex(), topic.lastValueLength(), StandardCharsets.UTF_8);
    }

    /** The value (or delta) bytes of update {@code seq} as its history frame holds them. */
    static String historyValue(Topic topic, long seq) {
        int valueIndex = topic.historyUpdateOffset(seq) + WireCodec.UPDATE_OVERHEAD_BYTES;
        return topic.historyFrame(seq).toString(valueIndex, topic.historyFrame(seq).writerIndex() - valueIndex,
                StandardCharsets.UTF_8);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The first update of a topic carries its {@code TOPIC} message in front, as in the sequencer. */
    private static ByteBuf encodeAndRecord(Topic topic, int flags, byte[] payload, ByteBuf fullValueOfDelta) {
        ByteBuf frame = OutboundFrame.allocate(PooledByteBufAllocator.DEFAULT, 64 + payload.length);
        if (topic.sequence == 1) {
            WireCodec.writeTopic(frame, topic.alias, topic.path);
        }
        int updateOffset = frame.writerIndex();
        WireCodec.writeUpdate(frame, topic.alias, topic.sequence, flags, Unpooled.wrappedBuffer(payload), 0,
                payload.length);
        topic.record(OutboundFrame.finish(frame), updateOffset, fullValueOfDelta);
        return frame;
    }
}
