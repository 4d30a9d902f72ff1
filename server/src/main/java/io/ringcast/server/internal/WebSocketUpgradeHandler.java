package io.ringcast.server.internal;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

import java.util.List;

/**
 * Netty's {@link WebSocketServerProtocolHandler} (upgrade at {@code /ws}, close and ping frames),
 * except that an exception from the WebSocket frame decoder (an oversized or corrupt frame) is
 * passed on to the {@link SessionHandler} without closing the channel here.
 *
 * <p>Why: Netty's handler closes the channel right after passing the exception on. With the rest
 * of an oversized frame still unread, that close makes the kernel send a reset, which can destroy
 * the session's {@code ERROR} and close frame in the peer's receive buffer before the peer reads
 * them. The session closes the connection itself, once they are out or after its grace
 * ({@link Session#closeWithError}), and closes at once for everything else.
 *
 * <p>A close frame whose status may not be sent on the wire is answered with 1002 (protocol
 * error), not echoed (RFC 6455 7.4.2). Netty's decoder refuses the reserved codes below 3000 but
 * takes every code from 3000 up, and its handler echoes them. The channel's event loop only.
 */
final class WebSocketUpgradeHandler extends WebSocketServerProtocolHandler {
    WebSocketUpgradeHandler(WebSocketServerProtocolConfig config) {
        super(config);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, WebSocketFrame frame, List<Object> out) throws Exception {
        if (frame instanceof CloseWebSocketFrame close && !allowedOnTheWire(close.statusCode())) {
            // the decoder releases the frame after this returns. Written through this handler's own
            // write, which records that a close frame was sent: written past it, the channel's close
            // would pass through this handler and send Netty's own close frame (1000) after this one
            ChannelPromise written = ctx.newPromise();
            write(ctx, new CloseWebSocketFrame(WebSocketCloseStatus.PROTOCOL_ERROR, "close status "
                    + close.statusCode() + " is not allowed on the wire (RFC 6455 7.4)"), written);
            ctx.flush();
            written.addListener(ChannelFutureListener.CLOSE);
            return;
        }
        super.decode(ctx, frame, out);
    }

    /** RFC 6455 7.4 and the IANA registry: 1000-1003, 1007-1014, 3000-4999, or no status at all (-1). */
    static boolean allowedOnTheWire(int status) {
        return status == -1 || 1000 <= status && status <= 1003 || 1007 <= status && status <= 1014
                || 3000 <= status && status <= 4999;
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
