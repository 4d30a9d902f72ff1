package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** One permessage-deflate frame per update: it must inflate, with a real {@link java.util.zip.Inflater}, to the plain frame's payload. */
@Timeout(10)
class FrameCompressorTest {
    private final FrameCompressor compressor = new FrameCompressor(6, 64);

    @AfterEach
    void close() {
        compressor.close();
    }

    private static ByteBuf updateFrame(byte[] value) {
        ByteBuf frame = OutboundFrame.allocate(FanOutFixture.ALLOC, WireCodec.UPDATE_OVERHEAD_BYTES + value.length);
        ByteBuf v = Unpooled.wrappedBuffer(value);
        WireCodec.writeUpdate(frame, 1, 1, 0, v, 0, value.length);
        return OutboundFrame.finish(frame);
    }

    private static byte[] text(int bytes) {
        byte[] pattern = "{\"symbol\":\"EURUSD\",\"bid\":1.08412,\"ask\":1.08415}".getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            out[i] = pattern[i % pattern.length];
        }
        return out;
    }

    private static byte[] payload(ByteBuf finishedFrame) {
        int start = OutboundFrame.HEADER_RESERVE_BYTES;
        return ByteBufUtil.getBytes(finishedFrame, start, finishedFrame.writerIndex() - start);
    }

    /** Compresses a frame of {@code value} and checks the result is a smaller RSV1 frame inflating to its payload. */
    private void assertRoundTrip(byte[] value) {
        ByteBuf frame = updateFrame(value);
        byte[] before = ByteBufUtil.getBytes(frame);
        int readerIndex = frame.readerIndex();
        ByteBuf compressed = compressor.compress(FanOutFixture.ALLOC, frame);
        try {
            assertThat(compressed).isNotNull();
            assertThat(compressed.getUnsignedByte(compressed.readerIndex()) & 0x40).as("RSV1").isEqualTo(0x40);
            ReceivedFrames.Frame decoded = ReceivedFrames.decodeWebSocketFrame(compressed);
            assertThat(decoded.compressed()).isTrue();
            assertThat(decoded.wireBytes()).isLessThan(frame.readableBytes());
            ByteBuf inflated = ReceivedFrames.inflate(compressed.slice(OutboundFrame.HEADER_RESERVE_BYTES,
                    OutboundFrame.payloadBytes(compressed)));
            assertThat(ByteBufUtil.getBytes(inflated)).isEqualTo(payload(frame));
            assertThat(frame.refCnt()).as("the plain frame keeps its reference").isEqualTo(1);
            assertThat(frame.readerIndex()).isEqualTo(readerIndex);
            assertThat(ByteBufUtil.getBytes(frame)).as("and its bytes").isEqualTo(before);
        } finally {
            frame.release();
            if (compressed != null) {
                compressed.release();
            }
        }
    }

    @Test
    void aCompressedFrameInflatesToThePlainFramesPayload() {
        assertRoundTrip(text(2_000));
    }

    @Test
    void aPayloadOver64KiBRoundTripsWithTheLongHeader() {
        assertRoundTrip(text(200_000));
    }

    @Test
    void eachFrameIsCompressedOnItsOwnWhateverCameBefore() {
        assertRoundTrip(text(50_000));
        assertRoundTrip(text(300));
        assertRoundTrip("another value, repeated; another value, repeated".repeat(10).getBytes(StandardCharsets.US_ASCII));
        assertRoundTrip(text(50_000));
    }

    @Test
    void aPayloadBelowCompressionMinBytesIsNotCompressed() {
        byte[] value = text(200);
        ByteBuf frame = updateFrame(value);
        int payloadBytes = OutboundFrame.payloadBytes(frame);
        FrameCompressor atThreshold = new FrameCompressor(6, payloadBytes);
        FrameCompressor aboveThreshold = new FrameCompressor(6, payloadBytes + 1);
        try {
            assertThat(aboveThreshold.compress(FanOutFixture.ALLOC, frame)).isNull();
            ByteBuf compressed = atThreshold.compress(FanOutFixture.ALLOC, frame);
            assertThat(compressed).as("the threshold itself is compressed").isNotNull();
            compressed.release();
        } finally {
            atThreshold.close();
            aboveThreshold.close();
            frame.release();
        }
    }

    @Test
    void aPayloadThatWouldNotGetSmallerIsNotCompressed() {
        byte[] random = new byte[4_000];
        new Random(42).nextBytes(random);
        ByteBuf frame = updateFrame(random);
        try {
            assertThat(compressor.compress(FanOutFixture.ALLOC, frame)).isNull();
            assertThat(frame.refCnt()).isEqualTo(1);
        } finally {
            frame.release();
        }
    }
}
