package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.util.zip.Deflater;

/**
 * Compresses a finished {@link OutboundFrame} into a permessage-deflate frame (RFC 7692): the
 * payload deflated on its own (the server negotiates {@code server_no_context_takeover}, so no
 * message depends on an earlier one), the final empty block's {@code 00 00 ff ff} removed, RSV1
 * set. Because it depends on no connection's state, one compressed frame serves every subscriber
 * that negotiated compression, like the plain frame serves the others: compressed once per update,
 * not once per subscriber.
 *
 * <p>Owned by one thread (the sequencer): the deflater is reused.
 */
final class FrameCompressor {
    private static final int TAIL_BYTES = 4; // 00 00 ff ff, the empty stored block of the sync flush

    private final Deflater deflater;
    private final int minBytes;
    private byte[] input = new byte[1024];
    private byte[] output = new byte[1024];

    /**
     * @param level    zlib level, 1 (fastest) to 9
     * @param minBytes payloads shorter than this are not compressed
     */
    FrameCompressor(int level, int minBytes) {
        this.deflater = new Deflater(level, true);
        this.minBytes = minBytes;
    }

    /**
     * A compressed copy of {@code frame}, or null when the payload is below the threshold or would
     * not get smaller. {@code frame} is not changed and keeps its reference.
     */
    ByteBuf compress(ByteBufAllocator alloc, ByteBuf frame) {
        int length = OutboundFrame.payloadBytes(frame);
        if (length < minBytes) {
            return null;
        }
        // through reused arrays: a NIO view of a fresh pooled buffer would be one allocation per update
        if (input.length < length) {
            input = new byte[Math.max(length, input.length * 2)];
        }
        // deflate's worst case (stored blocks) is a few bytes per 16 KiB, plus the flush
        int room = length + (length >> 10) + 64;
        if (output.length < room) {
            output = new byte[Math.max(room, output.length * 2)];
        }
        frame.getBytes(OutboundFrame.HEADER_RESERVE_BYTES, input, 0, length);
        deflater.reset();
        deflater.setInput(input, 0, length);
        int produced = deflater.deflate(output, 0, room, Deflater.SYNC_FLUSH);
        if (!deflater.needsInput() || produced == room || produced < TAIL_BYTES || produced - TAIL_BYTES >= length) {
            return null; // did not fit, or does not pay
        }
        ByteBuf out = OutboundFrame.allocate(alloc, produced - TAIL_BYTES);
        out.writeBytes(output, 0, produced - TAIL_BYTES);
        return OutboundFrame.finishCompressed(out);
    }

    void close() {
        deflater.end();
    }
}
