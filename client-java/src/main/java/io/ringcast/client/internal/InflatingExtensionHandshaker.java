package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketClientExtension;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketClientExtensionHandshaker;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtension;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionData;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionDecoder;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionEncoder;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * permessage-deflate (RFC 7692) for the client, receive side only. Netty's own decoder starts a
 * new inflater (and a channel around it) for every message when the server takes over no context,
 * which the Ringcast server always asks for so that it compresses each update once for all
 * subscribers; this one keeps one {@link Inflater} per connection and resets it, which costs
 * nothing. The client sends its own messages uncompressed (RFC 7692 lets an endpoint do so), so
 * nothing is compressed on the client's side. A message is inflated only up to the client's frame
 * limit ({@code RingcastClient.Builder.maxFrameBytes}, across all of its frames): one byte more ends
 * the connection with {@code MESSAGE_TOO_BIG}, and nothing larger is ever allocated, so a
 * decompression bomb costs the client no more than the limit.
 */
final class InflatingExtensionHandshaker implements WebSocketClientExtensionHandshaker {
    static final String PERMESSAGE_DEFLATE = "permessage-deflate";
    private static final String SERVER_NO_CONTEXT = "server_no_context_takeover";
    private static final Set<String> ACCEPTED_PARAMETERS = Set.of(SERVER_NO_CONTEXT, "client_no_context_takeover",
            "server_max_window_bits", "client_max_window_bits");

    private final int maxMessageBytes;

    InflatingExtensionHandshaker(int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public WebSocketExtensionData newRequestData() {
        return new WebSocketExtensionData(PERMESSAGE_DEFLATE, Map.of());
    }

    @Override
    public WebSocketClientExtension handshakeExtension(WebSocketExtensionData response) {
        if (!PERMESSAGE_DEFLATE.equals(response.name())
                || !ACCEPTED_PARAMETERS.containsAll(response.parameters().keySet())) {
            return null;
        }
        boolean resetPerMessage = response.parameters().containsKey(SERVER_NO_CONTEXT);
        return new WebSocketClientExtension() {
            @Override
            public int rsv() {
                return WebSocketExtension.RSV1;
            }

            @Override
            public WebSocketExtensionEncoder newExtensionEncoder() {
                return new Uncompressed();
            }

            @Override
            public WebSocketExtensionDecoder newExtensionDecoder() {
                return new Inflating(resetPerMessage, maxMessageBytes);
            }
        };
    }

    /** The send side: messages go out as they are. */
    private static final class Uncompressed extends WebSocketExtensionEncoder {
        @Override
        protected void encode(ChannelHandlerContext ctx, WebSocketFrame msg, List<Object> out) {
            out.add(msg.retain());
        }
    }

    /** Inflates compressed data frames with one reused inflater. The connection's event loop only. */
    private static final class Inflating extends WebSocketExtensionDecoder {
        private static final byte[] TAIL = {0, 0, (byte) 0xff, (byte) 0xff};
        private static final int CHUNK = 4096;

        private final Inflater inflater = new Inflater(true);
        private final boolean resetPerMessage;
        private final int maxMessageBytes;
        /** The message being received (its first frame had RSV1). */
        private boolean compressed;
        private int messageBytes;

        Inflating(boolean resetPerMessage, int maxMessageBytes) {
            this.resetPerMessage = resetPerMessage;
            this.maxMessageBytes = maxMessageBytes;
        }

        @Override
        public boolean acceptInboundMessage(Object msg) throws Exception {
            return msg instanceof BinaryWebSocketFrame || msg instanceof ContinuationWebSocketFrame;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, WebSocketFrame frame, List<Object> out) throws Exception {
            boolean continuation = frame instanceof ContinuationWebSocketFrame;
            if (!continuation) {
                compressed = (frame.rsv() & WebSocketExtension.RSV1) != 0;
                messageBytes = 0;
            }
            if (!compressed) {
                out.add(frame.retain());
                return;
            }
            // capacity at most one byte past what the limit still allows: a bomb is caught at that
            // byte, before the buffer could grow (by doubling) towards what it inflates to
            int allowed = maxMessageBytes - messageBytes + 1;
            ByteBuf plain = ctx.alloc().heapBuffer(Math.min(allowed,
                    Math.max(256, frame.content().readableBytes() * 4)), allowed);
            try {
                inflate(frame.content().nioBuffer(), plain);
                if (frame.isFinalFragment()) {
                    inflate(ByteBuffer.wrap(TAIL), plain);
                    if (resetPerMessage) {
                        inflater.reset();
                    }
                }
            } catch (DataFormatException e) {
                plain.release();
                throw new CorruptedWebSocketFrameException(WebSocketCloseStatus.INVALID_PAYLOAD_DATA,
                        "bad permessage-deflate data: " + e.getMessage());
            } catch (RuntimeException e) {
                plain.release();
                throw e;
            }
            int rsv = frame.rsv() & ~WebSocketExtension.RSV1;
            out.add(continuation ? new ContinuationWebSocketFrame(frame.isFinalFragment(), rsv, plain)
                    : new BinaryWebSocketFrame(frame.isFinalFragment(), rsv, plain));
        }

        private void inflate(ByteBuffer input, ByteBuf plain) throws DataFormatException {
            inflater.setInput(input);
            while (true) {
                plain.ensureWritable(Math.min(CHUNK, plain.maxWritableBytes()));
                ByteBuffer dst = plain.nioBuffer(plain.writerIndex(), plain.writableBytes());
                int n = inflater.inflate(dst);
                plain.writerIndex(plain.writerIndex() + n);
                messageBytes += n;
                if (messageBytes > maxMessageBytes) {
                    throw new CorruptedWebSocketFrameException(WebSocketCloseStatus.MESSAGE_TOO_BIG,
                            "permessage-deflate message inflates to more than maxFrameBytes = " + maxMessageBytes
                                    + " (RingcastClient.Builder.maxFrameBytes)");
                }
                if (n == 0) {
                    if (inflater.needsInput() || inflater.finished()) {
                        return;
                    }
                    throw new DataFormatException("the inflater made no progress");
                }
            }
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
            inflater.end();
            super.handlerRemoved(ctx);
        }
    }
}
