package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HttpPhaseDeadline} on embedded channels with virtual time: a place among
 * {@code limits.maxConnectionsBeforeUpgrade} is released exactly once however the phase ends
 * (upgrade, close, refusal), and the deadline runs from accept and again from each response.
 * The sockets' side is {@code HttpPhaseDeadlineTest} in the integration tests.
 */
class HttpPhaseDeadlineTest {
    private static final long DEADLINE_MS = 1000;
    private static final ServerConfig.Limits LIMITS = ConfigLoader.fromYaml(
            "limits: {handshakeTimeoutMs: " + DEADLINE_MS + ", maxConnectionsBeforeUpgrade: 2}").limits();

    private final ServerCounters counters = new ServerCounters();

    /**
     * A connection whose deadline runs on the test's clock alone ({@code advance}): on the channel's
     * default clock, real time passing between two steps counted too, and a machine busy for a
     * millisecond expired the deadline one step early (a full run of the module, 2026-12-03).
     */
    private EmbeddedChannel connection() {
        EmbeddedChannel ch = new EmbeddedChannel(false, false, new HttpServerCodec(), new HttpObjectAggregator(65536),
                new HttpPhaseDeadline(counters, LIMITS), new Answer200());
        ch.freezeTime();
        try {
            ch.register(); // active now: the deadline is armed on the frozen clock
        } catch (Exception e) {
            throw new AssertionError("cannot register an embedded channel", e);
        }
        return ch;
    }

    /** Stands in for the endpoints: answers every request 200, keep-alive. */
    private static final class Answer200 extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            FullHttpResponse r = HttpEndpointHandler.text(HttpResponseStatus.OK, "ok\n");
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
            ctx.writeAndFlush(r);
        }
    }

    private static void send(EmbeddedChannel ch, String ascii) {
        ch.writeInbound(Unpooled.copiedBuffer(ascii, StandardCharsets.US_ASCII));
    }

    /** Everything the channel wrote so far, as text; the buffers are released. */
    private static String written(EmbeddedChannel ch) {
        StringBuilder out = new StringBuilder();
        for (ByteBuf b; (b = ch.readOutbound()) != null; b.release()) {
            out.append(b.toString(StandardCharsets.US_ASCII));
        }
        return out.toString();
    }

    private static void advance(EmbeddedChannel ch, long ms) {
        ch.advanceTimeBy(ms, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
    }

    @Test
    void placeIsReleasedOnceWhetherThePhaseEndsByUpgradeOrCloseAndARefusedConnectionHoldsNone() {
        EmbeddedChannel upgraded = connection();
        EmbeddedChannel closed = connection();
        assertThat(counters.connectionsBeforeUpgrade()).isEqualTo(2);

        EmbeddedChannel refused = connection();
        assertThat(refused.isOpen()).as("a third connection with two places").isFalse();
        assertThat(written(refused)).as("what a refused connection is sent").isEmpty();
        assertThat(counters.connectionsRefusedBeforeUpgrade()).isEqualTo(1);
        assertThat(counters.connectionsBeforeUpgrade()).as("after the refusal").isEqualTo(2);

        upgraded.pipeline().remove(HttpPhaseDeadline.class); // what the session does at the upgrade
        assertThat(counters.connectionsBeforeUpgrade()).as("after the upgrade").isEqualTo(1);
        upgraded.close();
        assertThat(counters.connectionsBeforeUpgrade()).as("after the upgraded connection closed").isEqualTo(1);
        closed.close();
        assertThat(counters.connectionsBeforeUpgrade()).as("after a close before the upgrade").isZero();

        advance(upgraded, 10 * DEADLINE_MS);
        advance(closed, 10 * DEADLINE_MS);
        assertThat(counters.httpTimeouts()).as("timeouts of connections that left the phase in time").isZero();
        assertThat(connection().isOpen()).as("a new connection once places are free").isTrue();
    }

    @Test
    void halfSentRequestGets408AtTheDeadlineThenTheConnectionCloses() {
        EmbeddedChannel ch = connection();
        send(ch, "GET /health HTTP/1.1\r\nHost: x\r\n");
        advance(ch, DEADLINE_MS - 1);
        assertThat(ch.isOpen()).as("open until the deadline").isTrue();
        assertThat(written(ch)).isEmpty();

        advance(ch, 1);
        String answer = written(ch);
        assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout\r\n").containsIgnoringCase("connection: close")
                .endsWith("no complete HTTP request within limits.handshakeTimeoutMs = 1000 ms\n");
        assertThat(ch.isOpen()).isFalse();
        assertThat(counters.httpTimeouts()).isEqualTo(1);
        assertThat(counters.connectionsBeforeUpgrade()).isZero();
    }

    @Test
    void keepAliveConnectionGetsTheWholeDeadlineAgainAfterEachResponse() {
        EmbeddedChannel ch = connection();
        advance(ch, DEADLINE_MS * 9 / 10);
        send(ch, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(written(ch)).startsWith("HTTP/1.1 200 OK\r\n");

        advance(ch, DEADLINE_MS * 9 / 10);
        assertThat(ch.isOpen()).as("past the accept's deadline, within the response's").isTrue();
        advance(ch, DEADLINE_MS / 10);
        assertThat(written(ch)).startsWith("HTTP/1.1 408 Request Timeout\r\n");
        assertThat(ch.isOpen()).isFalse();
        assertThat(counters.connectionsBeforeUpgrade()).isZero();
    }
}
