package io.ringcast.client.internal;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketClientExtension;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtension;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionData;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.zip.Deflater;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The client's permessage-deflate receive side against frames deflated as RFC 7692 says. */
class InflatingExtensionHandshakerTest {
    private static final InflatingExtensionHandshaker HANDSHAKER = new InflatingExtensionHandshaker(64 * 1024);

    private static EmbeddedChannel channel(Map<String, String> serverResponse) {
        WebSocketClientExtension ext = HANDSHAKER.handshakeExtension(
                new WebSocketExtensionData("permessage-deflate", serverResponse));
        assertThat(ext).isNotNull();
        assertThat(ext.rsv()).isEqualTo(WebSocketExtension.RSV1);
        return new EmbeddedChannel(ext.newExtensionDecoder());
    }

    /** A message deflated on its own, the trailing 00 00 ff ff removed, as the server sends it. */
    private static byte[] deflate(Deflater deflater, byte[] message) {
        deflater.setInput(message);
        byte[] out = new byte[message.length + 64];
        int n = deflater.deflate(out, 0, out.length, Deflater.SYNC_FLUSH);
        return Arrays.copyOf(out, n - 4);
    }

    private static String text(WebSocketFrame frame) {
        try {
            return frame.content().toString(StandardCharsets.UTF_8);
        } finally {
            frame.release();
        }
    }

    @Test
    void messagesCompressedWithoutContextTakeoverInflateOneAfterTheOther() {
        EmbeddedChannel ch = channel(Map.of("server_no_context_takeover", ""));
        for (int i = 0; i < 3; i++) {
            Deflater deflater = new Deflater(1, true); // a fresh context per message, as the server resets it
            String message = "{\"bid\":1.0841" + i + "}".repeat(20);
            ch.writeInbound(new BinaryWebSocketFrame(true, WebSocketExtension.RSV1,
                    Unpooled.wrappedBuffer(deflate(deflater, message.getBytes(StandardCharsets.UTF_8)))));
            WebSocketFrame out = ch.readInbound();
            assertThat(out.rsv()).as("RSV1 cleared").isZero();
            assertThat(text(out)).isEqualTo(message);
            deflater.end();
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void withContextTakeoverTheInflaterKeepsItsWindow() {
        EmbeddedChannel ch = channel(Map.of());
        Deflater deflater = new Deflater(6, true); // one context for the connection
        for (String message : new String[]{"hello hello hello", "hello hello hello again"}) {
            ch.writeInbound(new BinaryWebSocketFrame(true, WebSocketExtension.RSV1,
                    Unpooled.wrappedBuffer(deflate(deflater, message.getBytes(StandardCharsets.UTF_8)))));
            assertThat(text(ch.readInbound())).isEqualTo(message);
        }
        deflater.end();
        ch.finishAndReleaseAll();
    }

    @Test
    void uncompressedFramesAndControlFramesPassUntouched() {
        EmbeddedChannel ch = channel(Map.of("server_no_context_takeover", ""));
        ch.writeInbound(new BinaryWebSocketFrame(Unpooled.copiedBuffer("plain", StandardCharsets.UTF_8)));
        ch.writeInbound(new PingWebSocketFrame(Unpooled.wrappedBuffer(new byte[]{1})));

        assertThat(text(ch.readInbound())).isEqualTo("plain");
        WebSocketFrame ping = ch.readInbound();
        assertThat(ping).isInstanceOf(PingWebSocketFrame.class);
        ping.release();
        ch.finishAndReleaseAll();
    }

    @Test
    void aFragmentedCompressedMessageInflatesAcrossItsFrames() {
        EmbeddedChannel ch = channel(Map.of("server_no_context_takeover", ""));
        Deflater deflater = new Deflater(1, true);
        String message = "fragmented ".repeat(50);
        byte[] compressed = deflate(deflater, message.getBytes(StandardCharsets.UTF_8));
        deflater.end();
        int half = compressed.length / 2;
        ch.writeInbound(new BinaryWebSocketFrame(false, WebSocketExtension.RSV1,
                Unpooled.wrappedBuffer(Arrays.copyOf(compressed, half))));
        ch.writeInbound(new ContinuationWebSocketFrame(true, 0,
                Unpooled.wrappedBuffer(Arrays.copyOfRange(compressed, half, compressed.length))));

        StringBuilder joined = new StringBuilder();
        WebSocketFrame f;
        while ((f = ch.readInbound()) != null) {
            joined.append(text(f));
        }
        assertThat(joined.toString()).isEqualTo(message);
        ch.finishAndReleaseAll();
    }

    @Test
    void aMessageThatInflatesPastTheFrameLimitEndsTheConnection() {
        EmbeddedChannel ch = channel(Map.of("server_no_context_takeover", ""));
        Deflater deflater = new Deflater(9, true);
        byte[] bomb = deflate(deflater, new byte[1024 * 1024]); // 1 MiB of zeros: about 1 KiB compressed
        deflater.end();
        ByteBuf frame = Unpooled.wrappedBuffer(bomb);

        assertThatThrownBy(() -> ch.writeInbound(new BinaryWebSocketFrame(true, WebSocketExtension.RSV1, frame)))
                .isInstanceOf(CorruptedWebSocketFrameException.class)
                .hasMessageContaining("inflates to more than maxFrameBytes = 65536");
        ch.finishAndReleaseAll();
    }

    /**
     * The inflater writes into buffers that cannot grow past one byte over the limit, so a bomb is
     * refused before anything near its size is allocated (the buffer's own doubling included).
     */
    @Test
    void aBombNeverGetsABufferThatCouldGrowPastTheLimit() {
        int[] largestMaxCapacity = {0};
        AbstractByteBufAllocator recording = new AbstractByteBufAllocator(false) {
            @Override
            protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
                largestMaxCapacity[0] = Math.max(largestMaxCapacity[0], maxCapacity);
                return UnpooledByteBufAllocator.DEFAULT.heapBuffer(initialCapacity, maxCapacity);
            }

            @Override
            protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
                return UnpooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
            }

            @Override
            public boolean isDirectBufferPooled() {
                return false;
            }
        };
        WebSocketClientExtension ext = HANDSHAKER.handshakeExtension(
                new WebSocketExtensionData("permessage-deflate", Map.of("server_no_context_takeover", "")));
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(recording);
        ch.pipeline().addLast(ext.newExtensionDecoder());
        Deflater deflater = new Deflater(9, true);
        byte[] bomb = deflate(deflater, new byte[16 * 1024 * 1024]); // 16 MiB of zeros, 16 KiB compressed
        deflater.end();

        ch.writeInbound(new BinaryWebSocketFrame(false, WebSocketExtension.RSV1,
                Unpooled.wrappedBuffer(Arrays.copyOf(bomb, 20)))); // about 20 KiB: within the limit
        ((WebSocketFrame) ch.readInbound()).release();
        assertThatThrownBy(() -> ch.writeInbound(new ContinuationWebSocketFrame(true, 0,
                Unpooled.wrappedBuffer(Arrays.copyOfRange(bomb, 20, bomb.length)))))
                .hasMessageContaining("inflates to more than maxFrameBytes = 65536");
        assertThat(largestMaxCapacity[0]).as("the largest buffer the inflater could have grown to")
                .isLessThanOrEqualTo(64 * 1024 + 1);
        ch.finishAndReleaseAll();
    }

    @Test
    void corruptDataEndsTheConnectionNamingIt() {
        EmbeddedChannel ch = channel(Map.of("server_no_context_takeover", ""));
        ByteBuf garbage = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("ffffffffffffffff"));

        assertThatThrownBy(() -> ch.writeInbound(new BinaryWebSocketFrame(true, WebSocketExtension.RSV1, garbage)))
                .hasMessageContaining("bad permessage-deflate data");
        ch.finishAndReleaseAll();
    }

    @Test
    void anAnswerWithParametersItDoesNotKnowIsDeclined() {
        assertThat(HANDSHAKER.handshakeExtension(new WebSocketExtensionData("permessage-deflate",
                Map.of("server_no_context_takeover", "", "something_new", "1")))).isNull();
        assertThat(HANDSHAKER.handshakeExtension(new WebSocketExtensionData("x-webkit-deflate-frame", Map.of())))
                .isNull();
        assertThat(HANDSHAKER.newRequestData().name()).isEqualTo("permessage-deflate");
    }
}
