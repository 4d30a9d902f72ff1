package io.ringcast.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The delta format against the shared test vectors (the same file the JavaScript client checks),
 * random round trips, and corrupt input, which must always be an error, never a wrong value.
 */
class DeltaTest {
    /** Shared with every client implementation: the format is pinned here, not in one codebase. */
    static final Path VECTORS = Path.of("..", "testdata", "delta-vectors.json");
    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<Named<JsonNode>> valid() throws IOException {
        return entries("valid");
    }

    static Stream<Named<JsonNode>> invalid() throws IOException {
        return entries("invalid");
    }

    private static Stream<Named<JsonNode>> entries(String kind) throws IOException {
        JsonNode root = JSON.readTree(VECTORS.toFile());
        List<Named<JsonNode>> out = new ArrayList<>();
        root.get(kind).forEach(v -> out.add(Named.of(v.get("name").asText(), v)));
        assertThat(out).as(kind + " vectors").isNotEmpty();
        return out.stream();
    }

    @ParameterizedTest
    @MethodSource("valid")
    void validVectorDecodesToItsTargetAndOurEncoderProducesIt(JsonNode v) throws Exception {
        byte[] base = hex(v.get("base").asText());
        byte[] target = hex(v.get("target").asText());
        byte[] delta = hex(v.get("delta").asText());

        assertThat(apply(base, delta)).isEqualTo(target);
        byte[] encoded = encode(base, target, Integer.MAX_VALUE);
        assertThat(ByteBufUtil.hexDump(encoded)).as("our encoder's output for " + v.get("name").asText())
                .isEqualTo(ByteBufUtil.hexDump(delta));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void invalidVectorIsRefusedWithAReasonNamingTheFault(JsonNode v) {
        byte[] base = hex(v.get("base").asText());
        byte[] delta = hex(v.get("delta").asText());

        assertThatThrownBy(() -> apply(base, delta)).isInstanceOf(DeltaFormatException.class)
                .hasMessageContaining(v.get("error").asText());
    }

    @Test
    void aSmallEditOfA200ByteValueIsAFewBytes() throws Exception {
        byte[] base = new byte[200];
        new SplittableRandom(7).nextBytes(base);
        byte[] target = base.clone();
        target[100] ^= 0x55;
        target[101] ^= 0x55;

        byte[] delta = encode(base, target, Integer.MAX_VALUE);

        assertThat(delta.length).isLessThan(24);
        assertThat(apply(base, delta)).isEqualTo(target);
    }

    @Test
    void aDeltaNotShorterThanTheLimitIsNotWritten() {
        byte[] base = "abcdefgh".getBytes(StandardCharsets.US_ASCII);
        byte[] target = "12345678".getBytes(StandardCharsets.US_ASCII);
        ByteBuf out = Unpooled.buffer();
        out.writeByte(0x7F); // something already in the buffer stays

        int n = new Delta.Encoder().encode(Unpooled.wrappedBuffer(base), 0, base.length,
                Unpooled.wrappedBuffer(target), 0, target.length, out, target.length);

        assertThat(n).isEqualTo(-1);
        assertThat(out.readableBytes()).isEqualTo(1);
    }

    /** Property: random values under random edits (replace, insert, delete, move) round-trip exactly. */
    @Test
    void randomValuesAndEditsRoundTripExactly() throws Exception {
        SplittableRandom random = new SplittableRandom(20261122);
        Delta.Encoder encoder = new Delta.Encoder(); // reused, as the sequencer does
        for (int i = 0; i < 20_000; i++) {
            byte[] base = randomValue(random);
            byte[] target = edit(random, base);
            ByteBuf out = Unpooled.buffer();
            int n = encoder.encode(Unpooled.wrappedBuffer(base), 0, base.length, Unpooled.wrappedBuffer(target), 0,
                    target.length, out, Integer.MAX_VALUE);
            assertThat(n).isEqualTo(out.readableBytes());
            assertThat(apply(base, ByteBufUtil.getBytes(out))).as("case %d", i).isEqualTo(target);
        }
    }

    /**
     * Every truncation and every single-byte change of a valid delta is refused or, where the
     * change is harmless (it cannot be in this format: the checksum covers the result), still
     * yields exactly the target: never a different value.
     */
    @Test
    void corruptDeltasAreRefusedNeverAWrongValue() throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        for (int c = 0; c < 200; c++) {
            byte[] base = randomValue(random);
            byte[] target = edit(random, base);
            byte[] delta = encode(base, target, Integer.MAX_VALUE);
            for (int len = 0; len < delta.length; len++) {
                byte[] cut = Arrays.copyOf(delta, len);
                assertThatThrownBy(() -> apply(base, cut)).isInstanceOf(DeltaFormatException.class);
            }
            for (int k = 0; k < 8; k++) {
                byte[] bad = delta.clone();
                bad[random.nextInt(bad.length)] ^= (byte) (1 + random.nextInt(255));
                try {
                    assertThat(apply(base, bad)).isEqualTo(target);
                } catch (DeltaFormatException expected) {
                    assertThat(expected.getMessage()).isNotBlank();
                }
            }
            byte[] longer = Arrays.copyOf(delta, delta.length + 1);
            assertThatThrownBy(() -> apply(base, longer)).isInstanceOf(DeltaFormatException.class);
        }
    }

    @Test
    void aDeltaForAnotherBaseIsRefusedByLength() throws Exception {
        byte[] base = "the base value".getBytes(StandardCharsets.US_ASCII);
        byte[] delta = encode(base, "the next value".getBytes(StandardCharsets.US_ASCII), Integer.MAX_VALUE);

        assertThatThrownBy(() -> apply("another base".getBytes(StandardCharsets.US_ASCII), delta))
                .isInstanceOf(DeltaFormatException.class).hasMessageContaining("base of 14 bytes");
    }

    @Test
    void aFailedApplyLeavesNothingInTheOutput() {
        ByteBuf out = Unpooled.buffer();
        out.writeByte(1);
        ByteBuf base = Unpooled.wrappedBuffer(new byte[]{1, 2, 3, 4});
        ByteBuf delta = Unpooled.wrappedBuffer(hex("04" + "04" + "08" + "09090909" + "00000000"));

        assertThatThrownBy(() -> Delta.apply(base, delta, out)).isInstanceOf(DeltaFormatException.class)
                .hasMessageContaining("checksum");
        assertThat(out.readableBytes()).isEqualTo(1);
    }

    // ---------------------------------------------------------------------------------------------

    private static byte[] randomValue(SplittableRandom random) {
        int length = random.nextInt(4) == 0 ? random.nextInt(8) : random.nextInt(1, 600);
        byte[] v = new byte[length];
        if (random.nextBoolean()) {
            random.nextBytes(v);
        } else {
            // text-like, repetitive: what JSON values look like
            for (int i = 0; i < length; i++) {
                v[i] = (byte) "{\"px\":1.2345,\"qty\":100}".charAt(random.nextInt(22));
            }
        }
        return v;
    }

    private static byte[] edit(SplittableRandom random, byte[] base) {
        List<Byte> v = new ArrayList<>();
        for (byte b : base) {
            v.add(b);
        }
        int edits = random.nextInt(0, 6);
        for (int e = 0; e < edits; e++) {
            int op = random.nextInt(5);
            int at = v.isEmpty() ? 0 : random.nextInt(v.size());
            int n = random.nextInt(1, 20);
            switch (op) {
                case 0 -> { // replace
                    for (int i = at; i < Math.min(v.size(), at + n); i++) {
                        v.set(i, (byte) random.nextInt(256));
                    }
                }
                case 1 -> { // insert
                    for (int i = 0; i < n; i++) {
                        v.add(at, (byte) random.nextInt(256));
                    }
                }
                case 2 -> { // delete
                    for (int i = 0; i < n && at < v.size(); i++) {
                        v.remove(at);
                    }
                }
                case 3 -> { // move a run to the end
                    List<Byte> run = new ArrayList<>(v.subList(at, Math.min(v.size(), at + n)));
                    v.subList(at, Math.min(v.size(), at + n)).clear();
                    v.addAll(run);
                }
                default -> { // a whole new value
                    return randomValue(random);
                }
            }
        }
        byte[] out = new byte[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i);
        }
        return out;
    }

    static byte[] encode(byte[] base, byte[] target, int maxBytes) {
        ByteBuf out = Unpooled.buffer();
        int n = new Delta.Encoder().encode(Unpooled.wrappedBuffer(base), 0, base.length,
                Unpooled.wrappedBuffer(target), 0, target.length, out, maxBytes);
        assertThat(n).isPositive();
        return ByteBufUtil.getBytes(out);
    }

    static byte[] apply(byte[] base, byte[] delta) throws DeltaFormatException {
        ByteBuf out = Unpooled.buffer();
        Delta.apply(Unpooled.wrappedBuffer(base), Unpooled.wrappedBuffer(delta), out);
        return ByteBufUtil.getBytes(out);
    }

    static byte[] hex(String hex) {
        return ByteBufUtil.decodeHexDump(hex.replace(" ", ""));
    }
}
