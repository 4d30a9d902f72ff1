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
     * gives the message's bytes back), or fails with a {@link ProtocolException} that has a code
     * and a reason. No other exception, and the codec neither releases nor retains the frame.
     */
    @FuzzTest(maxDuration = "2m")
    void anyFrameDecodesFaithfullyOrFailsWithACodeAndReason(byte[] bytes) {
        ByteBuf frame = Unpooled.wrappedBuffer(bytes);
        ReEncoder reEncoder = new ReEncoder();
        try {
            WireCodec.decode(frame, reEncoder);
            check(!frame.isReadable(), "decode returned with " + frame.readableBytes() + " bytes unread");
            checkEveryMessageReEncodes(bytes, reEncoder.messages);
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
     * of the body otherwise (a newer revision may append fields, which readers skip).
     */
    private static void checkEveryMessageReEncodes(byte[] frame, List<byte[]> reEncoded) {
        int offset = 0;
        int i = 0;
        while (offset < frame.length) {
            byte type = frame[offset];
            int bodyLength = (int) readU32(frame, offset + 1);
            byte[] body = Arrays.copyOfRange(frame, offset + WireCodec.HEADER_BYTES,
                    offset + WireCodec.HEADER_BYTES + bodyLength);
            check(i < reEncoded.size(), "message " + i + " at offset " + offset + " never reached the handler");
            byte[] again = reEncoded.get(i);
            check(again[0] == type, "message " + i + ": handler saw type " + again[0] + ", frame has " + type);
            byte[] againBody = Arrays.copyOfRange(again, WireCodec.HEADER_BYTES, again.length);
            boolean endsWithValue = type == MessageType.PUBLISH || type == MessageType.REPUBLISH
                    || type == MessageType.SNAPSHOT
                    || type == MessageType.UPDATE;
            boolean same = endsWithValue
                    ? Arrays.equals(againBody, body)
                    : againBody.length <= body.length
                    && Arrays.equals(againBody, 0, againBody.length, body, 0, againBody.length);
            if (!same && type == MessageType.SUBSCRIBE && resumeCount(body) != resumeCount(againBody)) {
                // the resume list is a map, so a path named twice keeps its last sequence: compare
                // the subscription id and the selector only
                int fixed = 4 + 2 + selectorLength(body);
                same = Arrays.equals(againBody, 0, fixed, body, 0, fixed);
            }
            check(same, "message " + i + " (" + MessageType.name(type) + ") does not re-encode to its bytes:\n  frame "
                    + ByteBufUtil.hexDump(body) + "\n  again " + ByteBufUtil.hexDump(againBody));
            offset += WireCodec.HEADER_BYTES + bodyLength;
            i++;
        }
        check(i == reEncoded.size(), "the handler got " + reEncoded.size() + " messages, the frame has " + i);
    }

    private static int selectorLength(byte[] subscribeBody) {
        return ((subscribeBody[4] & 0xFF) << 8) | (subscribeBody[5] & 0xFF);
    }

    private static long resumeCount(byte[] subscribeBody) {
        return readU32(subscribeBody, 4 + 2 + selectorLength(subscribeBody));
    }

    private static long readU32(byte[] b, int i) {
        return ((b[i] & 0xFFL) << 24) | ((b[i + 1] & 0xFFL) << 16) | ((b[i + 2] & 0xFFL) << 8) | (b[i + 3] & 0xFFL);
    }

    static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    /** Accepts every message type and encodes each again with {@link WireCodec}'s writers. */
    private static final class ReEncoder implements MessageHandler {
        final List<byte[]> messages = new ArrayList<>();

        private void add(ByteBuf message) {
            messages.add(ByteBufUtil.getBytes(message));
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
        public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeSubscribe(out, subscriptionId, selector, resume);
            add(out);
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
        public void onTopic(int alias, String topicPath) {
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeTopic(out, alias, topicPath);
            add(out);
        }

        @Override
        public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame,
                               int valueIndex, int valueLength) {
            checkValueRange(frame, valueIndex, valueLength);
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeSnapshot(out, subscriptionId, alias, sequence, flags, frame, valueIndex, valueLength);
            add(out);
        }

        @Override
        public void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength) {
            checkValueRange(frame, valueIndex, valueLength);
            ByteBuf out = Unpooled.buffer();
            WireCodec.writeUpdate(out, alias, sequence, flags, frame, valueIndex, valueLength);
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
