package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.WireCodec;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Reads back what the server wrote to an {@link EmbeddedChannel}: whole WebSocket frames as
 * {@link OutboundFrame} builds them (inflated when permessage-deflate compressed them), decoded
 * into {@link Received} messages. Releases every buffer it reads.
 */
final class ReceivedFrames {
    private ReceivedFrames() {
    }

    /** The messages of one type, in order. */
    static List<Received> of(List<Received> messages, byte type) {
        return messages.stream().filter(m -> m.is(type)).toList();
    }

    /** Everything written to {@code channel} since the last drain, in order. */
    static List<Received> drain(EmbeddedChannel channel) {
        List<Received> out = new ArrayList<>();
        int frameIndex = 0;
        for (Object msg = channel.readOutbound(); msg != null; msg = channel.readOutbound()) {
            try {
                if (msg instanceof ByteBuf frame) {
                    decodeFrame(frame, frameIndex++, out);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
        return out;
    }

    /** The messages of one finished frame (its readable bytes); neither releases it nor moves its indices. */
    static List<Received> decode(ByteBuf frame) {
        List<Received> out = new ArrayList<>();
        decodeFrame(frame, 0, out);
        return out;
    }

    /** Whether the frame's header has RSV1 set: its payload is permessage-deflate compressed. */
    static boolean isCompressed(ByteBuf frame) {
        return (frame.getUnsignedByte(frame.readerIndex()) & 0x40) != 0;
    }

    /** The payload of one finished frame, inflated when it is compressed. */
    static byte[] payload(ByteBuf frame) {
        int length = frame.getUnsignedByte(frame.readerIndex() + 1) & 0x7F;
        int header = length == 126 ? 4 : length == 127 ? 10 : 2;
        byte[] payload = new byte[frame.readableBytes() - header];
        frame.getBytes(frame.readerIndex() + header, payload);
        return isCompressed(frame) ? inflate(payload) : payload;
    }

    private static void decodeFrame(ByteBuf frame, int frameIndex, List<Received> out) {
        byte[] payload = payload(frame);
        ByteBuf messages = Unpooled.wrappedBuffer(payload);
        try {
            WireCodec.decode(messages, new Recorder(frameIndex, isCompressed(frame), payload.length, out));
        } catch (ProtocolException e) {
            throw new AssertionError("the server wrote a frame that does not decode: " + e.getMessage(), e);
        }
    }

    private static byte[] inflate(byte[] deflated) {
        Inflater inflater = new Inflater(true);
        try {
            ByteArrayOutputStream tail = new ByteArrayOutputStream();
            tail.writeBytes(deflated);
            tail.writeBytes(new byte[] {0, 0, (byte) 0xFF, (byte) 0xFF}); // RFC 7692 7.2.2
            inflater.setInput(tail.toByteArray());
            ByteArrayOutputStream plain = new ByteArrayOutputStream();
            byte[] chunk = new byte[4096];
            int n;
            while ((n = inflater.inflate(chunk)) > 0) {
                plain.write(chunk, 0, n);
            }
            return plain.toByteArray();
        } catch (DataFormatException e) {
            throw new AssertionError("a compressed frame does not inflate", e);
        } finally {
            inflater.end();
        }
    }

    /**
     * One message a session received. {@code id} is the subscription id (SNAPSHOT, SUBSCRIBED) or
     * the correlation id (PUBLISH_ACK, ERROR); {@code sequence} is also SUBSCRIBED's matched count;
     * {@code code} is ERROR's; {@code text} is the path (TOPIC), value (SNAPSHOT, UPDATE) or reason (ERROR);
     * {@code frameBytes} is the payload size of the frame it came in (inflated).
     */
    record Received(byte type, int frame, boolean compressed, int frameBytes, int id, int alias, long sequence,
                    int flags, int code, byte[] bytes) {
        String text() {
            return new String(bytes, StandardCharsets.UTF_8);
        }

        boolean is(byte messageType) {
            return type == messageType;
        }

        /** The bytes this message took in its frame, by the codec's own sizes. */
        int wireBytes() {
            return switch (type) {
                case MessageType.TOPIC -> WireCodec.topicBytes(text());
                case MessageType.SNAPSHOT -> WireCodec.snapshotBytes(bytes.length);
                case MessageType.UPDATE -> WireCodec.updateBytes(bytes.length);
                case MessageType.SUBSCRIBED -> WireCodec.SUBSCRIBED_BYTES;
                case MessageType.PUBLISH_ACK -> WireCodec.PUBLISH_ACK_BYTES;
                case MessageType.ERROR -> WireCodec.errorBytes(text());
                case MessageType.PONG -> WireCodec.PONG_BYTES;
                default -> throw new IllegalArgumentException("no size for " + this);
            };
        }

        @Override
        public String toString() {
            return MessageType.name(type) + "{frame " + frame + (compressed ? " deflated" : "") + ", id " + id
                    + ", alias " + alias + ", seq " + sequence + ", flags " + flags + ", code " + code + ", '"
                    + text() + "'}";
        }
    }

    private record Recorder(int frame, boolean compressed, int frameBytes, List<Received> out) implements MessageHandler {
        private void add(byte type, int id, int alias, long sequence, int flags, int code, byte[] bytes) {
            out.add(new Received(type, frame, compressed, frameBytes, id, alias, sequence, flags, code, bytes));
        }

        private static byte[] bytes(ByteBuf buf, int index, int length) {
            byte[] b = new byte[length];
            buf.getBytes(index, b);
            return b;
        }

        @Override
        public void onTopic(int alias, String topicPath) {
            add(MessageType.TOPIC, 0, alias, 0, 0, 0, topicPath.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame, int valueIndex,
                               int valueLength) {
            add(MessageType.SNAPSHOT, subscriptionId, alias, sequence, flags, 0, bytes(frame, valueIndex, valueLength));
        }

        @Override
        public void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength) {
            add(MessageType.UPDATE, 0, alias, sequence, flags, 0, bytes(frame, valueIndex, valueLength));
        }

        @Override
        public void onPublishAck(int correlationId, long sequence) {
            add(MessageType.PUBLISH_ACK, correlationId, 0, sequence, 0, 0, new byte[0]);
        }

        @Override
        public void onSubscribed(int subscriptionId, int matchedTopics) {
            add(MessageType.SUBSCRIBED, subscriptionId, 0, matchedTopics, 0, 0, new byte[0]);
        }

        @Override
        public void onError(int code, int correlationId, String reason) {
            add(MessageType.ERROR, correlationId, 0, 0, 0, code, reason.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void onPong(long nonce) {
            add(MessageType.PONG, 0, 0, nonce, 0, 0, new byte[0]);
        }

        @Override
        public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
            add(MessageType.WELCOME, 0, 0, version, 0, 0, sessionId.getBytes(StandardCharsets.UTF_8));
        }
    }
}
