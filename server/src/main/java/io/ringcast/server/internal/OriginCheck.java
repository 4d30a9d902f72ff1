package io.ringcast.server.internal;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code security.allowedOrigins}: a WebSocket upgrade from a page of another origin is answered
 * HTTP 403 and closed, before any Ringcast message. Browsers always send {@code Origin} with a
 * WebSocket upgrade and a page cannot forge it; programs send none and pass. Stateless: one
 * instance serves every channel.
 */
@ChannelHandler.Sharable
final class OriginCheck extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(OriginCheck.class);
    private final Set<String> allowed;
    private final ServerCounters counters;

    OriginCheck(List<String> allowedOrigins, ServerCounters counters) {
        // origins compare case-insensitively (scheme and host are)
        this.allowed = allowedOrigins.stream().map(o -> o.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        this.counters = counters;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof FullHttpRequest request
                && new QueryStringDecoder(request.uri()).path().equals(ServerChannelInitializer.WEBSOCKET_PATH)) {
            String origin = request.headers().get(HttpHeaderNames.ORIGIN);
            if (origin != null && !allowed.contains(origin.toLowerCase(Locale.ROOT))) {
                request.release();
                counters.originRefusals.increment();
                log.info("WebSocket upgrade from {} refused: origin {} is not in security.allowedOrigins",
                        ctx.channel().remoteAddress(), origin);
                FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                        HttpResponseStatus.FORBIDDEN, Unpooled.copiedBuffer("origin " + origin
                        + " is not allowed (security.allowedOrigins)\n", StandardCharsets.UTF_8));
                response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
                response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }
}
