package io.ringcast.client.internal;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketClientExtensionHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;

import java.net.URI;
import javax.net.ssl.SSLParameters;

/**
 * The whole pipeline of one client connection, in order:
 * <ol>
 *   <li>{@code http-codec}, {@code http-aggregator}: the HTTP upgrade request and response (the
 *       WebSocket handshaker swaps them for its frame encoder and decoder once upgraded);</li>
 *   <li>{@code websocket-extensions}: offers permessage-deflate (unless turned off) and, when the
 *       server accepts, installs the {@link InflatingExtensionHandshaker}'s decompressor;</li>
 *   <li>{@code websocket}: handshake, masking, answers pings, drops pongs; close frames are passed
 *       on so the close code is known, and closing the channel sends a normal-closure frame
 *       first;</li>
 *   <li>{@code websocket-aggregator}: joins fragmented messages up to the inbound frame limit;</li>
 *   <li>{@code idle}: an {@code IdleStateHandler} added on {@code WELCOME}, once the server's idle
 *       timeout is known;</li>
 *   <li>{@code ringcast}: the {@link ConnectionHandler}.</li>
 * </ol>
 */
final class ClientChannelInitializer extends ChannelInitializer<SocketChannel> {
    /** The HTTP upgrade response is headers only. */
    static final int HANDSHAKE_RESPONSE_BYTES = 64 * 1024;
    /** How long closing waits for the close frame to be written before it closes the socket anyway. */
    static final long CLOSE_FRAME_TIMEOUT_MS = 1000;

    private final URI address;
    private final int maxInboundFrameBytes;
    private final long handshakeTimeoutMs;
    private final boolean compression;
    private final ConnectionHandler connection;
    private final SslContext tls;

    ClientChannelInitializer(URI address, int maxInboundFrameBytes, long handshakeTimeoutMs, boolean compression,
                             SslContext tls, ConnectionHandler connection) {
        this.tls = tls;
        this.address = address;
        this.maxInboundFrameBytes = maxInboundFrameBytes;
        this.handshakeTimeoutMs = handshakeTimeoutMs;
        this.compression = compression;
        this.connection = connection;
    }

    /** The address's port, or the scheme's default. */
    static int port(URI address) {
        return address.getPort() > 0 ? address.getPort() : "wss".equalsIgnoreCase(address.getScheme()) ? 443 : 80;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        WebSocketClientProtocolConfig webSocket = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(address)
                .version(WebSocketVersion.V13)
                .allowExtensions(compression)
                .maxFramePayloadLength(maxInboundFrameBytes)
                .handleCloseFrames(false)
                .sendCloseFrame(WebSocketCloseStatus.NORMAL_CLOSURE)
                .forceCloseTimeoutMillis(CLOSE_FRAME_TIMEOUT_MS)
                .handshakeTimeoutMillis(handshakeTimeoutMs)
                .withUTF8Validator(false) // binary frames only; a text frame ends the connection anyway
                .generateOriginHeader(false) // a program, not a page: security.allowedOrigins is for browsers
                .build();
        ChannelPipeline p = ch.pipeline();
        if ("wss".equalsIgnoreCase(address.getScheme())) {
            SslHandler handler = tls.newHandler(ch.alloc(), address.getHost(), port(address));
            SSLParameters params = handler.engine().getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host we dialled
            handler.engine().setSSLParameters(params);
            p.addLast("tls", handler);
        }
        p.addLast("http-codec", new HttpClientCodec());
        p.addLast("http-aggregator", new HttpObjectAggregator(HANDSHAKE_RESPONSE_BYTES));
        if (compression) {
            // permessage-deflate, received with one reused inflater (InflatingExtensionHandshaker)
            p.addLast("websocket-extensions", new WebSocketClientExtensionHandler(
                    new InflatingExtensionHandshaker(maxInboundFrameBytes)));
        }
        p.addLast("websocket", new WebSocketClientProtocolHandler(webSocket))
                .addLast("websocket-aggregator", new WebSocketFrameAggregator(maxInboundFrameBytes))
                .addLast("ringcast", connection);
    }
}
