package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.ringcast.protocol.Recorder.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The options block of {@code SUBSCRIBE} (docs/protocol.md, "Subscribe options"): every option and
 * every combination round trips; a fault of framing is {@code MALFORMED_FRAME}, fatal, like any
 * other length fault; a fault of content in a well-framed block is a refusal the handler gets
 * ({@link MessageHandler#onSubscribeRefused}), with the reason a server sends.
 */
class SubscribeOptionsWireTest {
    private final TrackedBuffers buffers = new TrackedBuffers();
    private final Recorder recorder = new Recorder();

    @AfterEach
    void releaseBuffers() {
        buffers.close();
    }

    private static final List<String> THIRTY_TWO_PATHS = IntStream.rangeClosed(1, 32).mapToObj(i -> "f" + i).toList();

    /**
     * Every non-empty combination of the five options (31), each option at one of its edge or
     * typical values, chosen by the combination's number so that all of them occur.
     */
    static List<SubscribeOptions> everyCombination() {
        double[] rates = {0.001, 4, 100_000, 2.5};
        List<List<String>> fields = List.of(List.of("bid"), List.of("bid", "ask"), THIRTY_TWO_PATHS,
                List.of("quote.bid", "価格", ""));
        String[] filters = {"x = 1", "spread < 0.0005", "é".repeat(1024), "名前 = '東京'", " "};
        int[] rewinds = {1, 60, Integer.MAX_VALUE};
        long[] sinces = {0, 1_795_737_600_000L, Long.MAX_VALUE};
        List<SubscribeOptions> all = new ArrayList<>();
        for (int mask = 1; mask < 32; mask++) {
            SubscribeOptions.Builder b = SubscribeOptions.builder();
            if ((mask & 1) != 0) {
                b.maxRate(rates[mask % rates.length]);
            }
            if ((mask & 2) != 0) {
                b.fields(fields.get(mask % fields.size()));
            }
            if ((mask & 4) != 0) {
                b.filter(filters[mask % filters.length]);
            }
            if ((mask & 8) != 0) {
                b.rewind(rewinds[mask % rewinds.length]);
            }
            if ((mask & 16) != 0) {
                b.rewindSince(sinces[mask % sinces.length]);
            }
            all.add(b.build());
        }
        return all;
    }

    static Stream<Named<SubscribeOptions>> combinations() {
        return everyCombination().stream().map(o -> Named.of(String.join("+", o.names()), o));
    }

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    /** A {@code SUBSCRIBE} of {@code id} to {@code #} without resume positions, then {@code block}. */
    private ByteBuf subscribe(int id, byte[] block) {
        ByteBuf frame = buffers.allocate();
        frame.writeByte(MessageType.SUBSCRIBE).writeInt(4 + 3 + 4 + block.length);
        frame.writeInt(id).writeShort(1).writeByte('#').writeInt(0).writeBytes(block);
        return frame;
    }

    /** Decodes {@code frame} for a server and returns the options {@code onSubscribe} got. */
    private static SubscribeOptions decodedOptions(ByteBuf frame) throws ProtocolException {
        SubscribeOptions[] got = new SubscribeOptions[1];
        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume,
                                    SubscribeOptions options) {
                got[0] = options;
            }
        });
        return got[0];
    }

    // ---------------------------------------------------------------- round trips

    @ParameterizedTest
    @MethodSource("combinations")
    void everyCombinationRoundTripsWithAndWithoutAResumeList(SubscribeOptions options) throws ProtocolException {
        Map<String, Long> resume = new LinkedHashMap<>();
        resume.put("fx/EURUSD", 42L);
        resume.put("株価/東京", Long.MAX_VALUE);
        for (Map<String, Long> r : List.of(Map.<String, Long>of(), resume)) {
            ByteBuf frame = buffers.allocate();
            WireCodec.writeSubscribe(frame, 0xFFFFFFFF, "fx/#", r, options);
            ByteBuf again = buffers.allocate();
            WireCodec.writeSubscribe(again, 0xFFFFFFFF, "fx/#", r, options);

            SubscribeOptions decoded = decodedOptions(again);
            WireCodec.decode(frame, recorder.serverSide());

            assertThat(recorder.events).containsExactly(event("SUBSCRIBE", 4294967295L, "fx/#", r, options));
            assertThat(decoded).isEqualTo(options).hasSameHashCodeAs(options).isNotSameAs(options);
            assertThat(decoded.names()).isEqualTo(options.names());
            recorder.events.clear();
        }
    }

    @Test
    void withoutOptionsThereIsNoBlockAndTheHandlerGetsNone() throws ProtocolException {
        ByteBuf plain = buffers.allocate();
        WireCodec.writeSubscribe(plain, 1, "fx/#", Map.of("fx/a", 3L));
        ByteBuf none = buffers.allocate();
        WireCodec.writeSubscribe(none, 1, "fx/#", Map.of("fx/a", 3L), SubscribeOptions.NONE);
        ByteBuf built = buffers.allocate();
        WireCodec.writeSubscribe(built, 1, "fx/#", Map.of("fx/a", 3L), SubscribeOptions.builder().build());

        assertThat(ByteBufUtil.hexDump(none)).isEqualTo(ByteBufUtil.hexDump(plain))
                .isEqualTo(ByteBufUtil.hexDump(built))
                .isEqualTo("020000001c000000010004" + "66782f23" + "00000001" + "000466782f61" + "0000000000000003");
        assertThat(decodedOptions(plain)).isSameAs(SubscribeOptions.NONE);
    }

    @Test
    void theBlockFollowsTheResumeListAndItsOptionsComeInTheOrderOfTheirKinds() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 2, "#", Map.of(), SubscribeOptions.builder()
                .rewindSince(5).rewind(4).filter("a=1").fields("b").maxRate(0.002).build());

        assertThat(ByteBufUtil.hexDump(frame, WireCodec.HEADER_BYTES + 4 + 3 + 4, frame.readableBytes() - 16))
                .isEqualTo("05" + "01000400000002" + "02000401000162" + "030003613d31" + "04000400000004"
                        + "0500080000000000000005");
    }

    @Test
    void optionsInAnyOrderOnTheWireAreReadTheSame() throws ProtocolException {
        ByteBuf frame = subscribe(1, hex("03 0500080000000000000005 030003613d31 01000400000002"));

        assertThat(decodedOptions(frame)).isEqualTo(SubscribeOptions.builder()
                .maxRate(0.002).filter("a=1").rewindSince(5).build());
    }

    @Test
    void theWireKeepsWhatTheServerChecks() throws ProtocolException {
        // empty and duplicate paths, a blank filter: well framed and in range, so the codec passes
        // them on; the server's FieldProjection and ValueFilter refuse them
        ByteBuf frame = subscribe(1, hex("02 020006 02 0000 000161 030001 20")); // fields "" and "a", filter " "

        assertThat(decodedOptions(frame)).isEqualTo(SubscribeOptions.builder().fields("", "a").filter(" ").build());
    }

    @Test
    void aFilterOf1024CharactersIsAcceptedWhateverItsUtf8Length() throws ProtocolException {
        for (String filter : List.of("€".repeat(1024), "😀".repeat(512), "x".repeat(1024))) {
            SubscribeOptions options = SubscribeOptions.builder().filter(filter).build();
            ByteBuf frame = buffers.allocate();
            WireCodec.writeSubscribe(frame, 1, "#", Map.of(), options);

            assertThat(decodedOptions(frame).filter()).isEqualTo(filter);
        }
    }

    @Test
    void aFieldsValueOf65535BytesIsTheLargest() throws ProtocolException {
        String path = "p".repeat(65_535 - 1 - 2);
        SubscribeOptions options = SubscribeOptions.builder().fields(path).build();
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 1, "#", Map.of(), options);

        assertThat(frame.getUnsignedShort(WireCodec.HEADER_BYTES + 4 + 3 + 4 + 1 + 1)).isEqualTo(65_535);
        assertThat(decodedOptions(frame).fields()).containsExactly(path);
    }

    // ---------------------------------------------------------------- framing faults: fatal

    static Stream<Arguments> framingFaults() {
        return Stream.of(
                Arguments.of(Named.of("a count and no option", "01"), "field options[0].kind needs 1 bytes, 0 left"),
                Arguments.of(Named.of("a count the options do not fill", "02 04000400000001"),
                        "field options[1].kind needs 1 bytes, 0 left"),
                Arguments.of(Named.of("a length cut short", "01 0100"), "field options[0].length needs 2 bytes, 1 left"),
                Arguments.of(Named.of("a value running past the body", "01 0100040000"),
                        "field options[0].value needs 4 bytes, 2 left"),
                Arguments.of(Named.of("a filter of 65535 bytes in a 1-byte rest", "01 03ffff41"),
                        "field options[0].value needs 65535 bytes, 1 left"),
                Arguments.of(Named.of("a byte after the last option", "01 04000400000001 ca"),
                        "1 bytes after the last of 1 options: the options block ends the message"),
                Arguments.of(Named.of("bytes after a count of 0", "00 cafe"),
                        "2 bytes after the last of 0 options: the options block ends the message"),
                Arguments.of(Named.of("a count smaller than the options", "01 04000400000001 04000400000002"),
                        "7 bytes after the last of 1 options"),
                Arguments.of(Named.of("bytes a reader before the block skipped as appended fields", "cafe00"),
                        "field options[0].length needs 2 bytes, 1 left"),
                Arguments.of(Named.of("a framing fault behind an unknown kind", "02 090000 0400040000"),
                        "field options[1].value needs 4 bytes, 2 left"),
                Arguments.of(Named.of("a framing fault behind a repeated kind", "03 01000400000001 01000400000001 01"),
                        "field options[2].length needs 2 bytes, 0 left"),
                Arguments.of(Named.of("incarnations running past the body", "01 0600080000"),
                        "field options[0].value needs 8 bytes, 2 left"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("framingFaults")
    void aFramingFaultOfTheBlockIsMalformedAndFatal(String block, String reason) {
        ByteBuf frame = subscribe(1, hex(block));
        WireCodec.writePing(frame, 2);

        ProtocolException e = null;
        try {
            WireCodec.decode(frame, recorder.serverSide());
        } catch (ProtocolException thrown) {
            e = thrown;
        }

        assertThat(e).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).startsWith("truncated or malformed SUBSCRIBE message: ").contains(reason);
        assertThat(recorder.events).as("nothing handled, not even the refusal of an option").isEmpty();
    }

    // ---------------------------------------------------------------- content faults: refused

    private static String hexOf(String text) {
        return HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
    }

    /** One filter option of {@code text}, as a block. */
    private static String filterBlock(String text) {
        return String.format("01 03%04x", text.getBytes(StandardCharsets.UTF_8).length) + hexOf(text);
    }

    /** The kinds an unknown one's reason lists. */
    private static final String KINDS = " (1 maxRate, 2 fields, 3 filter, 4 rewind, 5 rewindSince, 6 incarnations)";

    static Stream<Arguments> contentFaults() {
        String maxRateRange = " thousandths of an update per second, out of range (1 to 100000000: 0.001 to 100000 "
                + "updates per second)";
        return Stream.of(
                Arguments.of(Named.of("optionCount 0", "00"),
                        "options: optionCount 0; a SUBSCRIBE without options has no options block"),
                Arguments.of(Named.of("kind 0", "01 000000"), "option kind 0 is unknown" + KINDS),
                Arguments.of(Named.of("kind 7", "01 07000100"), "option kind 7 is unknown" + KINDS),
                Arguments.of(Named.of("kind 255 after a good option", "02 04000400000001 ff0003616263"),
                        "option kind 255 is unknown" + KINDS),
                Arguments.of(Named.of("maxRate twice", "02 01000400000fa0 01000400000fa0"),
                        "maxRate: given twice"),
                Arguments.of(Named.of("rewind twice, apart", "03 04000400000001 030001 78 04000400000002"),
                        "rewind: given twice"),
                Arguments.of(Named.of("filter twice, the same", "02 030001 78 030001 78"), "filter: given twice"),
                Arguments.of(Named.of("maxRate of 3 bytes", "01 010003000fa0"), "maxRate: 3 bytes; its value is a u32 of 4"),
                Arguments.of(Named.of("maxRate of 0 bytes", "01 010000"), "maxRate: 0 bytes; its value is a u32 of 4"),
                Arguments.of(Named.of("maxRate of 5 bytes", "01 0100050000000fa0"),
                        "maxRate: 5 bytes; its value is a u32 of 4"),
                Arguments.of(Named.of("maxRate 0", "01 01000400000000"), "maxRate: 0" + maxRateRange),
                Arguments.of(Named.of("maxRate 100000001", "01 01000405f5e101"), "maxRate: 100000001" + maxRateRange),
                Arguments.of(Named.of("maxRate u32 max", "01 010004ffffffff"), "maxRate: 4294967295" + maxRateRange),
                Arguments.of(Named.of("fields of 0 bytes", "01 020000"),
                        "fields: 0 bytes; its value starts with a u8 count of paths"),
                Arguments.of(Named.of("fields of 0 paths", "01 02000100"), "fields: no paths given; name at least one"),
                Arguments.of(Named.of("fields of 33 paths", "01 02000121"), "fields: 33 paths, more than 32"),
                Arguments.of(Named.of("fields of 255 paths", "01 020001ff"), "fields: 255 paths, more than 32"),
                Arguments.of(Named.of("fields, the second path missing", "01 020006 02 0003626964"),
                        "fields: path 2 of 2 runs past the end of the option's value"),
                Arguments.of(Named.of("fields, a path cut short", "01 020005 01 00036269"),
                        "fields: path 1 of 1 runs past the end of the option's value"),
                Arguments.of(Named.of("fields, half a path length", "01 020002 01 00"),
                        "fields: path 1 of 1 runs past the end of the option's value"),
                Arguments.of(Named.of("fields, a byte after the last path", "01 020004 01 0000 ff"),
                        "fields: 1 bytes after the last of 1 paths"),
                Arguments.of(Named.of("fields, a path not UTF-8", "01 020006 02 0000 0001 ff"),
                        "fields: path 2 of 2 is not valid UTF-8"),
                Arguments.of(Named.of("filter not UTF-8", "01 030002 c328"), "filter: not valid UTF-8"),
                Arguments.of(Named.of("filter, a surrogate in UTF-8", "01 030003 eda080"), "filter: not valid UTF-8"),
                Arguments.of(Named.of("filter empty", "01 030000"), "filter: empty"),
                Arguments.of(Named.of("filter of 1025 characters", filterBlock("x".repeat(1025))),
                        "filter: longer than 1024 characters (1025)"),
                Arguments.of(Named.of("filter of 513 emoji, 1026 UTF-16 units", filterBlock("😀".repeat(513))),
                        "filter: longer than 1024 characters (1026)"),
                Arguments.of(Named.of("rewind of 2 bytes", "01 0400020001"), "rewind: 2 bytes; its value is a u32 of 4"),
                Arguments.of(Named.of("rewind 0", "01 04000400000000"), "rewind: 0 updates; rewind at least 1"),
                Arguments.of(Named.of("rewind 2^31", "01 04000480000000"),
                        "rewind: 2147483648 updates, more than 2147483647"),
                Arguments.of(Named.of("rewindSince of 4 bytes", "01 05000400000000"),
                        "rewindSince: 4 bytes; its value is a u64 of 8"),
                Arguments.of(Named.of("rewindSince 2^63", "01 0500088000000000000000"),
                        "rewindSince: 9223372036854775808, above 2^63-1"),
                Arguments.of(Named.of("incarnations of 4 bytes, no resume list", "01 06000400000001"),
                        "incarnations: 4 bytes for 0 resume positions; a u32 each, 0 bytes"),
                Arguments.of(Named.of("incarnations of 1 byte, no resume list", "01 06000100"),
                        "incarnations: 1 bytes for 0 resume positions; a u32 each, 0 bytes"),
                Arguments.of(Named.of("incarnations twice, both empty", "02 060000 060000"),
                        "incarnations: given twice"),
                Arguments.of(Named.of("the first of two faults", "02 01000400000000 090000"),
                        "maxRate: 0" + maxRateRange));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contentFaults")
    void aContentFaultIsRefusedWithItsReasonAndTheFrameGoesOn(String block, String reason) throws ProtocolException {
        ByteBuf frame = subscribe(0xFFFFFFFE, hex(block));
        WireCodec.writePing(frame, 2);

        WireCodec.decode(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(
                event("SUBSCRIBE_REFUSED", 4294967294L, ErrorCode.INVALID_OPTIONS, reason), event("PING", 2));
    }

    @Test
    void invalidOptionsIsNotFatal() {
        assertThat(ErrorCode.INVALID_OPTIONS.code()).isEqualTo(32);
        assertThat(ErrorCode.INVALID_OPTIONS.fatal()).isFalse();
        assertThat(ErrorCode.INVALID_OPTIONS.closeCode()).isZero();
        assertThat(ErrorCode.of(32)).isSameAs(ErrorCode.INVALID_OPTIONS);
    }

    // ---------------------------------------------------------------- incarnations

    /** The incarnation docs/protocol.md's example gives its topic. */
    private static final int INCARNATION = GoldenFramesTest.INCARNATION;

    /**
     * A {@code SUBSCRIBE} of {@code id} to {@code #} resuming {@code t0}, {@code t1}... from
     * sequences 1, 2..., then {@code block}.
     */
    private ByteBuf subscribeResuming(int id, int resumeCount, byte[] block) {
        ByteBuf frame = buffers.allocate();
        frame.writeByte(MessageType.SUBSCRIBE).writeInt(0);
        frame.writeInt(id).writeShort(1).writeByte('#').writeInt(resumeCount);
        for (int i = 0; i < resumeCount; i++) {
            WireCodec.writeString(frame, "t" + i);
            frame.writeLong(i + 1);
        }
        frame.writeBytes(block);
        frame.setInt(1, frame.writerIndex() - WireCodec.HEADER_BYTES);
        return frame;
    }

    private static Map<String, Long> twoPositions() {
        Map<String, Long> resume = new LinkedHashMap<>();
        resume.put("fx/EURUSD", 42L);
        resume.put("株価/東京", Long.MAX_VALUE);
        return resume;
    }

    @ParameterizedTest
    @MethodSource("combinations")
    void everyCombinationWithIncarnationsRoundTripsWithItsResumeList(SubscribeOptions others)
            throws ProtocolException {
        SubscribeOptions options = others.withIncarnations(new int[] {INCARNATION, 0});
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 9, "fx/#", twoPositions(), options);
        ByteBuf again = buffers.allocate();
        WireCodec.writeSubscribe(again, 9, "fx/#", twoPositions(), options);

        SubscribeOptions decoded = decodedOptions(again);
        WireCodec.decode(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(event("SUBSCRIBE", 9, "fx/#", twoPositions(), options,
                "incarnations [1764384256, 0]"));
        assertThat(decoded).isEqualTo(options).hasSameHashCodeAs(options);
        assertThat(decoded.incarnations()).containsExactly(INCARNATION, 0);
        assertThat(decoded.names()).endsWith("incarnations");
    }

    @Test
    void incarnationsComeLastAsKind6WithAU32PerResumePosition() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 2, "#", twoPositions(), SubscribeOptions.builder()
                .incarnations(new int[] {INCARNATION, 0xFFFFFFFF}).rewind(4).build());

        int block = frame.writerIndex() - (1 + 7 + 3 + 8);
        assertThat(ByteBufUtil.hexDump(frame, block, frame.writerIndex() - block))
                .isEqualTo("02" + "04000400000004" + "060008" + "692a5e00" + "ffffffff");
    }

    @Test
    void theLargestResumeListThatCarriesIncarnationsFillsTheU16Length() throws ProtocolException {
        Map<String, Long> resume = new LinkedHashMap<>();
        int[] incarnations = new int[WireCodec.MAX_RESUME_INCARNATIONS];
        for (int i = 0; i < incarnations.length; i++) {
            resume.put("t" + i, (long) i + 1);
            incarnations[i] = i * 7;
        }
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 1, "#", resume, SubscribeOptions.builder().incarnations(incarnations).build());

        int optionLength = frame.getUnsignedShort(frame.writerIndex() - 16_383 * 4 - 2);
        SubscribeOptions decoded = decodedOptions(frame);

        assertThat(optionLength).isEqualTo(65_532);
        assertThat(decoded.incarnations()).containsExactly(incarnations);
    }

    static Stream<Arguments> incarnationsOfTheWrongLength() {
        return Stream.of(
                Arguments.of(Named.of("8 bytes for 3 positions, the doc's example", "01 060008 0000000100000002"), 3,
                        "incarnations: 8 bytes for 3 resume positions; a u32 each, 12 bytes"),
                Arguments.of(Named.of("4 bytes for 2 positions", "01 060004 00000001"), 2,
                        "incarnations: 4 bytes for 2 resume positions; a u32 each, 8 bytes"),
                Arguments.of(Named.of("12 bytes for 2 positions", "01 06000c 000000010000000200000003"), 2,
                        "incarnations: 12 bytes for 2 resume positions; a u32 each, 8 bytes"),
                Arguments.of(Named.of("0 bytes for 2 positions", "01 060000"), 2,
                        "incarnations: 0 bytes for 2 resume positions; a u32 each, 8 bytes"),
                Arguments.of(Named.of("3 bytes for 1 position", "01 060003 000001"), 1,
                        "incarnations: 3 bytes for 1 resume positions; a u32 each, 4 bytes"),
                Arguments.of(Named.of("behind a good option", "02 04000400000001 060002 0000"), 1,
                        "incarnations: 2 bytes for 1 resume positions; a u32 each, 4 bytes"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("incarnationsOfTheWrongLength")
    void incarnationsOfTheWrongLengthAreRefusedWithTheirReasonAndTheFrameGoesOn(String block, int resumeCount,
                                                                                String reason)
            throws ProtocolException {
        ByteBuf frame = subscribeResuming(5, resumeCount, hex(block));
        WireCodec.writePing(frame, 2);

        WireCodec.decode(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(
                event("SUBSCRIBE_REFUSED", 5, ErrorCode.INVALID_OPTIONS, reason), event("PING", 2));
    }

    /**
     * The codec's decision for no resume positions and an incarnations option of 0 bytes: accepted,
     * as no incarnations. It keeps the documented rule (a length of 4 x resumeCount: 0), and a
     * client that sends incarnations with every resume list is not refused for resuming nothing;
     * the writer never sends it (an empty array is no option), so nothing depends on it either way.
     */
    @Test
    void noResumePositionsAndIncarnationsOf0BytesAreAPlainSubscription() throws ProtocolException {
        ByteBuf alone = subscribe(1, hex("01 060000"));
        ByteBuf withRewind = subscribe(1, hex("02 04000400000005 060000"));
        ByteBuf thenPing = subscribe(1, hex("01 060000"));
        WireCodec.writePing(thenPing, 2);

        assertThat(decodedOptions(alone)).isSameAs(SubscribeOptions.NONE);
        assertThat(decodedOptions(withRewind)).isEqualTo(SubscribeOptions.builder().rewind(5).build());
        WireCodec.decode(thenPing, recorder.serverSide());
        assertThat(recorder.events).containsExactly(event("SUBSCRIBE", 1, "#", "{}"), event("PING", 2));
    }

    /** A resume list of {@code path:sequence} entries in this order, then {@code block}. */
    private ByteBuf subscribeResuming(int id, List<String> entries, byte[] block) {
        ByteBuf frame = buffers.allocate();
        frame.writeByte(MessageType.SUBSCRIBE).writeInt(0);
        frame.writeInt(id).writeShort(1).writeByte('#').writeInt(entries.size());
        for (String entry : entries) {
            String[] pathAndSequence = entry.split(":");
            WireCodec.writeString(frame, pathAndSequence[0]);
            frame.writeLong(Long.parseLong(pathAndSequence[1]));
        }
        frame.writeBytes(block);
        frame.setInt(1, frame.writerIndex() - WireCodec.HEADER_BYTES);
        return frame;
    }

    @Test
    void aPathNamedTwiceKeepsTheIncarnationOfItsLastPositionAsItKeepsItsSequence() throws ProtocolException {
        // the fuzzer's crash-ead88b7b: the handler got 2 incarnations for a resume map of 1 path
        ByteBuf frame = subscribeResuming(3, List.of("a:5", "b:7", "a:9"),
                hex("01 06000c 00000001 00000002 00000003"));

        WireCodec.decode(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(event("SUBSCRIBE", 3, "#", "{a=9, b=7}", "{incarnations=2}",
                "incarnations [3, 2]"));
    }

    @Test
    void withAPathNamedTwiceTheLengthIsStillCountedPerPosition() throws ProtocolException {
        ByteBuf frame = subscribeResuming(3, List.of("a:5", "a:9"), hex("01 060004 00000001"));

        WireCodec.decode(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(event("SUBSCRIBE_REFUSED", 3, ErrorCode.INVALID_OPTIONS,
                "incarnations: 4 bytes for 2 resume positions; a u32 each, 8 bytes"));
    }

    @Test
    void theWriterSendsNoIncarnationsOptionForNoIncarnations() {
        ByteBuf plain = buffers.allocate();
        WireCodec.writeSubscribe(plain, 1, "#", Map.of());
        ByteBuf none = buffers.allocate();
        WireCodec.writeSubscribe(none, 1, "#", Map.of(), SubscribeOptions.NONE.withIncarnations(new int[0]));

        assertThat(ByteBufUtil.hexDump(none)).isEqualTo(ByteBufUtil.hexDump(plain));
    }

    @Test
    void aHandlerOfPlainSubscriptionsRefusesIncarnationsThroughTheDefault() throws ProtocolException {
        // a handler that serves plain subscriptions only refuses, rather than resumes by sequence alone
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 5, "#", twoPositions(), SubscribeOptions.builder()
                .incarnations(new int[] {1, 2}).build());
        List<String> got = new ArrayList<>();

        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume) {
                got.add("open " + subscriptionId);
            }

            @Override
            public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) {
                got.add("refuse " + subscriptionId + " " + code + " " + reason);
            }
        });

        assertThat(got).containsExactly("refuse 5 INVALID_OPTIONS options are not served here: incarnations");
    }

    // ---------------------------------------------------------------- the handler's defaults

    @Test
    void aHandlerOfPlainSubscriptionsRefusesOptionsThroughTheDefault() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeSubscribe(frame, 4, "#", Map.of(), SubscribeOptions.NONE);
        WireCodec.writeSubscribe(frame, 5, "#", Map.of(), SubscribeOptions.builder().fields("a").maxRate(1).build());
        List<String> got = new ArrayList<>();

        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume) {
                got.add("open " + subscriptionId);
            }

            @Override
            public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) {
                got.add("refuse " + subscriptionId + " " + code + " " + reason);
            }
        });

        assertThat(got).containsExactly("open 4", "refuse 5 INVALID_OPTIONS options are not served here: maxRate, fields");
    }

    @Test
    void aHandlerThatTakesNoSubscribeRefusesARefusableOneAsUnexpected() {
        for (byte[] block : List.of(hex("01 04000400000001"), hex("00"))) {
            ByteBuf frame = subscribe(1, block);
            try {
                WireCodec.decode(frame, recorder.clientSide());
                throw new AssertionError("decoded");
            } catch (ProtocolException e) {
                assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
                assertThat(e.reason()).isEqualTo("message type SUBSCRIBE is not accepted in this direction");
            }
        }
    }
}
