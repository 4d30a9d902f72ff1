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
import io.netty.handler.timeout.IdleStateHandler;
import io.ringcast.server.config.ServerConfig;

import java.util.concurrent.TimeUnit;

/**
 * The whole per-connection pipeline, in order. Inbound: TLS (when configured), HTTP, the HTTP
 * phase's deadline and connection limit (until the upgrade), the origin check (when origins are
 * listed), the permessage-deflate negotiation (when compression is on), the WebSocket upgrade at
 * {@code /ws}, frame reassembly, idle detection, plain HTTP endpoints, then the Ringcast session.
 * Outbound, shared update frames are already complete WebSocket frames and pass the WebSocket
 * encoder untouched (see {@link OutboundFrame}).
 */
final class ServerChannelInitializer extends ChannelInitializer<Channel> {
    static final String WEBSOCKET_PATH = "/ws";
    private static final int MAX_HTTP_REQUEST_BYTES = 64 * 1024;

    private final ServerContext server;
    private final WebSocketServerProtocolConfig webSocketConfig;
    /** The same, accepting frames with RSV1 set: for connections that may negotiate compression. */
    private final WebSocketServerProtocolConfig compressingWebSocketConfig;
    private final SharedDeflateHandshaker deflate;

    ServerChannelInitializer(ServerContext server) {
        this.server = server;
        ServerConfig.Limits limits = server.config.limits();
        this.webSocketConfig = webSocketConfig(limits, false);
        this.compressingWebSocketConfig = webSocketConfig(limits, true);
        this.deflate = new SharedDeflateHandshaker(limits.maxFrameBytes());
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

    /** Any channel, not only a socket's: the tests run this pipeline on an {@code EmbeddedChannel}. */
    @Override
    protected void initChannel(Channel ch) {
        // writability is what on-backpressure conflation watches: unwritable past the backlog
        long backlog = server.features.effectiveConflationBacklogBytes(server.config.limits().outboundQueueBytes());
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark((int) (backlog / 2), (int) backlog));
        ChannelPipeline p = ch.pipeline();
        if (server.tls != null) {
            p.addLast("tls", server.tls.newHandler(ch.alloc()));
        }
        p.addLast("http", new HttpServerCodec());
        p.addLast("http-aggregator", new HttpObjectAggregator(MAX_HTTP_REQUEST_BYTES));
        // behind the aggregator, it sees whole requests and every response; the session removes it at the upgrade
        p.addLast("http-deadline", new HttpPhaseDeadline(server.counters, server.config.limits()));
        if (server.originCheck != null) {
            p.addLast("origin", server.originCheck);
        }
        // compression is offered to connections made while it is on somewhere (features reload live)
        boolean compression = server.features.compressionAnywhere();
        if (compression) {
            p.addLast("websocket-extensions", new WebSocketServerExtensionHandler(deflate));
        }
        p.addLast("websocket", new WebSocketUpgradeHandler(compression ? compressingWebSocketConfig : webSocketConfig));
        p.addLast("websocket-aggregator", new WebSocketFrameAggregator(server.config.limits().maxFrameBytes()));
        long idleMs = server.config.session().idleTimeoutMs();
        if (idleMs > 0) {
            // first event at half the timeout: the session pings; second: IDLE_TIMEOUT (SessionHandler)
            p.addLast("idle", new IdleStateHandler(idleMs / 2, 0, 0, TimeUnit.MILLISECONDS));
        }
        p.addLast("http-endpoints", new HttpEndpointHandler(server));
        p.addLast("session", new SessionHandler(server));
    }
}
