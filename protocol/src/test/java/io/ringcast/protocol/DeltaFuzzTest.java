package io.ringcast.protocol;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HexFormat;

import static io.ringcast.protocol.WireCodecFuzzTest.check;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Fuzzes the delta format: {@link Delta#apply} on anything a peer could send, and the
 * {@link Delta.Encoder} round trip. An input is {@code u16 baseLength, base, rest}: the rest is the
 * delta for {@code apply}, the target for the round trip, so a seed is a base and a delta (or target)
 * side by side, e.g. the shared vectors of {@code testdata/delta-vectors.json}. Seeds and crashes
 * are under {@code src/test/resources/io/ringcast/protocol/DeltaFuzzTestInputs/<method>/}.
 */
class DeltaFuzzTest {

    /**
     * Any (base, delta) gives a value or a {@link DeltaFormatException} with a reason, nothing else:
     * no index error, no allocation the delta cannot justify. On failure nothing is left in the output;
     * either way the reader indexes of base and delta do not move.
     */
    @FuzzTest(maxDuration = "2m")
    void applyGivesAValueOrADeltaFormatException(byte[] input) {
        byte[][] parts = split(input);
        ByteBuf base = offsetBuffer(parts[0], 3);
        ByteBuf delta = offsetBuffer(parts[1], 5);
        // The output may grow only as far as the delta can justify: an INSERT costs a delta byte per
        // byte, a COPY of up to the whole base costs at least two. Reserving more (trusting the
        // announced target length) is a finding: IndexOutOfBoundsException from ensureWritable.
        long justified = 1 + parts[1].length + (parts[1].length / 2 + 1) * (long) Math.max(1, parts[0].length);
        ByteBuf out = Unpooled.buffer(0, (int) Math.min(Integer.MAX_VALUE, justified))
                .writeByte(0x7E); // a byte already there must survive
        try {
            Delta.apply(base, delta, out);
            check(out.getByte(0) == 0x7E, "apply overwrote what the output held");
        } catch (DeltaFormatException e) {
            check(e.getMessage() != null && !e.getMessage().isBlank(), "a DeltaFormatException without a reason");
            check(out.writerIndex() == 1, "a failed apply left " + (out.writerIndex() - 1) + " bytes in the output");
        } finally {
            check(base.readerIndex() == 3 && delta.readerIndex() == 5, "apply moved a reader index");
            base.release();
            delta.release();
            out.release();
        }
    }

    /**
     * For any base and target, a delta the encoder produces applies to the base and gives the
     * target exactly; under a budget of exactly its length the encoder gives up and leaves nothing.
     */
    @FuzzTest(maxDuration = "2m")
    void encodedDeltaAppliedToItsBaseGivesTheTargetExactly(byte[] input) throws DeltaFormatException {
        byte[][] parts = split(input);
        byte[] baseBytes = parts[0];
        byte[] targetBytes = parts[1];
        // base and target at non-zero indexes inside larger buffers, as the server's value buffers are
        ByteBuf base = Unpooled.buffer().writeZero(7).writeBytes(baseBytes).writeZero(2);
        ByteBuf target = Unpooled.buffer().writeZero(11).writeBytes(targetBytes).writeZero(3);
        ByteBuf delta = Unpooled.buffer().writeByte(0x7E);
        ByteBuf rebuilt = Unpooled.buffer();
        try {
            Delta.Encoder encoder = new Delta.Encoder();
            int length = encoder.encode(base, 7, baseBytes.length, target, 11, targetBytes.length, delta,
                    Integer.MAX_VALUE);
            check(length > 0 && length == delta.readableBytes() - 1, "encode returned " + length + " but wrote "
                    + (delta.readableBytes() - 1) + " bytes");
            delta.skipBytes(1);
            Delta.apply(Unpooled.wrappedBuffer(baseBytes), delta, rebuilt);
            byte[] got = ByteBufUtil.getBytes(rebuilt);
            check(Arrays.equals(got, targetBytes), "round trip of a " + baseBytes.length + "-byte base and "
                    + targetBytes.length + "-byte target gave " + ByteBufUtil.hexDump(got) + " via delta "
                    + ByteBufUtil.hexDump(delta));

            int before = delta.writerIndex();
            check(encoder.encode(base, 7, baseBytes.length, target, 11, targetBytes.length, delta, length) == -1,
                    "a delta of " + length + " bytes was accepted under a budget of " + length);
            check(delta.writerIndex() == before, "a refused encode left bytes in the output");
        } finally {
            base.release();
            target.release();
            delta.release();
            rebuilt.release();
        }
    }

    /**
     * Found by {@link #applyGivesAValueOrADeltaFormatException} (crash-541b339d...: base empty,
     * delta {@code 00 64 2c}): apply reserved the announced target length before reading a single
     * instruction, so six bytes announcing 2^31-2 made the Java client allocate 2 GiB (or, with a
     * bounded buffer, threw IndexOutOfBoundsException). Now it is the truncated delta it is.
     */
    @Test
    void aDeltaAnnouncingATwoGibTargetIsRefusedWithoutReservingIt() {
        ByteBuf out = Unpooled.buffer(0, 1 << 20);
        ByteBuf delta = Unpooled.wrappedBuffer(HexFormat.of().parseHex("00feffffff07"));
        try {
            assertThatThrownBy(() -> Delta.apply(Unpooled.EMPTY_BUFFER, delta, out))
                    .isInstanceOf(DeltaFormatException.class)
                    .hasMessageContaining("truncated");
            assertThat(out.capacity()).isLessThan(1024);
            assertThat(out.writerIndex()).isZero();
        } finally {
            out.release();
            delta.release();
        }
    }

    /** {@code u16 baseLength, base, rest}; a base length past the input takes what is there. */
    static byte[][] split(byte[] input) {
        if (input.length < 2) {
            return new byte[][] {new byte[0], input};
        }
        int baseLength = Math.min(((input[0] & 0xFF) << 8) | (input[1] & 0xFF), input.length - 2);
        return new byte[][] {
                Arrays.copyOfRange(input, 2, 2 + baseLength),
                Arrays.copyOfRange(input, 2 + baseLength, input.length)};
    }

    /** {@code bytes} readable from index {@code offset} of a buffer, so absolute indexes are exercised. */
    private static ByteBuf offsetBuffer(byte[] bytes, int offset) {
        ByteBuf buf = Unpooled.buffer(offset + bytes.length).writeZero(offset).writeBytes(bytes);
        buf.readerIndex(offset);
        return buf;
    }
}
