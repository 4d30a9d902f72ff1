package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** A complete server WebSocket frame built in one buffer: header written in front of the payload once it is known. */
@Timeout(10)
class OutboundFrameTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    @Test
    void allocateReservesTheLongestHeaderAndCountsOnlyThePayload() {
        ByteBuf frame = OutboundFrame.allocate(ALLOC, 100);
        try {
            assertThat(frame.writerIndex()).isEqualTo(OutboundFrame.HEADER_RESERVE_BYTES);
            assertThat(frame.capacity()).isGreaterThanOrEqualTo(OutboundFrame.HEADER_RESERVE_BYTES + 100);
            assertThat(frame.isDirect()).isTrue();
            assertThat(OutboundFrame.payloadBytes(frame)).isZero();
            WireCodec.writePong(frame, 7);
            assertThat(OutboundFrame.payloadBytes(frame)).isEqualTo(WireCodec.PONG_BYTES);
        } finally {
            frame.release();
        }
    }

    /** What {@link OutboundFrame#payload} reads back is what was written, whichever header the length took. */
    @ParameterizedTest
    @CsvSource({"0", "125", "126", "65535", "65536", "70000"})
    void payloadGivesBackTheMessagesWithoutTheHeader(int payloadBytes) {
        ByteBuf frame = OutboundFrame.allocate(ALLOC, payloadBytes);
        try {
            for (int i = 0; i < payloadBytes; i++) {
                frame.writeByte(i * 31);
            }
            ByteBuf payload = OutboundFrame.payload(OutboundFrame.finish(frame));
            assertThat(payload.readableBytes()).isEqualTo(payloadBytes);
            for (int i = 0; i < payloadBytes; i++) {
                assertThat(payload.getByte(payload.readerIndex() + i)).isEqualTo((byte) (i * 31));
            }
        } finally {
            frame.release();
        }
    }

    /** The three header lengths of RFC 6455, on each side of their limits. */
    @ParameterizedTest
    @CsvSource({"0, 2", "125, 2", "126, 4", "65535, 4", "65536, 10", "70000, 10"})
    void finishWritesTheShortestHeaderForThePayloadJustInFrontOfIt(int payloadBytes, int headerBytes) {
        ByteBuf frame = OutboundFrame.allocate(ALLOC, payloadBytes);
        try {
            frame.writeZero(payloadBytes);
            if (payloadBytes > 0) {
                frame.setByte(OutboundFrame.HEADER_RESERVE_BYTES, 0x5A);
            }
            ByteBuf finished = OutboundFrame.finish(frame);

            assertThat(finished).isSameAs(frame);
            assertThat(frame.readerIndex()).isEqualTo(OutboundFrame.HEADER_RESERVE_BYTES - headerBytes);
            assertThat(frame.readableBytes()).isEqualTo(headerBytes + payloadBytes);
            assertThat((int) frame.getUnsignedByte(frame.readerIndex())).as("FIN, binary").isEqualTo(0x82);
            int lengthByte = frame.getUnsignedByte(frame.readerIndex() + 1);
            if (headerBytes == 2) {
                assertThat(lengthByte).isEqualTo(payloadBytes);
            } else if (headerBytes == 4) {
                assertThat(lengthByte).isEqualTo(126);
                assertThat(frame.getUnsignedShort(frame.readerIndex() + 2)).isEqualTo(payloadBytes);
            } else {
                assertThat(lengthByte).isEqualTo(127);
                assertThat(frame.getLong(frame.readerIndex() + 2)).isEqualTo(payloadBytes);
            }
            if (payloadBytes > 0) {
                assertThat(frame.getByte(frame.readerIndex() + headerBytes)).as("payload not moved").isEqualTo((byte) 0x5A);
            }
        } finally {
            frame.release();
        }
    }

    @Test
    void aFinishedFrameDecodesToItsMessages() {
        ByteBuf frame = OutboundFrame.allocate(ALLOC, 64);
        try {
            WireCodec.writeTopic(frame, 3, "a/b");
            WireCodec.writePublishAck(frame, 9, 12);
            OutboundFrame.finish(frame);
            ReceivedFrames.Frame decoded = ReceivedFrames.decodeWebSocketFrame(frame);
            assertThat(decoded.compressed()).isFalse();
            assertThat(decoded.messages()).containsExactly("TOPIC 3 a/b", "PUBLISH_ACK 9 #12");
        } finally {
            frame.release();
        }
    }

    @Test
    void finishCompressedSetsRsv1AndNothingElse() {
        ByteBuf plain = OutboundFrame.allocate(ALLOC, 200);
        ByteBuf compressed = OutboundFrame.allocate(ALLOC, 200);
        try {
            plain.writeZero(200);
            compressed.writeZero(200);
            OutboundFrame.finish(plain);
            OutboundFrame.finishCompressed(compressed);
            assertThat((int) compressed.getUnsignedByte(compressed.readerIndex())).as("FIN, RSV1, binary").isEqualTo(0xC2);
            assertThat(compressed.readerIndex()).isEqualTo(plain.readerIndex());
            assertThat(compressed.getUnsignedShort(compressed.readerIndex() + 1))
                    .isEqualTo(plain.getUnsignedShort(plain.readerIndex() + 1));
        } finally {
            plain.release();
            compressed.release();
        }
    }
}
