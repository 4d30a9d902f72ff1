package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.StringJoiner;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * What a client makes of the server's frames: each WebSocket frame's header checked (one whole
 * binary frame per buffer), its payload inflated when RSV1 says it is compressed (as a
 * permessage-deflate client does), and its messages decoded with {@link WireCodec} into short
 * strings that tests compare, such as {@code "UPDATE 7 #3 CONFLATED v3"}.
 */
final class ReceivedFrames {
    /** One WebSocket frame: whether it was compressed, its size on the wire, its messages in order. */
    record Frame(boolean compressed, int wireBytes, List<Received> received) {
        /** The messages as short strings, such as {@code "UPDATE 7 #3 CONFLATED v3"}. */
        List<String> messages() {
            return received.stream().map(Received::line).toList();
        }
    }

    /**
     * One message a session received. {@code id} is the subscription id (SNAPSHOT, SUBSCRIBED) or
     * the correlation id (PUBLISH_ACK, ERROR); {@code sequence} is also SUBSCRIBED's matched count
     * and PONG's nonce; {@code code} is ERROR's; {@code bytes} are the path (TOPIC), the value
     * (SNAPSHOT, UPDATE) or the reason (ERROR). {@code frame} counts the frames of one read from 0;
     * {@code frameBytes} is the payload size of the frame it came in (inflated).
     */
    /** The {@link Received#type} of a WebSocket close frame, which is no protocol message. */
    static final byte CLOSE = 0;

    record Received(byte type, int frame, boolean compressed, int frameBytes, int id, int alias, long sequence,
                    int flags, int code, byte[] bytes, int viewId) {
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
                case MessageType.SNAPSHOT -> viewId == 0 ? WireCodec.snapshotBytes(bytes.length)
                        : WireCodec.viewedSnapshotBytes(bytes.length);
                case MessageType.UPDATE -> viewId == 0 ? WireCodec.updateBytes(bytes.length)
                        : WireCodec.viewedUpdateBytes(bytes.length);
                case MessageType.VIEW -> WireCodec.VIEW_BYTES;
                case MessageType.UNMATCHED -> WireCodec.UNMATCHED_BYTES;
                case MessageType.SUBSCRIBED -> WireCodec.SUBSCRIBED_BYTES;
                case MessageType.PUBLISH_ACK -> WireCodec.PUBLISH_ACK_BYTES;
                case MessageType.ERROR -> WireCodec.errorBytes(text());
                case MessageType.PONG -> WireCodec.PONG_BYTES;
                default -> throw new IllegalArgumentException("no size for " + this);
            };
        }

        /** The short form tests compare. */
        String line() {
            return switch (type) {
                case MessageType.TOPIC -> "TOPIC " + alias + " " + text();
                case MessageType.UPDATE -> "UPDATE " + alias + " #" + sequence + " " + ReceivedFrames.flags(flags)
                        + through() + text();
                case MessageType.SNAPSHOT -> "SNAPSHOT " + id + " " + alias + " #" + sequence + " " + ReceivedFrames.flags(flags)
                        + through() + text();
                case MessageType.VIEW -> "VIEW " + id + " @" + viewId;
                case MessageType.UNMATCHED -> "UNMATCHED @" + viewId + " " + alias + " #" + sequence;
                case MessageType.PUBLISH_ACK -> "PUBLISH_ACK " + id + " #" + sequence;
                case MessageType.SUBSCRIBED -> "SUBSCRIBED " + id + " " + sequence;
                case MessageType.ERROR -> "ERROR " + ErrorCode.of(code);
                case MessageType.PONG -> "PONG " + sequence;
                case MessageType.TOPIC_REMOVED -> "TOPIC_REMOVED " + alias + " #" + sequence;
                case MessageType.REMOVED -> "REMOVED " + id + " " + sequence;
                case CLOSE -> text();
                default -> MessageType.name(type) + " " + text();
            };
        }

        /** {@code "@viewId "} for a message through a view, else nothing. */
        private String through() {
            return viewId == 0 ? "" : "@" + viewId + " ";
        }

        @Override
        public String toString() {
            return line() + " (frame " + frame + (compressed ? ", deflated)" : ")");
        }
    }

    private ReceivedFrames() {
    }

    /**
     * Reads everything the channel sent since the last read, decodes it, and releases every buffer.
     * Each buffer is consumed as a socket consumes what it writes, so a buffer shared between
     * sessions instead of duplicated would reach the next one empty.
     */
    static List<Frame> readAll(EmbeddedChannel channel) {
        List<Frame> out = new ArrayList<>();
        for (Object msg; (msg = channel.readOutbound()) != null; ) {
            try {
                out.add(decode(msg, out.size()));
                if (msg instanceof ByteBuf frame) {
                    frame.skipBytes(frame.readableBytes());
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
        return out;
    }

    /** The messages of one type, in order. */
    static List<Received> of(List<Received> messages, byte type) {
        return messages.stream().filter(m -> m.is(type)).toList();
    }

    /** The messages of one finished frame; neither releases it nor moves its indices. */
    static List<Received> messagesOf(ByteBuf frame) {
        return decodeWebSocketFrame(frame).received();
    }

    /** Whether the frame's header has RSV1 set: its payload is permessage-deflate compressed. */
    static boolean isCompressed(ByteBuf frame) {
        return (frame.getUnsignedByte(frame.readerIndex()) & 0x40) != 0;
    }

    /** The payload of one finished frame, inflated when it is compressed. */
    static byte[] payload(ByteBuf frame) {
        int length = frame.getUnsignedByte(frame.readerIndex() + 1) & 0x7F;
        int header = length == 126 ? 4 : length == 127 ? 10 : 2;
        ByteBuf payload = frame.slice(frame.readerIndex() + header, frame.readableBytes() - header);
        return ByteBufUtil.getBytes(isCompressed(frame) ? inflate(payload) : payload);
    }

    /** Every message written to {@code channel} since the last read, in order, frames flattened. */
    static List<Received> drain(EmbeddedChannel channel) {
        List<Received> out = new ArrayList<>();
        for (Frame f : readAll(channel)) {
            out.addAll(f.received());
        }
        return out;
    }

    /** Decodes one message written to a channel; does not release it. */
    static Frame decode(Object msg) {
        return decode(msg, 0);
    }

    private static Frame decode(Object msg, int frameIndex) {
        if (msg instanceof CloseWebSocketFrame close) {
            return new Frame(false, 0, List.of(new Received(CLOSE, frameIndex, false, 0, 0, 0, 0, 0,
                    close.statusCode(), ("CLOSE " + close.statusCode() + " " + close.reasonText())
                    .getBytes(StandardCharsets.UTF_8), 0)));
        }
        if (msg instanceof ByteBuf frame) {
            return decodeWebSocketFrame(frame, frameIndex);
        }
        throw new AssertionError("not a frame: " + msg);
    }

    /** Decodes one complete server-to-client WebSocket binary frame; does not release or move it. */
    static Frame decodeWebSocketFrame(ByteBuf frame) {
        return decodeWebSocketFrame(frame, 0);
    }

    private static Frame decodeWebSocketFrame(ByteBuf frame, int frameIndex) {
        int at = frame.readerIndex();
        int first = frame.getUnsignedByte(at);
        if ((first & 0x80) == 0 || (first & 0x0F) != 0x2 || (first & 0x30) != 0) {
            throw new AssertionError("not a final binary frame without RSV2/RSV3: 0x" + Integer.toHexString(first));
        }
        boolean compressed = (first & 0x40) != 0;
        int second = frame.getUnsignedByte(at + 1);
        if ((second & 0x80) != 0) {
            throw new AssertionError("a server frame must not be masked");
        }
        int headerBytes;
        long length;
        if ((second & 0x7F) < 126) {
            headerBytes = 2;
            length = second & 0x7F;
        } else if ((second & 0x7F) == 126) {
            headerBytes = 4;
            length = frame.getUnsignedShort(at + 2);
        } else {
            headerBytes = 10;
            length = frame.getLong(at + 2);
        }
        if (frame.readableBytes() != headerBytes + length) {
            throw new AssertionError("header says " + length + " payload bytes after " + headerBytes
                    + " header bytes, the buffer holds " + frame.readableBytes());
        }
        ByteBuf payload = frame.slice(at + headerBytes, (int) length);
        List<Received> messages = received(compressed ? inflate(payload) : payload.duplicate(), frameIndex, compressed);
        return new Frame(compressed, frame.readableBytes(), messages);
    }

    /** Inflates a permessage-deflate payload: the sender removed the trailing {@code 00 00 ff ff}. */
    static ByteBuf inflate(ByteBuf deflated) {
        byte[] in = new byte[deflated.readableBytes() + 4];
        deflated.getBytes(deflated.readerIndex(), in, 0, deflated.readableBytes());
        in[in.length - 2] = (byte) 0xFF;
        in[in.length - 1] = (byte) 0xFF;
        Inflater inflater = new Inflater(true);
        try {
            inflater.setInput(in);
            byte[] out = new byte[Math.max(1024, in.length * 8)];
            int n = 0;
            while (!inflater.needsInput() && !inflater.finished()) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, out.length * 2);
                }
                n += inflater.inflate(out, n, out.length - n);
            }
            return Unpooled.wrappedBuffer(out, 0, n);
        } catch (DataFormatException e) {
            throw new AssertionError("compressed payload does not inflate", e);
        } finally {
            inflater.end();
        }
    }

    /** The messages of a frame's payload, read from its reader index to its writer index. */
    static List<String> messages(ByteBuf payload) {
        return received(payload, 0, false).stream().map(Received::line).toList();
    }

    private static List<Received> received(ByteBuf payload, int frameIndex, boolean compressed) {
        List<Received> out = new ArrayList<>();
        try {
            WireCodec.decode(payload, new Recorder(frameIndex, compressed, payload.readableBytes(), out));
        } catch (ProtocolException e) {
            throw new AssertionError("undecodable payload after " + out, e);
        }
        return out;
    }

    static String flags(int flags) {
        StringJoiner j = new StringJoiner("|");
        if ((flags & UpdateFlags.GAP) != 0) {
            j.add("GAP");
        }
        if ((flags & UpdateFlags.DELTA) != 0) {
            j.add("DELTA");
        }
        if ((flags & UpdateFlags.CONFLATED) != 0) {
            j.add("CONFLATED");
        }
        if ((flags & UpdateFlags.NO_VALUE) != 0) {
            j.add("NO_VALUE");
        }
        if ((flags & UpdateFlags.VIEWED) != 0) {
            j.add("VIEWED");
        }
        return flags == 0 ? "" : j + " ";
    }

    private record Recorder(int frame, boolean compressed, int frameBytes, List<Received> out)
            implements MessageHandler {
        private void add(byte type, int id, int alias, long sequence, int flags, int code, byte[] bytes) {
            add(type, id, alias, sequence, flags, code, bytes, 0);
        }

        private void add(byte type, int id, int alias, long sequence, int flags, int code, byte[] bytes, int viewId) {
            out.add(new Received(type, frame, compressed, frameBytes, id, alias, sequence, flags, code, bytes, viewId));
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
        public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                               int valueIndex, int valueLength) {
            add(MessageType.SNAPSHOT, subscriptionId, alias, sequence, flags, 0, bytes(frame, valueIndex, valueLength),
                    viewId);
        }

        @Override
        public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                             int valueLength) {
            add(MessageType.UPDATE, 0, alias, sequence, flags, 0, bytes(frame, valueIndex, valueLength), viewId);
        }

        @Override
        public void onView(int subscriptionId, int viewId) {
            add(MessageType.VIEW, subscriptionId, 0, 0, 0, 0, new byte[0], viewId);
        }

        @Override
        public void onUnmatched(int viewId, int alias, long sequence) {
            add(MessageType.UNMATCHED, 0, alias, sequence, 0, 0, new byte[0], viewId);
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
        public void onTopicRemoved(int alias, long lastSequence) {
            add(MessageType.TOPIC_REMOVED, 0, alias, lastSequence, 0, 0, new byte[0]);
        }

        @Override
        public void onRemoved(int correlationId, int removedTopics) {
            add(MessageType.REMOVED, correlationId, 0, removedTopics, 0, 0, new byte[0]);
        }

        @Override
        public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
            add(MessageType.WELCOME, 0, 0, version, 0, 0, sessionId.getBytes(StandardCharsets.UTF_8));
        }
    }
}
