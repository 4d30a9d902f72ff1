package io.ringcast.server.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketServerExtensionHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.internal.PlatformDependent;
import io.ringcast.server.config.Features;
import io.ringcast.server.config.ServerConfig;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The whole per-connection pipeline, in order. Inbound: the count of bytes read and not yet taken
 * as whole messages ({@link IncompleteMessages}), TLS (when configured), HTTP, the HTTP
 * phase's deadline and connection limit (until the upgrade), the origin check (when origins are
 * listed), the permessage-deflate negotiation (when compression is on), the WebSocket upgrade at
 * {@code /ws}, frame reassembly, idle detection, the mark of a whole message, plain HTTP endpoints,
 * then the Ringcast session.
 * Outbound, shared update frames are already complete WebSocket frames and pass the WebSocket
 * encoder untouched (see {@link OutboundFrame}).
 */
final class ServerChannelInitializer extends ChannelInitializer<Channel> {
    static final String WEBSOCKET_PATH = "/ws";
    private static final int MAX_HTTP_REQUEST_BYTES = 64 * 1024;

    private final ServerConfig config;
    /**
     * The {@code features} section in force, with what a connection's set-up reads of it: hot
     * reloads replace both at once ({@link #useFeatures}). Read when a connection is set up; the
     * sequencer gets its own copy through the inbound ring.
     */
    private volatile InForce inForce;
    /** TLS for every connection ({@code security.tlsCertificateFile}), or null for plain TCP. */
    private final SslContext tls;
    /** {@code security.allowedOrigins}, or null when any origin may connect. */
    private final OriginCheck originCheck;
    private final ServerCounters counters;
    private final HttpEndpointHandler.NodeView endpoints;
    private final SessionServices sessionServices;
    private final WebSocketServerProtocolConfig webSocketConfig;
    /** The same, accepting frames with RSV1 set: for connections that may negotiate compression. */
    private final WebSocketServerProtocolConfig compressingWebSocketConfig;
    private final SharedDeflateHandshaker deflate;
    /** {@code limits.incompleteMessageBytes}: what all connections' messages being reassembled hold, bounded. */
    private final IncompleteMessages incomplete;

    ServerChannelInitializer(ServerConfig config, SslContext tls, ServerCounters counters,
                             HttpEndpointHandler.NodeView endpoints, SessionServices sessionServices) {
        this.config = config;
        this.inForce = new InForce(config.features());
        this.tls = tls;
        List<String> origins = config.security().allowedOrigins();
        this.originCheck = origins.isEmpty() ? null : new OriginCheck(origins, counters);
        this.counters = counters;
        this.endpoints = endpoints;
        this.sessionServices = sessionServices;
        ServerConfig.Limits limits = config.limits();
        this.webSocketConfig = webSocketConfig(limits, false);
        this.compressingWebSocketConfig = webSocketConfig(limits, true);
        this.deflate = new SharedDeflateHandshaker(limits.maxFrameBytes());
        this.incomplete = new IncompleteMessages(limits.incompleteMessageBytesWithin(PlatformDependent.maxDirectMemory()),
                counters);
        counters.incompleteMessagesOf(incomplete);
    }

    private static WebSocketServerProtocolConfig webSocketConfig(ServerConfig.Limits limits, boolean allowExtensions) {
        return WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(WEBSOCKET_PATH)
                .checkStartsWith(false)
                .handleCloseFrames(true)
                .dropPongFrames(false) // a pong to our ping is traffic for the idle check
                .handshakeTimeoutMillis(limits.handshakeTimeoutMs())
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(limits.maxFrameBytes())
                        .allowExtensions(allowExtensions)
                        // our SessionHandler sends the protocol's ERROR before closing
                        .closeOnProtocolViolation(false)
                        .build())
                .build();
    }

    /** A hot reload's {@code features}: connections made from now on are set up by it. Any thread. */
    void useFeatures(Features features) {
        this.inForce = new InForce(features);
    }

    /**
     * The features in force and whether compression is on anywhere in them, worked out once per
     * reload rather than per connection (it walks the subtree overrides).
     */
    private record InForce(Features features, boolean compression) {
        InForce(Features features) {
            this(features, features.compressionAnywhere());
        }
    }

    /** Any channel, not only a socket's: the tests run this pipeline on an {@code EmbeddedChannel}. */
    @Override
    protected void initChannel(Channel ch) {
        // writability is what on-backpressure conflation watches: unwritable past the backlog
        InForce now = inForce;
        long backlog = now.features().effectiveConflationBacklogBytes(config.limits().outboundQueueBytes());
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark((int) (backlog / 2), (int) backlog));
        ChannelPipeline p = ch.pipeline();
        // first: it counts every byte read, before any decoder holds it
        IncompleteMessages.Tracker incompleteMessages = incomplete.trackerOf(ch);
        p.addLast("incomplete-messages", incompleteMessages);
        if (tls != null) {
            p.addLast("tls", tls.newHandler(ch.alloc()));
        }
        p.addLast("http", new HttpServerCodec());
        // a request's body may be as large as a client's frame: an HTTP publish carries what a PUBLISH does
        p.addLast("http-aggregator", new HttpObjectAggregator(Math.max(MAX_HTTP_REQUEST_BYTES, config.limits().maxFrameBytes())));
        // behind the aggregator, it sees whole requests and every response; the session removes it at the upgrade
        p.addLast("http-deadline", new HttpPhaseDeadline(counters, config.limits()));
        if (originCheck != null) {
            p.addLast("origin", originCheck);
        }
        // compression is offered to connections made while it is on somewhere (features reload live)
        boolean compression = now.compression();
        if (compression) {
            p.addLast("websocket-extensions", new WebSocketServerExtensionHandler(deflate));
        }
        p.addLast("websocket", new WebSocketUpgradeHandler(compression ? compressingWebSocketConfig : webSocketConfig));
        p.addLast("websocket-aggregator", new WebSocketFrameAggregator(config.limits().maxFrameBytes()));
        long idleMs = config.session().idleTimeoutMs();
        if (idleMs > 0) {
            // first event at half the timeout: the session pings; second: IDLE_TIMEOUT (SessionHandler)
            p.addLast("idle", new IdleStateHandler(idleMs / 2, 0, 0, TimeUnit.MILLISECONDS));
        }
        p.addLast("whole-message", incompleteMessages.wholeMessage()); // whole requests and messages from here on
        p.addLast("http-endpoints", new HttpEndpointHandler(endpoints, sessionServices));
        p.addLast("session", new SessionHandler(sessionServices));
    }
}
