package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Builds complete server-to-client WebSocket binary frames (header and payload) in one pooled
 * buffer, so that a frame encoded once can be written as is to every subscriber: the bytes of an
 * unmasked server frame are the same for every connection, so no per-subscriber encoder work or
 * copy is needed. Such buffers are written below Netty's WebSocket encoder, which passes plain
 * {@code ByteBuf}s through untouched.
 *
 * <p>Usage: {@link #allocate} reserves room for the longest header, the caller appends protocol
 * messages, and {@link #finish} writes the real header just in front of the payload and moves the
 * reader index to it: no payload is moved.
 */
final class OutboundFrame {
    /** Room reserved for the longest header: 2 bytes plus a 64-bit length. */
    static final int HEADER_RESERVE_BYTES = 10;
    /**
     * The largest payload of a frame that gathers several messages (a run of updates, a subscribe's
     * replies, the replies to one read): small enough for any client, large enough to batch a flood.
     * A single larger message still travels, in a frame of its own.
     */
    static final int GATHERED_PAYLOAD_BYTES = 64 * 1024;
    private static final int FIN_BINARY = 0x82;
    /** FIN, RSV1 (the permessage-deflate "compressed" bit), binary. */
    private static final int FIN_RSV1_BINARY = 0xC2;

    private OutboundFrame() {
    }

    /** A buffer for one frame whose payload will be about {@code payloadBytes} long. */
    static ByteBuf allocate(ByteBufAllocator alloc, int payloadBytes) {
        ByteBuf buf = alloc.directBuffer(HEADER_RESERVE_BYTES + payloadBytes);
        buf.writerIndex(HEADER_RESERVE_BYTES);
        return buf;
    }

    /** Bytes of payload written so far into a buffer from {@link #allocate}. */
    static int payloadBytes(ByteBuf frame) {
        return frame.writerIndex() - HEADER_RESERVE_BYTES;
    }

    /** Appends the payload (the messages) of {@code frame}, made by {@link #allocate}, to {@code gathered}. */
    static void appendPayload(ByteBuf gathered, ByteBuf frame) {
        gathered.writeBytes(frame, HEADER_RESERVE_BYTES, payloadBytes(frame));
    }

    /** Writes the WebSocket header in front of the payload; the buffer then holds exactly one frame. */
    static ByteBuf finish(ByteBuf frame) {
        return finish(frame, FIN_BINARY);
    }

    /** As {@link #finish(ByteBuf)}, for a payload compressed by permessage-deflate: the header has RSV1 set. */
    static ByteBuf finishCompressed(ByteBuf frame) {
        return finish(frame, FIN_RSV1_BINARY);
    }

    /**
     * The payload (the messages) of a frame {@link #finish(ByteBuf)} made, without its header: a
     * slice sharing the frame's bytes, for a stage that reads what was written to a session rather
     * than sending it ({@link HttpPublisher}).
     */
    static ByteBuf payload(ByteBuf frame) {
        int start = frame.readerIndex();
        int length = frame.getUnsignedByte(start + 1) & 0x7F;
        int header = length < 126 ? 2 : length == 126 ? 4 : 10;
        return frame.slice(start + header, frame.readableBytes() - header);
    }

    private static ByteBuf finish(ByteBuf frame, int firstByte) {
        int length = frame.writerIndex() - HEADER_RESERVE_BYTES;
        int start;
        if (length < 126) {
            start = HEADER_RESERVE_BYTES - 2;
            frame.setByte(start, firstByte);
            frame.setByte(start + 1, length);
        } else if (length <= 0xFFFF) {
            start = HEADER_RESERVE_BYTES - 4;
            frame.setByte(start, firstByte);
            frame.setByte(start + 1, 126);
            frame.setShort(start + 2, length);
        } else {
            start = 0;
            frame.setByte(0, firstByte);
            frame.setByte(1, 127);
            frame.setLong(2, length);
        }
        frame.readerIndex(start);
        return frame;
    }
}
