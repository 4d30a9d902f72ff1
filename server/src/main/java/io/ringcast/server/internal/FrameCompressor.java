package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.ByteBuffer;
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
        // deflate's worst case (stored blocks) is a few bytes per 16 KiB, plus the flush
        int room = length + (length >> 10) + 64;
        ByteBuf out = OutboundFrame.allocate(alloc, room);
        try {
            deflater.reset();
            deflater.setInput(frame.internalNioBuffer(OutboundFrame.HEADER_RESERVE_BYTES, length));
            ByteBuffer dst = out.internalNioBuffer(out.writerIndex(), room);
            int produced = deflater.deflate(dst, Deflater.SYNC_FLUSH);
            if (!deflater.needsInput() || !dst.hasRemaining() || produced < TAIL_BYTES
                    || produced - TAIL_BYTES >= length) {
                out.release();
                return null;
            }
            out.writerIndex(out.writerIndex() + produced - TAIL_BYTES);
            return OutboundFrame.finishCompressed(out);
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }

    void close() {
        deflater.end();
    }
}
