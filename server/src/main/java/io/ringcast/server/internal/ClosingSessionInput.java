package io.ringcast.server.internal;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * The pipeline's head once a session is closing ({@link Session#closeWithError}): what the client
 * still sends is read (so that the kernel does not answer it with a reset, which could destroy the
 * {@code ERROR} and close frame the client has not read yet) and dropped as it arrives, before any
 * TLS, WebSocket or message decoding. A client flooding a session that is being closed, such as a
 * slow consumer that goes on sending, then costs its event loop a read and a release per buffer:
 * decoding (unmasking) megabytes only to drop them kept one loop from serving its other sessions,
 * new ones' {@code HELLO}s included. Stateless, so one instance serves every channel.
 */
@ChannelHandler.Sharable
final class ClosingSessionInput extends ChannelInboundHandlerAdapter {
    static final String NAME = "closing-session-input";
    static final ClosingSessionInput INSTANCE = new ClosingSessionInput();

    private ClosingSessionInput() {
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
    }
}
