package io.ringcast.server.internal;

import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionData;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketServerExtension;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketServerExtensionHandshaker;
import io.netty.handler.codec.http.websocketx.extensions.compression.PerMessageDeflateServerExtensionHandshaker;

import java.util.HashMap;
import java.util.Map;

/**
 * Negotiates permessage-deflate (RFC 7692) so that one compressed frame can serve every subscriber:
 * the server always answers with {@code server_no_context_takeover} (which RFC 7692 section 7.1.1.1
 * lets a server add even when the client did not ask), so each server message is compressed on its
 * own, independent of the connection ({@link FrameCompressor}). It declines an offer that limits
 * the server's window ({@code server_max_window_bits}), because the JDK's deflater always uses the
 * full 32 KiB window; such a client gets plain frames. Client-to-server messages are decompressed by
 * Netty's decoder, with or without context takeover as the client chooses, into at most
 * {@code limits.maxFrameBytes} per frame: past that the decoder stops and throws a
 * {@link io.netty.handler.codec.compression.DecompressionException} (the session answers
 * {@code FRAME_TOO_LARGE}), so a small frame cannot make the server allocate what it inflates to;
 * {@code WebSocketFrameAggregator} bounds the sum of a message's frames by the same limit.
 * Stateless; shared by the server's connections.
 */
final class SharedDeflateHandshaker implements WebSocketServerExtensionHandshaker {
    private static final String PERMESSAGE_DEFLATE = "permessage-deflate";
    private static final String SERVER_NO_CONTEXT = "server_no_context_takeover";

    private final PerMessageDeflateServerExtensionHandshaker netty;

    SharedDeflateHandshaker(int maxFrameBytes) {
        netty = new PerMessageDeflateServerExtensionHandshaker(UpdateEncoder.COMPRESSION_LEVEL, false,
                PerMessageDeflateServerExtensionHandshaker.MAX_WINDOW_SIZE, true, false, maxFrameBytes);
    }

    @Override
    public WebSocketServerExtension handshakeExtension(WebSocketExtensionData offer) {
        if (!PERMESSAGE_DEFLATE.equals(offer.name())) {
            return null;
        }
        Map<String, String> parameters = new HashMap<>(offer.parameters());
        parameters.put(SERVER_NO_CONTEXT, null);
        return netty.handshakeExtension(new WebSocketExtensionData(offer.name(), parameters));
    }
}
