package io.ringcast.server.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

/**
 * Netty's {@link WebSocketServerProtocolHandler} (upgrade at {@code /ws}, close and ping frames),
 * except that an exception from the WebSocket frame decoder (an oversized or corrupt frame) is
 * passed on to the {@link SessionHandler} without closing the channel here.
 *
 * <p>Why: Netty's handler closes the channel right after passing the exception on. With the rest
 * of an oversized frame still unread, that close makes the kernel send a reset, which can destroy
 * the session's {@code ERROR} and close frame in the peer's receive buffer before the peer reads
 * them. The session closes the connection itself, once they are out or after its grace
 * ({@link SessionHandler#closeWithError}), and closes at once for everything else.
 */
final class WebSocketUpgradeHandler extends WebSocketServerProtocolHandler {
    WebSocketUpgradeHandler(WebSocketServerProtocolConfig config) {
        super(config);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (cause instanceof WebSocketHandshakeException) {
            super.exceptionCaught(ctx, cause); // answers 400 and closes
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }
}
