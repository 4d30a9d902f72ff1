package io.ringcast.protocol;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Fuzzes the frame decoder with arbitrary bytes as one frame. Under {@code mvn test} each fuzz test
 * runs once per seed in {@code src/test/resources/io/ringcast/protocol/WireCodecFuzzTestInputs/<method>/}
 * (golden frames, and every crash the fuzzer ever found); {@code scripts/fuzz.sh} fuzzes it for real.
 */
class WireCodecFuzzTest {

    /**
     * Any frame either decodes completely, each message faithfully (encoding what the handler got
     * gives the message's bytes back, or for {@code SUBSCRIBE} a message that decodes the same) or,
     * for a {@code SUBSCRIBE} whose options block is well framed, refused with
     * {@code INVALID_OPTIONS} and a reason; or it fails with a {@link ProtocolException} that has a
     * code and a reason. No other exception, and the codec neither releases nor retains the frame.
     */
    @FuzzTest(maxDuration = "2m")
    void anyFrameDecodesFaithfullyOrFailsWithACodeAndReason(byte[] bytes) {
        ByteBuf frame = Unpooled.wrappedBuffer(bytes);
        ReEncoder reEncoder = new ReEncoder();
        try {
            WireCodec.decode(frame, reEncoder);
            check(!frame.isReadable(), "decode returned with " + frame.readableBytes() + " bytes unread");
            checkEveryMessageReEncodes(bytes, reEncoder.handled);
        } catch (ProtocolException e) {
            check(e.code() == ErrorCode.MALFORMED_FRAME || e.code() == ErrorCode.UNKNOWN_MESSAGE_TYPE,
                    "a handler that accepts every message got code " + e.code());
            check(e.reason() != null && !e.reason().isBlank(), "no reason for " + e.code());
        } finally {
            check(frame.refCnt() == 1, "the codec changed the frame's refCnt to " + frame.refCnt());
            frame.release();
        }
    }

    /**
     * Walks the frame by its headers (decode accepted all of them) and compares each message with
     * what the handler received, re-encoded: equal for a message that ends with a value, a prefix
     * of the body otherwise (a newer revision may append fields, which readers skip), except that
     * a {@code TOPIC} without an incarnation comes back with incarnation 0 appended. A
     * {@code SUBSCRIBE} is compared by what decoding gives, since its resume list is a map (a path
     * named twice keeps its last sequence) and its options may come in any order; a refused one
     * must have a well-framed options block.
     */
    private static void checkEveryMessageReEncodes(byte[] frame, List<Handled> handled) {
        int offset = 0;
        int i = 0;
        while (offset < frame.length) {
            byte type = frame[offset];
            int bodyLength = (int) readU32(frame, offset + 1);
            byte[] message = Arrays.copyOfRange(frame, offset, offset + WireCodec.HEADER_BYTES + bodyLength);
            byte[] body = Arrays.copyOfRange(message, WireCodec.HEADER_BYTES, message.length);
            check(i < handled.size(), "message " + i + " at offset " + offset + " never reached the handler");
            Handled got = handled.get(i);
            if (got.refusal() != null) {
                check(type == MessageType.SUBSCRIBE, "message " + i + ": a " + MessageType.name(type) + " was refused");
                check(readU32(body, 0) == (got.subscriptionId() & 0xFFFFFFFFL), "message " + i
                        + ": refused with another subscription id");
                check(!got.refusal().isBlank(), "message " + i + ": refused without a reason");
                check(optionsBlockIsWellFramed(body), "message " + i + ": refused with a malformed options block "
                        + ByteBufUtil.hexDump(body));
            } else {
                byte[] again = got.bytes();
                check(again[0] == type, "message " + i + ": handler saw type " + again[0] + ", frame has " + type);
                byte[] againBody = Arrays.copyOfRange(again, WireCodec.HEADER_BYTES, again.length);
                boolean endsWithValue = type == MessageType.PUBLISH || type == MessageType.REPUBLISH
                        || type == MessageType.SNAPSHOT
                        || type == MessageType.UPDATE;
                boolean same;
                if (type == MessageType.SUBSCRIBE) {
                    same = decoded(message).equals(decoded(again));
                } else if (endsWithValue) {
                    same = Arrays.equals(againBody, body);
                } else if (type == MessageType.TOPIC && againBody.length == body.length + 4) {
                    // an earlier revision's TOPIC ends at its path: decoded as incarnation 0, which the writer writes
                    same = Arrays.equals(againBody, 0, body.length, body, 0, body.length)
                            && readU32(againBody, body.length) == 0;
                } else {
                    same = againBody.length <= body.length
                            && Arrays.equals(againBody, 0, againBody.length, body, 0, againBody.length);
                }
                check(same, "message " + i + " (" + MessageType.name(type) + ") does not re-encode to its bytes:\n  frame "
                        + ByteBufUtil.hexDump(body) + "\n  again " + ByteBufUtil.hexDump(againBody));
            }
            offset += WireCodec.HEADER_BYTES + bodyLength;
            i++;
        }
        check(i == handled.size(), "the handler got " + handled.size() + " messages, the frame has " + i);
    }

    /** What a server's handler records of one message. */
    private static List<String> decoded(byte[] message) {
        Recorder recorder = new Recorder();
        try {
            WireCodec.decode(Unpooled.wrappedBuffer(message), recorder.serverSide());
        } catch (ProtocolException e) {
            throw new AssertionError("a message decoded once does not decode again: " + e.reason());
        }
        return recorder.events;
    }

    /**
     * Whether the body of a {@code SUBSCRIBE} ends in a well-framed options block, read here on its
     * own: after the resume list, {@code u8 count}, then count times {@code u8 kind, u16 length} and
     * the value, ending at the end of the body.
     */
    private static boolean optionsBlockIsWellFramed(byte[] body) {
        int at = 4 + 2 + selectorLength(body);
        long resumeCount = readU32(body, at);
        at += 4;
        for (long r = 0; r < resumeCount; r++) {
            at += 2 + (((body[at] & 0xFF) << 8) | (body[at + 1] & 0xFF)) + 8;
        }
        if (at >= body.length) {
            return false;
        }
        int count = body[at++] & 0xFF;
        for (int o = 0; o < count; o++) {
            if (body.length - at < 3) {
                return false;
            }
            int length = ((body[at + 1] & 0xFF) << 8) | (body[at + 2] & 0xFF);
            at += 3 + length;
        }
        return at == body.length;
    }

    private static int selectorLength(byte[] subscribeBody) {
        return ((subscribeBody[4] & 0xFF) << 8) | (subscribeBody[5] & 0xFF);
    }

    private static long readU32(byte[] b, int i) {
        return ((b[i] & 0xFFL) << 24) | ((b[i + 1] & 0xFFL) << 16) | ((b[i + 2] & 0xFFL) << 8) | (b[i + 3] & 0xFFL);
    }

    static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    /** One message as the handler got it: encoded again, or a {@code SUBSCRIBE} it was told to refuse. */
    private record Handled(byte[] bytes, int subscriptionId, String refusal) {
    }

    /** Accepts every message type and encodes each again with {@link WireCodec}'s writers. */
    private static final class ReEncoder implements MessageHandler {
        final List<Handled> handled = new ArrayList<>();

        private void add(ByteBuf message) {
            handled.add(new Handled(ByteBufUtil.getBytes(message), 0, null));
            message.release();
        }

        private static void checkValueRange(ByteBuf frame, int index, int length) {
            check(index >= 0 && length >= 0 && index + length <= frame.writerIndex(),
                    "value range " + index + "+" + length + " outside the frame");
        }

        @Override
        public void onHello(int version, String clientName) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeHello(out, version, clientName);
            add(out);
        }

        @Override
        public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume,
                                SubscribeOptions options) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeSubscribe(out, subscriptionId, selector, resume, options);
            add(out);
        }

        @Override
        public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) {
            check(code == ErrorCode.INVALID_OPTIONS, "a SUBSCRIBE refused with " + code);
            handled.add(new Handled(null, subscriptionId, reason));
        }

        @Override
        public void onUnsubscribe(int subscriptionId) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeUnsubscribe(out, subscriptionId);
            add(out);
        }

        @Override
        public void onPublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength) {
            checkValueRange(frame, valueIndex, valueLength);
            ByteBuf out = Unpooled.buffer();
            WireCodec.writePublish(out, correlationId, topicPath, ByteBufUtil.getBytes(frame, valueIndex, valueLength));
            add(out);
        }

        @Override
        public void onRepublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength) {
            checkValueRange(frame, valueIndex, valueLength);
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeRepublish(out, correlationId, topicPath, ByteBufUtil.getBytes(frame, valueIndex, valueLength));
            add(out);
        }

        @Override
        public void onPing(long nonce) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writePing(out, nonce);
            add(out);
        }

        @Override
        public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeWelcome(out, version, sessionId, maxFrameBytes, idleTimeoutMs);
            add(out);
        }

        @Override
        public void onRemove(int correlationId, String selector) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeRemove(out, correlationId, selector);
            add(out);
        }

        @Override
        public void onTopic(int alias, String topicPath, int incarnation) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeTopic(out, alias, topicPath, incarnation);
            add(out);
        }

        @Override
        public void onTopicRemoved(int alias, long lastSequence) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeTopicRemoved(out, alias, lastSequence);
            add(out);
        }

        @Override
        public void onRemoved(int correlationId, int removedTopics) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeRemoved(out, correlationId, removedTopics);
            add(out);
        }

        @Override
        public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                               int valueIndex, int valueLength) {
            checkValueRange(frame, valueIndex, valueLength);
            ByteBuf out = Unpooled.buffer();
            if ((flags & UpdateFlags.VIEWED) != 0) {
                WireCodec.writeSnapshot(out, subscriptionId, alias, sequence, flags, viewId, frame, valueIndex,
                        valueLength);
            } else {
                check(viewId == 0, "view id " + viewId + " without the flag");
                WireCodec.writeSnapshot(out, subscriptionId, alias, sequence, flags, frame, valueIndex, valueLength);
            }
            add(out);
        }

        @Override
        public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                             int valueLength) {
            checkValueRange(frame, valueIndex, valueLength);
            ByteBuf out = Unpooled.buffer();
            if ((flags & UpdateFlags.VIEWED) != 0) {
                WireCodec.writeUpdate(out, alias, sequence, flags, viewId, frame, valueIndex, valueLength);
            } else {
                check(viewId == 0, "view id " + viewId + " without the flag");
                WireCodec.writeUpdate(out, alias, sequence, flags, frame, valueIndex, valueLength);
            }
            add(out);
        }

        @Override
        public void onView(int subscriptionId, int viewId) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeView(out, subscriptionId, viewId);
            add(out);
        }

        @Override
        public void onUnmatched(int viewId, int alias, long sequence) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeUnmatched(out, viewId, alias, sequence);
            add(out);
        }

        @Override
        public void onPublishAck(int correlationId, long sequence) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writePublishAck(out, correlationId, sequence);
            add(out);
        }

        @Override
        public void onSubscribed(int subscriptionId, int matchedTopics) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeSubscribed(out, subscriptionId, matchedTopics);
            add(out);
        }

        @Override
        public void onError(int code, int correlationId, String reason) {
            // by hand: writeError takes an ErrorCode and shortens long reasons
            ByteBuf out = Unpooled.buffer();
            out.writeByte(MessageType.ERROR);
            out.writeInt(2 + 4 + 2 + ByteBufUtil.utf8Bytes(reason));
            out.writeShort(code);
            out.writeInt(correlationId);
            WireCodec.writeString(out, reason);
            add(out);
        }

        @Override
        public void onPong(long nonce) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writePong(out, nonce);
            add(out);
        }
    }
}
