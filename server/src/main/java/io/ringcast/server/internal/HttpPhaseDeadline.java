package io.ringcast.server.internal;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The HTTP phase of one connection, from its accept (the TLS handshake included) to its completed
 * WebSocket upgrade, bounded in time by {@code limits.handshakeTimeoutMs} and in number by
 * {@code limits.maxConnectionsBeforeUpgrade}. Plain HTTP connections ({@code /health}, files)
 * stay in this phase for their whole life.
 *
 * <p>Time: the deadline runs from accept until a complete request has arrived, and again from
 * each response the server writes (the next request of a keep-alive connection, or the upgrade's
 * 101 going out). On expiry the connection gets {@code 408 Request Timeout} with
 * {@code Connection: close} where an HTTP response can still be written, and is closed.
 *
 * <p>Number: a place is taken when the connection becomes active; when none is left the
 * connection is closed at once, nothing written. The place is released in {@link #handlerRemoved}
 * alone, which Netty calls once whichever way the phase ends: the session removes this handler
 * when the upgrade completes ({@link SessionHandler}; Netty's {@code HandshakeComplete} event
 * reaches only the handlers behind the protocol handler, so this one cannot see it), or the
 * channel closes and its pipeline is torn down.
 *
 * <p>Threads: one instance per channel, every method on that channel's event loop (asserted); the
 * count it takes a place in is shared by all loops ({@link ServerCounters#connectionsBeforeUpgrade}).
 */
final class HttpPhaseDeadline extends ChannelDuplexHandler {
    private static final Logger log = LoggerFactory.getLogger(HttpPhaseDeadline.class);

    private final AtomicInteger connectionsBeforeUpgrade;
    private final ServerCounters counters;
    private final long deadlineMs;
    private final int maxConnectionsBeforeUpgrade;
    private final Runnable expiry = this::expire;
    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> timer;
    private boolean holdsPlace;
    private boolean removed;
    /** Responses written and not yet out: a 408 cannot follow a half-written response. */
    private int responsesInFlight;

    HttpPhaseDeadline(ServerCounters counters, ServerConfig.Limits limits) {
        this.counters = counters;
        this.connectionsBeforeUpgrade = counters.connectionsBeforeUpgrade;
        this.deadlineMs = limits.handshakeTimeoutMs();
        this.maxConnectionsBeforeUpgrade = limits.maxConnectionsBeforeUpgrade();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!takePlace()) {
            counters.connectionsRefusedBeforeUpgrade.increment();
            log.debug("connection {} closed on accept: limits.maxConnectionsBeforeUpgrade = {} connections are "
                    + "not upgraded yet", ctx.channel().remoteAddress(), maxConnectionsBeforeUpgrade);
            ctx.close();
            return;
        }
        arm();
        ctx.fireChannelActive();
    }

    /** Compare-and-set rather than add-then-check, so the count never passes the limit, not even for an instant. */
    private boolean takePlace() {
        for (int n = connectionsBeforeUpgrade.get(); n < maxConnectionsBeforeUpgrade; n = connectionsBeforeUpgrade.get()) {
            if (connectionsBeforeUpgrade.compareAndSet(n, n + 1)) {
                holdsPlace = true;
                return true;
            }
        }
        return false;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof FullHttpRequest) {
            disarm(); // complete: answering it is the server's part; the clock restarts at the response
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse) {
            // timed from the write, or a peer that never reads would hold the connection; and again
            // once it is out, so a keep-alive client gets the whole deadline for its next request
            responsesInFlight++;
            arm();
            promise = promise.unvoid();
            promise.addListener(written -> {
                responsesInFlight--;
                arm();
            });
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        disarm(); // closed by either side: no 408 and no timeout to count
        ctx.fireChannelInactive();
    }

    /** The upgrade completed or the channel closed: the one place the deadline ends and the place is released. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        removed = true;
        disarm();
        if (holdsPlace) {
            holdsPlace = false;
            connectionsBeforeUpgrade.decrementAndGet();
        }
    }

    private void arm() {
        assert ctx.executor().inEventLoop() : "HttpPhaseDeadline used off its channel's event loop";
        if (removed || !ctx.channel().isActive()) {
            return;
        }
        disarm();
        timer = ctx.executor().schedule(expiry, deadlineMs, TimeUnit.MILLISECONDS);
    }

    private void disarm() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void expire() {
        timer = null;
        counters.httpTimeouts.increment();
        SslHandler tls = ctx.pipeline().get(SslHandler.class);
        boolean tlsDone = tls == null || tls.handshakeFuture().isSuccess();
        // an HTTP response fits only where TLS is up, the HTTP encoder still there and no response of ours half out
        boolean answer = tlsDone && responsesInFlight == 0 && ctx.pipeline().get(HttpServerCodec.class) != null;
        if (log.isDebugEnabled()) {
            String missing = !tlsDone ? "no TLS handshake" : responsesInFlight > 0 ? "our response not read"
                    : "no complete HTTP request";
            log.debug("connection {} closed{}: {} within limits.handshakeTimeoutMs = {} ms",
                    ctx.channel().remoteAddress(), answer ? " with 408" : "", missing, deadlineMs);
        }
        if (answer) {
            ctx.writeAndFlush(requestTimeout());
        }
        ctx.close(); // after the flush: the 408 is in the socket's buffer by now, or lost with a peer that does not read
    }

    private FullHttpResponse requestTimeout() {
        FullHttpResponse r = HttpEndpointHandler.text(HttpResponseStatus.REQUEST_TIMEOUT,
                "no complete HTTP request within limits.handshakeTimeoutMs = " + deadlineMs + " ms\n");
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
        return r;
    }
}
