package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/**
 * The replies a session's handler writes while it decodes what one read brought ({@code PONG},
 * {@code ERROR}, {@code WELCOME}, a cluster's {@code PUBLISH_ACK}), gathered into as few
 * WebSocket frames as they need instead of a frame, a pooled buffer and an outbound-buffer entry
 * each: 5,000 {@code PING}s in one frame cost their {@code PONG}s' 65 kB, not the 555 kB of 5,000
 * separate writes. A frame is written when the next reply would take it past
 * {@link #maxPayloadBytes}, and at the end of the read.
 *
 * <p>Thread contract: the session's event loop only (asserted).
 */
final class ReplyFrames {
    private static final int INITIAL_PAYLOAD_BYTES = 256;

    private final ChannelHandlerContext ctx;
    private final int maxPayloadBytes;
    private ByteBuf open;

    /** @param maxFrameBytes {@code limits.maxFrameBytes}: no reply frame is larger */
    ReplyFrames(ChannelHandlerContext ctx, int maxFrameBytes) {
        this.ctx = ctx;
        this.maxPayloadBytes = Math.min(OutboundFrame.GATHERED_PAYLOAD_BYTES, maxFrameBytes - OutboundFrame.HEADER_RESERVE_BYTES);
    }

    /** Where to write one more reply of about {@code bytes}: the open frame, or a new one. */
    ByteBuf room(int bytes) {
        assert ctx.executor().inEventLoop();
        if (open != null && OutboundFrame.payloadBytes(open) + bytes > maxPayloadBytes) {
            write();
        }
        if (open == null) {
            open = OutboundFrame.allocate(ctx.alloc(), Math.max(bytes, INITIAL_PAYLOAD_BYTES));
        }
        return open;
    }

    /** Bytes gathered and not handed to the channel yet. */
    int gatheredBytes() {
        return open == null ? 0 : OutboundFrame.payloadBytes(open);
    }

    /** Hands the gathered frame, if any, to the channel; not flushed. */
    void write() {
        assert ctx.executor().inEventLoop();
        if (open != null) {
            ByteBuf frame = OutboundFrame.finish(open);
            open = null;
            ctx.write(frame, ctx.voidPromise());
        }
    }

    /** Drops what was gathered: the session is closing and writes nothing more. */
    void release() {
        if (open != null) {
            open.release();
            open = null;
        }
    }
}
