package io.ringcast.protocol;

import io.ringcast.protocol.HexFrames.Direction;
import io.ringcast.protocol.HexFrames.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.ringcast.protocol.Recorder.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins the wire format (STYLE point 14): the frames under {@code src/test/resources/golden} are
 * checked both ways, and the example and tables of {@code docs/protocol.md} are checked against
 * the codec so the spec cannot drift from it.
 */
class GoldenFramesTest {
    private final TrackedBuffers buffers = new TrackedBuffers();
    private final Recorder recorder = new Recorder();

    @AfterEach
    void releaseBuffers() {
        buffers.close();
    }

    /** A golden file, the codec call that must produce it, and what decoding it must record. */
    record Golden(String file, Consumer<ByteBuf> writer, String event) {
    }

    private static Named<Golden> golden(String file, Consumer<ByteBuf> writer, String event) {
        return Named.of(file, new Golden(file, writer, event));
    }

    private static void withValue(String value, Consumer<ByteBuf> use) {
        ByteBuf buf = Unpooled.copiedBuffer(value, StandardCharsets.UTF_8);
        try {
            use.accept(buf);
        } finally {
            buf.release();
        }
    }

    /** The options of {@code subscribe-options.hex}: every option, as the file's comments say. */
    static final SubscribeOptions EVERY_OPTION = SubscribeOptions.builder()
            .maxRate(4)
            .fields("bid", "ask")
            .filter("spread < 0.0005")
            .rewind(60)
            .rewindSince(1_795_737_600_000L) // 2026-11-27T00:00:00Z
            .build();

    /** The incarnation of the topic in {@code topic.hex}, the doc's example and {@code subscribe-incarnations.hex}. */
    static final int INCARNATION = 0x692A5E00;

    static Stream<Named<Golden>> goldens() {
        Map<String, Long> resume = new LinkedHashMap<>();
        resume.put("fx/EURUSD/bid", 42L);
        resume.put("fx/GBPUSD/bid", 7L);
        Map<String, Long> resumeAcrossARemoval = new LinkedHashMap<>();
        resumeAcrossARemoval.put("fx/EURUSD", 42L);
        resumeAcrossARemoval.put("fx/GBPUSD", 7L);
        return Stream.of(
                golden("remove.hex", out -> WireCodec.writeRemove(out, 6, "fx/GBPUSD/#"),
                        event("REMOVE", 6, "fx/GBPUSD/#")),
                golden("topic-removed.hex", out -> WireCodec.writeTopicRemoved(out, 7, 43),
                        event("TOPIC_REMOVED", 7, 43)),
                golden("removed.hex", out -> WireCodec.writeRemoved(out, 6, 3),
                        event("REMOVED", 6, 3)),
                golden("subscribe-incarnations.hex",
                        out -> WireCodec.writeSubscribe(out, 4, "fx/#", resumeAcrossARemoval,
                                SubscribeOptions.builder().incarnations(new int[] {INCARNATION, 0}).build()),
                        event("SUBSCRIBE", 4, "fx/#", "{fx/EURUSD=42, fx/GBPUSD=7}", "{incarnations=2}",
                                "incarnations [1764384256, 0]")),
                golden("subscribe-options.hex",
                        out -> WireCodec.writeSubscribe(out, 3, "fx/+", Map.of("fx/EURUSD", 42L), EVERY_OPTION),
                        event("SUBSCRIBE", 3, "fx/+", "{fx/EURUSD=42}", "{maxRate=4, fields=[bid, ask], "
                                + "filter='spread < 0.0005', rewind=60, rewindSince=1795737600000}")),
                golden("view.hex", out -> WireCodec.writeView(out, 3, 7),
                        event("VIEW", 3, 7)),
                golden("unmatched.hex", out -> WireCodec.writeUnmatched(out, 7, 12, 43),
                        event("UNMATCHED", 7, 12, 43)),
                golden("snapshot-viewed.hex", out -> withValue("{\"bid\":1.0841}",
                                v -> WireCodec.writeSnapshot(out, 3, 12, 43, 0, 7, v, 0, v.readableBytes())),
                        event("SNAPSHOT", 3, 12, 43, UpdateFlags.VIEWED, "view 7", "7b22626964223a312e303834317d")),
                golden("update-viewed.hex", out -> withValue("{\"bid\":1.0842}",
                                v -> WireCodec.writeUpdate(out, 12, 44, 0, 7, v, 0, v.readableBytes())),
                        event("UPDATE", 12, 44, UpdateFlags.VIEWED, "view 7", "7b22626964223a312e303834327d")),
                golden("hello.hex", out -> WireCodec.writeHello(out, 1, "ringcli"),
                        event("HELLO", 1, "ringcli")),
                golden("subscribe.hex", out -> WireCodec.writeSubscribe(out, 2, "fx/+/bid", resume),
                        event("SUBSCRIBE", 2, "fx/+/bid", "{fx/EURUSD/bid=42, fx/GBPUSD/bid=7}")),
                golden("unsubscribe.hex", out -> WireCodec.writeUnsubscribe(out, 2),
                        event("UNSUBSCRIBE", 2)),
                golden("publish.hex", out -> WireCodec.writePublish(out, 5, "fx/EURUSD", new byte[]{0, (byte) 0xff, 0x10}),
                        event("PUBLISH", 5, "fx/EURUSD", "00ff10")),
                golden("republish.hex", out -> WireCodec.writeRepublish(out, 5, "fx/EURUSD", new byte[]{0, (byte) 0xff, 0x10}),
                        event("REPUBLISH", 5, "fx/EURUSD", "00ff10")),
                golden("ping.hex", out -> WireCodec.writePing(out, 0x0123456789ABCDEFL),
                        event("PING", 0x0123456789ABCDEFL)),
                golden("welcome.hex", out -> WireCodec.writeWelcome(out, 1, "s-00002a", 1 << 20, 30_000),
                        event("WELCOME", 1, "s-00002a", 1048576, 30000)),
                golden("topic.hex", out -> WireCodec.writeTopic(out, 256, "fx/€", INCARNATION),
                        event("TOPIC", 256, "fx/€", 1764384256)),
                golden("snapshot.hex", out -> withValue("1.0842",
                                v -> WireCodec.writeSnapshot(out, 0, 7, 42, UpdateFlags.GAP, v, 0, v.readableBytes())),
                        event("SNAPSHOT", 0, 7, 42, UpdateFlags.GAP, "312e30383432")),
                golden("update.hex", out -> withValue("", v -> WireCodec.writeUpdate(out, 7, Long.MAX_VALUE, 0, v, 0, 0)),
                        event("UPDATE", 7, Long.MAX_VALUE, 0, "")),
                golden("publish-ack.hex", out -> WireCodec.writePublishAck(out, 5, 43),
                        event("PUBLISH_ACK", 5, 43)),
                golden("subscribed.hex", out -> WireCodec.writeSubscribed(out, 2, 1000),
                        event("SUBSCRIBED", 2, 1000)),
                golden("error.hex", out -> WireCodec.writeError(out, ErrorCode.INVALID_PATH, 5, "bad path 'a//b'"),
                        event("ERROR", 20, 5, "bad path 'a//b'")),
                golden("pong.hex", out -> WireCodec.writePong(out, 0x0123456789ABCDEFL),
                        event("PONG", 0x0123456789ABCDEFL)));
    }

    private static String resource(String file) throws IOException {
        try (InputStream in = GoldenFramesTest.class.getResourceAsStream("/golden/" + file)) {
            assertThat(in).as("resource golden/" + file).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static List<Frame> goldenFrames(String file) throws IOException {
        return HexFrames.parse(resource(file), "golden/" + file);
    }

    /** docs/protocol.md, found from the module directory (Maven) or the repository root (IDE). */
    private static String protocolDoc() throws IOException {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (int up = 0; up < 3 && dir != null; up++, dir = dir.getParent()) {
            Path doc = dir.resolve("docs/protocol.md");
            if (Files.isRegularFile(doc)) {
                return Files.readString(doc);
            }
        }
        throw new AssertionError("docs/protocol.md not found above " + System.getProperty("user.dir"));
    }

    private String encode(Consumer<ByteBuf> writer) {
        ByteBuf out = buffers.allocate();
        writer.accept(out);
        return ByteBufUtil.hexDump(out);
    }

    private List<String> decode(Frame frame) throws ProtocolException {
        recorder.events.clear();
        MessageHandler side = frame.direction() == Direction.CLIENT_TO_SERVER
                ? recorder.serverSide() : recorder.clientSide();
        WireCodec.decode(buffers.of(frame.bytes()), side);
        return List.copyOf(recorder.events);
    }

    // ---------------------------------------------------------------- one file per message type

    @ParameterizedTest
    @MethodSource("goldens")
    void encodingEqualsTheGoldenFrame(Golden golden) throws IOException {
        List<Frame> frames = goldenFrames(golden.file());

        assertThat(frames).hasSize(1);
        assertThat(encode(golden.writer())).isEqualTo(frames.get(0).hex());
    }

    @ParameterizedTest
    @MethodSource("goldens")
    void decodingTheGoldenFrameGivesItsFields(Golden golden) throws IOException, ProtocolException {
        Frame frame = goldenFrames(golden.file()).get(0);

        assertThat(decode(frame)).containsExactly(golden.event());
    }

    @Test
    void everyGoldenFileIsChecked() throws IOException, URISyntaxException {
        Path dir = Path.of(GoldenFramesTest.class.getResource("/golden").toURI());
        List<String> checked = new ArrayList<>(goldens().map(n -> n.getPayload().file()).toList());
        checked.add("doc-example.hex");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".hex")))
                    .containsExactlyInAnyOrderElementsOf(checked);
        }
    }

    @Test
    void goldenFilesCoverEveryMessageType() throws IOException {
        Set<String> types = new TreeSet<>();
        for (Named<Golden> g : goldens().toList()) {
            types.add(MessageType.name(goldenFrames(g.getPayload().file()).get(0).bytes()[0]));
        }

        assertThat(types).isEqualTo(messageTypesInCode().keySet());
    }

    // ---------------------------------------------------------------- docs/protocol.md

    private static final List<List<String>> DOC_EXAMPLE_EVENTS = List.of(
            List.of(event("HELLO", 1, "demo1")),
            List.of(event("WELCOME", 1, "s-000001", 1048576, 120000)),
            List.of(event("SUBSCRIBE", 1, "fx/#", "{}")),
            List.of(event("TOPIC", 7, "fx/EURUSD", 1764384256),
                    event("SNAPSHOT", 1, 7, 42, 0, "312e30383432"),
                    event("SUBSCRIBED", 1, 1)),
            List.of(event("PUBLISH", 1, "fx/EURUSD", "312e30383433")),
            List.of(event("UPDATE", 7, 43, 0, "312e30383433")),
            List.of(event("PUBLISH_ACK", 1, 43)));

    @Test
    void docExampleShowsTheGoldenExample() throws IOException {
        assertThat(HexFrames.parseDocExample(protocolDoc())).containsExactlyElementsOf(goldenFrames("doc-example.hex"));
    }

    @Test
    void docOptionsExampleShowsTheGoldenSubscribeWithEveryOption() throws IOException {
        assertThat(HexFrames.parseDocBlock(protocolDoc(), "A `SUBSCRIBE` with every option"))
                .containsExactlyElementsOf(goldenFrames("subscribe-options.hex"));
    }

    @Test
    void docExampleIsWhatTheCodecEncodes() throws IOException {
        List<Consumer<ByteBuf>> exchange = List.of(
                out -> WireCodec.writeHello(out, 1, "demo1"),
                out -> WireCodec.writeWelcome(out, 1, "s-000001", 1 << 20, 120_000),
                out -> WireCodec.writeSubscribe(out, 1, "fx/#", Map.of()),
                out -> {
                    WireCodec.writeTopic(out, 7, "fx/EURUSD", INCARNATION);
                    withValue("1.0842", v -> WireCodec.writeSnapshot(out, 1, 7, 42, 0, v, 0, v.readableBytes()));
                    WireCodec.writeSubscribed(out, 1, 1);
                },
                out -> WireCodec.writePublish(out, 1, "fx/EURUSD", "1.0843".getBytes(StandardCharsets.US_ASCII)),
                out -> withValue("1.0843", v -> WireCodec.writeUpdate(out, 7, 43, 0, v, 0, v.readableBytes())),
                out -> WireCodec.writePublishAck(out, 1, 43));

        List<Frame> frames = HexFrames.parseDocExample(protocolDoc());

        assertThat(frames).hasSameSizeAs(exchange);
        for (int i = 0; i < frames.size(); i++) {
            assertThat(frames.get(i).hex()).as("frame %d of the example", i + 1).isEqualTo(encode(exchange.get(i)));
        }
    }

    @Test
    void docExampleDecodesToTheExchangeItNarrates() throws IOException, ProtocolException {
        List<Frame> frames = HexFrames.parseDocExample(protocolDoc());

        List<List<String>> decoded = new ArrayList<>();
        for (Frame frame : frames) {
            decoded.add(decode(frame));
        }

        assertThat(decoded).containsExactlyElementsOf(DOC_EXAMPLE_EVENTS);
        assertThat(frames).extracting(Frame::direction).containsExactly(
                Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT, Direction.CLIENT_TO_SERVER,
                Direction.SERVER_TO_CLIENT, Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT,
                Direction.SERVER_TO_CLIENT);
    }

    private static Map<String, Integer> messageTypesInCode() {
        Map<String, Integer> types = new TreeMap<>();
        for (Field f : MessageType.class.getFields()) {
            if (f.getType() == byte.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    types.put(f.getName(), f.getByte(null) & 0xff);
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return types;
    }

    private static String section(String doc, String from, String to) {
        int start = doc.indexOf(from);
        int end = doc.indexOf(to, start);
        assertThat(start).as("section " + from).isNotNegative();
        assertThat(end).as("end of section " + from).isNotNegative();
        return doc.substring(start, end);
    }

    @Test
    void docMessageTypeTablesMatchMessageType() throws IOException {
        String tables = section(protocolDoc(), "## Messages, client to server", "### Topic aliases");
        Matcher row = Pattern.compile("(?m)^\\| `0x([0-9a-fA-F]{2})` \\| `([A-Z_]+)` \\|").matcher(tables);
        Map<String, Integer> inDoc = new TreeMap<>();
        while (row.find()) {
            inDoc.put(row.group(2), Integer.parseInt(row.group(1), 16));
        }

        assertThat(inDoc).isEqualTo(messageTypesInCode());
    }

    @Test
    void docFlagsTableMatchesUpdateFlags() throws IOException {
        String table = section(protocolDoc(), "### Flags", "### Delivery rules");
        Matcher row = Pattern.compile("(?m)^\\| `0x([0-9a-fA-F]{2})` \\| `([A-Z_]+)` \\|").matcher(table);
        Map<String, Integer> inDoc = new TreeMap<>();
        while (row.find()) {
            inDoc.put(row.group(2), Integer.parseInt(row.group(1), 16));
        }

        assertThat(inDoc).isEqualTo(flagsInCode());
    }

    private static Map<String, Integer> flagsInCode() {
        Map<String, Integer> flags = new TreeMap<>();
        for (Field f : UpdateFlags.class.getFields()) {
            if (f.getType() == int.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    flags.put(f.getName(), f.getInt(null));
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return flags;
    }

    @Test
    void docOptionKindsTableMatchesTheCodec() throws IOException {
        String table = section(protocolDoc(), "### Subscribe options", "An option's value");
        Matcher row = Pattern.compile("(?m)^\\| (\\d+) \\| `([a-zA-Z]+)` \\|").matcher(table);
        Map<Integer, String> inDoc = new TreeMap<>();
        while (row.find()) {
            inDoc.put(Integer.parseInt(row.group(1)), row.group(2));
        }

        Map<Integer, String> inCode = new TreeMap<>();
        for (int kind = 0; kind < 256; kind++) {
            if (SubscribeOptions.name(kind) != null) {
                inCode.put(kind, SubscribeOptions.name(kind));
            }
        }
        assertThat(inDoc).isEqualTo(inCode);
    }

    @Test
    void docErrorTableMatchesErrorCode() throws IOException {
        String table = section(protocolDoc(), "## Errors", "A client that receives an unknown error code");
        Matcher row = Pattern.compile("(?m)^\\| (\\d+) \\| `([A-Z_]+)` \\| (yes|no) \\| (\\d*)").matcher(table);
        Map<String, String> inDoc = new TreeMap<>();
        while (row.find()) {
            int close = row.group(4).isEmpty() ? 0 : Integer.parseInt(row.group(4));
            inDoc.put(row.group(2), row.group(1) + " fatal=" + row.group(3).equals("yes") + " close=" + close);
        }

        Map<String, String> inCode = Stream.of(ErrorCode.values()).collect(Collectors.toMap(Enum::name,
                c -> c.code() + " fatal=" + c.fatal() + " close=" + c.closeCode(), (a, b) -> a, TreeMap::new));
        assertThat(inDoc).isEqualTo(inCode);
    }
}
