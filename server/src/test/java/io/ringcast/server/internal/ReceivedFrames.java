package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
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
    record Frame(boolean compressed, int wireBytes, List<String> messages) {
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
                out.add(decode(msg));
                if (msg instanceof ByteBuf frame) {
                    frame.skipBytes(frame.readableBytes());
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
        return out;
    }

    /** Decodes one message written to a channel; does not release it. */
    static Frame decode(Object msg) {
        if (msg instanceof CloseWebSocketFrame close) {
            return new Frame(false, 0, List.of("CLOSE " + close.statusCode() + " " + close.reasonText()));
        }
        if (msg instanceof ByteBuf frame) {
            return decodeWebSocketFrame(frame);
        }
        throw new AssertionError("not a frame: " + msg);
    }

    /** Decodes one complete server-to-client WebSocket binary frame; does not release or move it. */
    static Frame decodeWebSocketFrame(ByteBuf frame) {
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
        List<String> messages = compressed ? messages(inflate(payload)) : messages(payload.duplicate());
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
        List<String> out = new ArrayList<>();
        try {
            WireCodec.decode(payload, new Recorder(out));
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
        return flags == 0 ? "" : j + " ";
    }

    private static String text(ByteBuf frame, int index, int length) {
        return frame.toString(index, length, StandardCharsets.UTF_8);
    }

    private record Recorder(List<String> out) implements MessageHandler {
        @Override
        public void onTopic(int alias, String topicPath) {
            out.add("TOPIC " + alias + " " + topicPath);
        }

        @Override
        public void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength) {
            out.add("UPDATE " + alias + " #" + sequence + " " + flags(flags) + text(frame, valueIndex, valueLength));
        }

        @Override
        public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame,
                               int valueIndex, int valueLength) {
            out.add("SNAPSHOT " + subscriptionId + " " + alias + " #" + sequence + " " + flags(flags)
                    + text(frame, valueIndex, valueLength));
        }

        @Override
        public void onPublishAck(int correlationId, long sequence) {
            out.add("PUBLISH_ACK " + correlationId + " #" + sequence);
        }

        @Override
        public void onSubscribed(int subscriptionId, int matchedTopics) {
            out.add("SUBSCRIBED " + subscriptionId + " " + matchedTopics);
        }

        @Override
        public void onError(int code, int correlationId, String reason) {
            out.add("ERROR " + ErrorCode.of(code));
        }

        @Override
        public void onPong(long nonce) {
            out.add("PONG " + nonce);
        }
    }
}
