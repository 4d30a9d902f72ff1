package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.ringcast.protocol.Recorder.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WireCodecTest {
    private final TrackedBuffers buffers = new TrackedBuffers();
    private final Recorder recorder = new Recorder();

    @AfterEach
    void releaseBuffers() {
        buffers.close();
    }

    // ---------------------------------------------------------------- samples

    /** One message of each type (some types twice, at their edge values) and what decoding it records. */
    record Sample(byte type, Consumer<ByteBuf> writer, String event) {
        boolean clientToServer() {
            return (type & 0x80) == 0;
        }

        /** PUBLISH, SNAPSHOT and UPDATE end in {@code rest value}: extra bytes are value, not unknown fields. */
        boolean endsWithRest() {
            return type == MessageType.PUBLISH || type == MessageType.REPUBLISH || type == MessageType.SNAPSHOT
                    || type == MessageType.UPDATE;
        }
    }

    private static final byte[] VALUE = {0x00, 0x01, (byte) 0xfe, (byte) 0xff};
    private static final SubscribeOptions EVERY_OPTION = GoldenFramesTest.EVERY_OPTION;

    /** Runs {@code use} with an unpooled buffer holding {@code bytes}, released afterwards. */
    private static void withBuffer(byte[] bytes, Consumer<ByteBuf> use) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            use.accept(buf);
        } finally {
            buf.release();
        }
    }

    private static Map<String, Long> resume() {
        Map<String, Long> resume = new LinkedHashMap<>();
        resume.put("fx/EURUSD/bid", 42L);
        resume.put("fx/GBPUSD/bid", Long.MAX_VALUE);
        resume.put("météo/zürich", 0L);
        return resume;
    }

    static Stream<Named<Sample>> samples() {
        byte[] framed = {'x', 'x', '1', '.', '0', '8', '4', '2', 'y', 'y'}; // value "1.0842" at index 2
        return Stream.of(
                Named.of("HELLO", new Sample(MessageType.HELLO,
                        out -> WireCodec.writeHello(out, 1, "ringcast-java/0.1 é🚀"),
                        event("HELLO", 1, "ringcast-java/0.1 é🚀"))),
                Named.of("HELLO u16 max version, empty name", new Sample(MessageType.HELLO,
                        out -> WireCodec.writeHello(out, 0xFFFF, ""),
                        event("HELLO", 65535, ""))),
                Named.of("SUBSCRIBE with resume", new Sample(MessageType.SUBSCRIBE,
                        out -> WireCodec.writeSubscribe(out, 7, "fx/+/bid", resume()),
                        event("SUBSCRIBE", 7, "fx/+/bid", resume()))),
                Named.of("SUBSCRIBE u32 max id, no resume", new Sample(MessageType.SUBSCRIBE,
                        out -> WireCodec.writeSubscribe(out, 0xFFFFFFFF, "#", Map.of()),
                        event("SUBSCRIBE", 4294967295L, "#", "{}"))),
                Named.of("SUBSCRIBE with resume and every option", new Sample(MessageType.SUBSCRIBE,
                        out -> WireCodec.writeSubscribe(out, 7, "fx/+/bid", resume(), EVERY_OPTION),
                        event("SUBSCRIBE", 7, "fx/+/bid", resume(), EVERY_OPTION))),
                Named.of("SUBSCRIBE with one option, no resume", new Sample(MessageType.SUBSCRIBE,
                        out -> WireCodec.writeSubscribe(out, 8, "#", Map.of(),
                                SubscribeOptions.builder().rewind(1).build()),
                        event("SUBSCRIBE", 8, "#", "{}", "{rewind=1}"))),
                Named.of("UNSUBSCRIBE", new Sample(MessageType.UNSUBSCRIBE,
                        out -> WireCodec.writeUnsubscribe(out, 0xFFFFFFFE),
                        event("UNSUBSCRIBE", 4294967294L))),
                Named.of("PUBLISH", new Sample(MessageType.PUBLISH,
                        out -> WireCodec.writePublish(out, 9, "fx/EURUSD", VALUE),
                        event("PUBLISH", 9, "fx/EURUSD", "0001feff"))),
                Named.of("PUBLISH empty value", new Sample(MessageType.PUBLISH,
                        out -> WireCodec.writePublish(out, 0, "株価/東京", new byte[0]),
                        event("PUBLISH", 0, "株価/東京", ""))),
                Named.of("REPUBLISH", new Sample(MessageType.REPUBLISH,
                        out -> WireCodec.writeRepublish(out, 9, "fx/EURUSD", VALUE),
                        event("REPUBLISH", 9, "fx/EURUSD", "0001feff"))),
                Named.of("REMOVE", new Sample(MessageType.REMOVE,
                        out -> WireCodec.writeRemove(out, 0xFFFFFFFF, "météo/+/zürich"),
                        event("REMOVE", 4294967295L, "météo/+/zürich"))),
                Named.of("REMOVE of #", new Sample(MessageType.REMOVE,
                        out -> WireCodec.writeRemove(out, 0, "#"),
                        event("REMOVE", 0, "#"))),
                Named.of("SUBSCRIBE with resume and its incarnations", new Sample(MessageType.SUBSCRIBE,
                        out -> WireCodec.writeSubscribe(out, 7, "fx/+/bid", resume(),
                                SubscribeOptions.builder().incarnations(new int[] {1, 0, 0xFFFFFFFF}).build()),
                        event("SUBSCRIBE", 7, "fx/+/bid", resume(), "{incarnations=3}",
                                "incarnations [1, 0, 4294967295]"))),
                Named.of("PING", new Sample(MessageType.PING,
                        out -> WireCodec.writePing(out, Long.MAX_VALUE),
                        event("PING", Long.MAX_VALUE))),
                Named.of("WELCOME", new Sample(MessageType.WELCOME,
                        out -> WireCodec.writeWelcome(out, 1, "s-000001", 1 << 20, 120_000),
                        event("WELCOME", 1, "s-000001", 1048576, 120000))),
                Named.of("TOPIC without an incarnation: 0", new Sample(MessageType.TOPIC,
                        out -> WireCodec.writeTopic(out, 0xFFFFFFFF, "株価/東京"),
                        event("TOPIC", 4294967295L, "株価/東京", 0))),
                Named.of("TOPIC u32 max incarnation", new Sample(MessageType.TOPIC,
                        out -> WireCodec.writeTopic(out, 7, "fx/EURUSD", 0xFFFFFFFF),
                        event("TOPIC", 7, "fx/EURUSD", 4294967295L))),
                Named.of("TOPIC_REMOVED", new Sample(MessageType.TOPIC_REMOVED,
                        out -> WireCodec.writeTopicRemoved(out, 0xFFFFFFFF, Long.MAX_VALUE),
                        event("TOPIC_REMOVED", 4294967295L, Long.MAX_VALUE))),
                Named.of("TOPIC_REMOVED lastSequence 0", new Sample(MessageType.TOPIC_REMOVED,
                        out -> WireCodec.writeTopicRemoved(out, 1, 0),
                        event("TOPIC_REMOVED", 1, 0))),
                Named.of("REMOVED, nothing matched", new Sample(MessageType.REMOVED,
                        out -> WireCodec.writeRemoved(out, 9, 0),
                        event("REMOVED", 9, 0))),
                Named.of("REMOVED u32 max", new Sample(MessageType.REMOVED,
                        out -> WireCodec.writeRemoved(out, 0xFFFFFFFF, 0xFFFFFFFF),
                        event("REMOVED", 4294967295L, 4294967295L))),
                Named.of("SNAPSHOT after a gap, value at an offset", new Sample(MessageType.SNAPSHOT,
                        out -> withBuffer(framed, v -> WireCodec.writeSnapshot(out, 0, 7, 42, UpdateFlags.GAP, v, 2, 6)),
                        event("SNAPSHOT", 0, 7, 42, 1, "312e30383432"))),
                Named.of("UPDATE with every flag bit but VIEWED", new Sample(MessageType.UPDATE,
                        out -> withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 7, Long.MAX_VALUE, 0xEF, v, 0, 4)),
                        event("UPDATE", 7, Long.MAX_VALUE, 0xEF, "0001feff"))),
                Named.of("UPDATE through a view, every flag bit, u32 max view id", new Sample(MessageType.UPDATE,
                        out -> withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 7, 9, 0xFF, 0xFFFFFFFF, v, 0, 4)),
                        event("UPDATE", 7, 9, 0xFF, "view 4294967295", "0001feff"))),
                Named.of("UPDATE through view 0, empty value", new Sample(MessageType.UPDATE,
                        out -> withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 1, 1, 0, 0, v, 4, 0)),
                        event("UPDATE", 1, 1, UpdateFlags.VIEWED, "view 0", ""))),
                Named.of("SNAPSHOT through a view, value at an offset", new Sample(MessageType.SNAPSHOT,
                        out -> withBuffer(framed, v -> WireCodec.writeSnapshot(out, 3, 7, 42, UpdateFlags.GAP, 5, v, 2, 6)),
                        event("SNAPSHOT", 3, 7, 42, UpdateFlags.GAP | UpdateFlags.VIEWED, "view 5", "312e30383432"))),
                Named.of("VIEW", new Sample(MessageType.VIEW,
                        out -> WireCodec.writeView(out, 0xFFFFFFFE, 0xFFFFFFFF),
                        event("VIEW", 4294967294L, 4294967295L))),
                Named.of("UNMATCHED", new Sample(MessageType.UNMATCHED,
                        out -> WireCodec.writeUnmatched(out, 5, 0xFFFFFFFF, Long.MAX_VALUE),
                        event("UNMATCHED", 5, 4294967295L, Long.MAX_VALUE))),
                Named.of("UPDATE empty value", new Sample(MessageType.UPDATE,
                        out -> withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 1, 1, 0, v, 4, 0)),
                        event("UPDATE", 1, 1, 0, ""))),
                Named.of("PUBLISH_ACK", new Sample(MessageType.PUBLISH_ACK,
                        out -> WireCodec.writePublishAck(out, 9, 43),
                        event("PUBLISH_ACK", 9, 43))),
                Named.of("SUBSCRIBED", new Sample(MessageType.SUBSCRIBED,
                        out -> WireCodec.writeSubscribed(out, 7, 0),
                        event("SUBSCRIBED", 7, 0))),
                Named.of("ERROR", new Sample(MessageType.ERROR,
                        out -> WireCodec.writeError(out, ErrorCode.INVALID_PATH, 9, "invalid path 'a//b'"),
                        event("ERROR", 20, 9, "invalid path 'a//b'"))),
                Named.of("PONG", new Sample(MessageType.PONG,
                        out -> WireCodec.writePong(out, 0),
                        event("PONG", 0))));
    }

    private ByteBuf encode(Sample sample) {
        ByteBuf frame = buffers.allocate();
        sample.writer().accept(frame);
        return frame;
    }

    private static ProtocolException decodeFailure(ByteBuf frame, MessageHandler handler) {
        try {
            WireCodec.decode(frame, handler);
        } catch (ProtocolException e) {
            return e;
        }
        throw new AssertionError("decode succeeded, expected a ProtocolException");
    }

    /** A frame of one message with this type and body, body length as given. */
    private ByteBuf message(byte type, long bodyLength, byte[] body) {
        ByteBuf frame = buffers.allocate();
        frame.writeByte(type);
        frame.writeInt((int) bodyLength);
        frame.writeBytes(body);
        return frame;
    }

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    // ---------------------------------------------------------------- round trips

    @ParameterizedTest
    @MethodSource("samples")
    void everyMessageTypeRoundTripsThroughWriteAndDecode(Sample sample) throws ProtocolException {
        ByteBuf frame = encode(sample);
        int written = frame.writerIndex();

        WireCodec.decode(frame, recorder.bothSides());

        assertThat(recorder.events).containsExactly(sample.event());
        assertThat(frame.readerIndex()).as("reader index after the message").isEqualTo(written);
    }

    @ParameterizedTest
    @MethodSource("samples")
    void headerStatesTypeAndBodyLength(Sample sample) {
        ByteBuf frame = encode(sample);

        assertThat(frame.getByte(0)).isEqualTo(sample.type());
        assertThat(frame.getUnsignedInt(1)).isEqualTo(frame.writerIndex() - WireCodec.HEADER_BYTES);
    }

    @ParameterizedTest
    @MethodSource("samples")
    void eachSideAcceptsItsOwnDirection(Sample sample) throws ProtocolException {
        ByteBuf frame = encode(sample);

        WireCodec.decode(frame, sample.clientToServer() ? recorder.serverSide() : recorder.clientSide());

        assertThat(recorder.events).containsExactly(sample.event());
    }

    @Test
    void overheadConstantsEqualTheEncodedSizeOfAnEmptyValue() {
        ByteBuf update = buffers.allocate();
        ByteBuf snapshot = buffers.allocate();
        withBuffer(new byte[0], v -> {
            WireCodec.writeUpdate(update, 1, 1, 0, v, 0, 0);
            WireCodec.writeSnapshot(snapshot, 1, 1, 1, 0, v, 0, 0);
        });

        assertThat(update.readableBytes()).isEqualTo(WireCodec.UPDATE_OVERHEAD_BYTES);
        assertThat(snapshot.readableBytes()).isEqualTo(WireCodec.SNAPSHOT_OVERHEAD_BYTES);
    }

    @Test
    void batchedMessagesDecodeInOrder() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        List<String> expected = new ArrayList<>();
        for (Named<Sample> named : samples().toList()) {
            named.getPayload().writer().accept(frame);
            expected.add(named.getPayload().event());
        }
        for (int i = 0; i < 100; i++) {
            WireCodec.writePublish(frame, i, "fx/EURUSD", new byte[]{(byte) i});
            expected.add(event("PUBLISH", i, "fx/EURUSD", String.format("%02x", i)));
        }

        WireCodec.decode(frame, recorder.bothSides());

        assertThat(recorder.events).containsExactlyElementsOf(expected);
        assertThat(frame.isReadable()).isFalse();
    }

    @Test
    void decodingStartsAtTheReaderIndex() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        frame.writeBytes(new byte[]{(byte) 0xee, (byte) 0xee, (byte) 0xee}); // not part of the frame
        WireCodec.writePublish(frame, 1, "a", VALUE);
        WireCodec.writePing(frame, 2);
        frame.readerIndex(3);

        WireCodec.decode(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(event("PUBLISH", 1, "a", "0001feff"), event("PING", 2));
    }

    @Test
    void valueRangeIsInsideTheFrameAfterTheFixedFields() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        WireCodec.writePing(frame, 1);
        WireCodec.writePublish(frame, 1, "ab", VALUE);
        int[] range = new int[2];

        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onPing(long nonce) {
            }

            @Override
            public void onPublish(int correlationId, String topicPath, ByteBuf f, int valueIndex, int valueLength) {
                assertThat(f).isSameAs(frame);
                range[0] = valueIndex;
                range[1] = valueLength;
            }
        });

        // PING is 13 bytes; PUBLISH header 5, correlationId 4, path 2 + 2
        assertThat(range).containsExactly(13 + 5 + 4 + 2 + 2, VALUE.length);
    }

    // ---------------------------------------------------------------- forward compatibility

    /**
     * The samples whose body ends in fixed fields or a string; the others end in {@code rest value},
     * or, for {@code SUBSCRIBE}, in the options block (see {@link SubscribeOptionsWireTest}).
     */
    static Stream<Named<Sample>> samplesWithoutRestValue() {
        return samples().filter(s -> !s.getPayload().endsWithRest() && s.getPayload().type() != MessageType.SUBSCRIBE);
    }

    @ParameterizedTest
    @MethodSource("samplesWithoutRestValue")
    void unknownTrailingBodyBytesAreSkipped(Sample sample) throws ProtocolException {
        ByteBuf frame = encode(sample);
        // HELLO's own optional tail comes first: credentials kind 0 (anonymous), publisher id 0 (none),
        // connection 0 (none)
        byte[] appended = sample.type() == MessageType.HELLO
                ? new byte[]{0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xca, (byte) 0xfe, 0x00}
                : new byte[]{(byte) 0xca, (byte) 0xfe, 0x00};
        frame.writeBytes(appended); // fields a newer revision appended
        frame.setInt(1, frame.getInt(1) + appended.length);
        WireCodec.writePing(frame, 5);

        WireCodec.decode(frame, recorder.bothSides());

        assertThat(recorder.events).containsExactly(sample.event(), event("PING", 5));
    }

    @Test
    void helloCarriesPasswordOrTokenCredentialsAndNoneMeansAnonymous() throws ProtocolException {
        for (Credentials sent : List.of(Credentials.ANONYMOUS, Credentials.password("alice", "pässword"),
                Credentials.token("eyJhbGciOiJIUzI1NiJ9.e30.sig"))) {
            ByteBuf frame = buffers.allocate();
            WireCodec.writeHello(frame, WireCodec.VERSION, "app", sent);
            Credentials[] got = new Credentials[1];
            WireCodec.decode(frame, new MessageHandler() {
                @Override
                public void onHello(int version, String clientName, Credentials credentials) {
                    got[0] = credentials;
                }
            });
            assertThat(got[0]).isEqualTo(sent);
            assertThat(got[0].toString()).doesNotContain("pässword", "sig");
        }
    }

    @Test
    void helloCarriesThePublisherIdAfterTheCredentials() throws ProtocolException {
        for (Credentials sent : List.of(Credentials.ANONYMOUS, Credentials.password("alice", "pw"),
                Credentials.token("t.o.k"))) {
            for (long publisherId : new long[]{0, 1, -1, 0x0123456789ABCDEFL}) {
                ByteBuf frame = buffers.allocate();
                WireCodec.writeHello(frame, WireCodec.VERSION, "app", sent, publisherId);
                Object[] got = new Object[2];
                WireCodec.decode(frame, new MessageHandler() {
                    @Override
                    public void onHello(int version, String clientName, Credentials credentials, long id) {
                        got[0] = credentials;
                        got[1] = id;
                    }
                });
                assertThat(got).as("%s, publisher id %d", sent, publisherId).containsExactly(sent, publisherId);
            }
        }
    }

    @Test
    void helloCarriesTheConnectionNumberAfterThePublisherIdAndAnOlderReaderSkipsIt() throws ProtocolException {
        for (long connection : new long[]{0, 1, 2, 0xFFFFFFFFL}) {
            ByteBuf frame = buffers.allocate();
            WireCodec.writeHello(frame, WireCodec.VERSION, "app", Credentials.token("t"), 42, connection);
            assertThat(frame.readableBytes()).isEqualTo(WireCodec.helloBytes("app", Credentials.token("t"), 42, connection));
            Object[] got = new Object[3];
            WireCodec.decode(frame.duplicate(), new MessageHandler() {
                @Override
                public void onHello(int version, String clientName, Credentials credentials, long id, long number) {
                    got[0] = credentials;
                    got[1] = id;
                    got[2] = number;
                }
            });
            assertThat(got).as("connection %d", connection).containsExactly(Credentials.token("t"), 42L, connection);
            long[] publisherId = new long[1];
            WireCodec.decode(frame, new MessageHandler() {
                @Override
                public void onHello(int version, String clientName, Credentials credentials, long id) {
                    publisherId[0] = id;
                }
            });
            assertThat(publisherId[0]).as("a handler of the publisher id alone").isEqualTo(42);
        }
        assertThatThrownBy(() -> WireCodec.writeHello(buffers.allocate(), WireCodec.VERSION, "app",
                Credentials.ANONYMOUS, 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only with a publisher id");
    }

    @Test
    void helloWithATruncatedConnectionNumberIsMalformed() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeHello(frame, WireCodec.VERSION, "app", Credentials.ANONYMOUS, 7, 3);
        frame.writerIndex(frame.writerIndex() - 1);
        frame.setInt(1, frame.getInt(1) - 1);
        assertThatThrownBy(() -> WireCodec.decode(frame, new MessageHandler() {
        })).isInstanceOf(ProtocolException.class).hasMessageContaining("connection");
    }

    @Test
    void helloWithATruncatedPublisherIdIsMalformed() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeHello(frame, WireCodec.VERSION, "app", Credentials.ANONYMOUS, 7);
        frame.writerIndex(frame.writerIndex() - 1);
        frame.setInt(1, frame.getInt(1) - 1);
        assertThatThrownBy(() -> WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onHello(int version, String clientName, Credentials credentials, long id) {
            }
        })).isInstanceOf(ProtocolException.class).hasMessageContaining("publisherId");
    }

    @Test
    void helloWithAnUnknownCredentialsKindIsMalformed() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeHello(frame, WireCodec.VERSION, "app", Credentials.token("t"));
        frame.setByte(WireCodec.HEADER_BYTES + 2 + 2 + 3, 9);
        assertThatThrownBy(() -> WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onHello(int version, String clientName, Credentials credentials) {
            }
        })).isInstanceOf(ProtocolException.class).hasMessageContaining("unknown credentials kind 9");
    }

    @Test
    void trailingBytesOfRestMessagesArePartOfTheValue() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        withBuffer(VALUE, v -> WireCodec.writeUpdate(frame, 7, 1, 0, v, 0, 4));
        frame.writeByte(0xca);
        frame.setInt(1, frame.getInt(1) + 1);

        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("UPDATE", 7, 1, 0, "0001feffca"));
    }

    // ---------------------------------------------------------------- frame errors

    @Test
    void emptyFrameIsMalformed() {
        ProtocolException e = decodeFailure(buffers.allocate(), recorder.bothSides());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains("empty frame");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void headerShorterThanFiveBytesIsMalformed(int bytes) {
        ByteBuf frame = buffers.of(new byte[]{MessageType.PING, 0, 0, 0, 8}).writerIndex(bytes);

        ProtocolException e = decodeFailure(frame, recorder.bothSides());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains("truncated message header at offset 0", bytes + " bytes left");
    }

    @Test
    void messagesBeforeAMalformedOneAreHandled() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writePing(frame, 1);
        frame.writeBytes(new byte[]{MessageType.PING, 0});

        ProtocolException e = decodeFailure(frame, recorder.serverSide());

        assertThat(recorder.events).containsExactly(event("PING", 1));
        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains("header at offset 13");
    }

    @ParameterizedTest
    @ValueSource(longs = {9, 0xFFFF_FFFFL, 0x8000_0000L})
    void bodyLengthBeyondTheFrameIsMalformed(long bodyLength) {
        ByteBuf frame = message(MessageType.PING, bodyLength, new byte[8]);

        ProtocolException e = decodeFailure(frame, recorder.serverSide());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains("truncated PING message at offset 0", "body length " + bodyLength,
                "only 8 bytes left");
        assertThat(recorder.events).isEmpty();
    }

    // ---------------------------------------------------------------- truncated fixed fields

    /** A field of a layout; an optional one is appended, and a body that ends where it starts is whole. */
    private record Field(String name, int bytes, boolean optional) {
    }

    private record Layout(String typeName, byte type, Consumer<ByteBuf> writer, List<Field> fields) {
        int fixedBytes() {
            return fields.stream().mapToInt(Field::bytes).sum();
        }

        /** Whether a body cut to {@code cut} bytes ends right before an optional field: a whole message. */
        boolean endsBeforeAnOptionalField(int cut) {
            int start = 0;
            for (Field f : fields) {
                if (start == cut) {
                    return f.optional();
                }
                start += f.bytes();
            }
            return false;
        }

        /** The field that byte {@code offset} of the body belongs to. */
        String fieldAt(int offset) {
            int end = 0;
            for (Field f : fields) {
                end += f.bytes();
                if (offset < end) {
                    return f.name();
                }
            }
            throw new IllegalArgumentException("offset " + offset + " beyond the fixed fields of " + typeName);
        }
    }

    private static Field f(String name, int bytes) {
        return new Field(name, bytes, false);
    }

    private static Field optional(String name, int bytes) {
        return new Field(name, bytes, true);
    }

    /** The body layout of each type per docs/protocol.md, with short strings and empty values. */
    static List<Layout> layouts() {
        return List.of(
                new Layout("HELLO", MessageType.HELLO, out -> WireCodec.writeHello(out, 1, "abc"),
                        List.of(f("version", 2), f("clientName length", 2), f("clientName", 3))),
                new Layout("SUBSCRIBE", MessageType.SUBSCRIBE, out -> WireCodec.writeSubscribe(out, 1, "fx/#", Map.of()),
                        List.of(f("subscriptionId", 4), f("selector length", 2), f("selector", 4), f("resumeCount", 4))),
                new Layout("UNSUBSCRIBE", MessageType.UNSUBSCRIBE, out -> WireCodec.writeUnsubscribe(out, 1),
                        List.of(f("subscriptionId", 4))),
                new Layout("PUBLISH", MessageType.PUBLISH, out -> WireCodec.writePublish(out, 1, "a", new byte[0]),
                        List.of(f("correlationId", 4), f("topicPath length", 2), f("topicPath", 1))),
                new Layout("PING", MessageType.PING, out -> WireCodec.writePing(out, 1),
                        List.of(f("nonce", 8))),
                new Layout("WELCOME", MessageType.WELCOME, out -> WireCodec.writeWelcome(out, 1, "s1", 1, 1),
                        List.of(f("version", 2), f("sessionId length", 2), f("sessionId", 2), f("maxFrameBytes", 4),
                                f("idleTimeoutMs", 4))),
                new Layout("TOPIC", MessageType.TOPIC, out -> WireCodec.writeTopic(out, 1, "a"),
                        List.of(f("alias", 4), f("topicPath length", 2), f("topicPath", 1), optional("incarnation", 4))),
                new Layout("REMOVE", MessageType.REMOVE, out -> WireCodec.writeRemove(out, 1, "a/#"),
                        List.of(f("correlationId", 4), f("selector length", 2), f("selector", 3))),
                new Layout("TOPIC_REMOVED", MessageType.TOPIC_REMOVED, out -> WireCodec.writeTopicRemoved(out, 1, 1),
                        List.of(f("alias", 4), f("lastSequence", 8))),
                new Layout("REMOVED", MessageType.REMOVED, out -> WireCodec.writeRemoved(out, 1, 1),
                        List.of(f("correlationId", 4), f("removedTopics", 4))),
                new Layout("SNAPSHOT", MessageType.SNAPSHOT,
                        out -> withBuffer(new byte[0], v -> WireCodec.writeSnapshot(out, 1, 1, 1, 0, v, 0, 0)),
                        List.of(f("subscriptionId", 4), f("alias", 4), f("sequence", 8), f("flags", 1))),
                new Layout("UPDATE", MessageType.UPDATE,
                        out -> withBuffer(new byte[0], v -> WireCodec.writeUpdate(out, 1, 1, 0, v, 0, 0)),
                        List.of(f("alias", 4), f("sequence", 8), f("flags", 1))),
                new Layout("SNAPSHOT", MessageType.SNAPSHOT,
                        out -> withBuffer(new byte[0], v -> WireCodec.writeSnapshot(out, 1, 1, 1, 0, 1, v, 0, 0)),
                        List.of(f("subscriptionId", 4), f("alias", 4), f("sequence", 8), f("flags", 1), f("viewId", 4))),
                new Layout("UPDATE", MessageType.UPDATE,
                        out -> withBuffer(new byte[0], v -> WireCodec.writeUpdate(out, 1, 1, 0, 1, v, 0, 0)),
                        List.of(f("alias", 4), f("sequence", 8), f("flags", 1), f("viewId", 4))),
                new Layout("VIEW", MessageType.VIEW, out -> WireCodec.writeView(out, 1, 1),
                        List.of(f("subscriptionId", 4), f("viewId", 4))),
                new Layout("UNMATCHED", MessageType.UNMATCHED, out -> WireCodec.writeUnmatched(out, 1, 1, 1),
                        List.of(f("viewId", 4), f("alias", 4), f("sequence", 8))),
                new Layout("PUBLISH_ACK", MessageType.PUBLISH_ACK, out -> WireCodec.writePublishAck(out, 1, 1),
                        List.of(f("correlationId", 4), f("sequence", 8))),
                new Layout("SUBSCRIBED", MessageType.SUBSCRIBED, out -> WireCodec.writeSubscribed(out, 1, 1),
                        List.of(f("subscriptionId", 4), f("matchedTopics", 4))),
                new Layout("ERROR", MessageType.ERROR, out -> WireCodec.writeError(out, ErrorCode.INTERNAL_ERROR, 1, "no"),
                        List.of(f("code", 2), f("correlationId", 4), f("reason length", 2), f("reason", 2))),
                new Layout("PONG", MessageType.PONG, out -> WireCodec.writePong(out, 1),
                        List.of(f("nonce", 8))));
    }

    /** A layout's name: its type, and "viewed" for the one with a view id. */
    private static String layoutName(Layout l) {
        return l.typeName() + (l.fields().get(l.fields().size() - 1).name().equals("viewId") ? " viewed" : "");
    }

    static Stream<Named<Layout>> namedLayouts() {
        return layouts().stream().map(l -> Named.of(layoutName(l), l));
    }

    /**
     * Every (type, body length) pair that cuts a field short; not the length that ends right
     * before an optional field, which is a whole message of an earlier revision.
     */
    static Stream<Arguments> truncations() {
        return layouts().stream().flatMap(l -> IntStream.range(0, l.fixedBytes())
                .filter(cut -> !l.endsBeforeAnOptionalField(cut))
                .mapToObj(cut -> Arguments.of(Named.of(layoutName(l), l), cut)));
    }

    @ParameterizedTest
    @MethodSource("namedLayouts")
    void fieldLayoutsAddUpToTheEncodedBodies(Layout layout) {
        ByteBuf frame = buffers.allocate();
        layout.writer().accept(frame);

        assertThat(frame.getByte(0)).isEqualTo(layout.type());
        assertThat(frame.readableBytes() - WireCodec.HEADER_BYTES).isEqualTo(layout.fixedBytes());
    }

    @ParameterizedTest(name = "{0} body cut to {1} bytes")
    @MethodSource("truncations")
    void eachTruncatedFixedFieldIsMalformedAndNamed(Layout layout, int cut) {
        ByteBuf whole = buffers.allocate();
        layout.writer().accept(whole);
        byte[] body = ByteBufUtil.getBytes(whole, WireCodec.HEADER_BYTES, cut);
        ByteBuf frame = message(layout.type(), cut, body);

        ProtocolException e = decodeFailure(frame, recorder.bothSides());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains(layout.typeName() + " message", "field " + layout.fieldAt(cut) + " needs");
        assertThat(recorder.events).isEmpty();
    }

    // ---------------------------------------------------------------- strings

    static Stream<Arguments> invalidUtf8() {
        return Stream.of(
                Arguments.of(Named.of("lone continuation byte", hex("80"))),
                Arguments.of(Named.of("0xff", hex("ff"))),
                Arguments.of(Named.of("overlong '/'", hex("c0af"))),
                Arguments.of(Named.of("overlong NUL", hex("e08080"))),
                Arguments.of(Named.of("UTF-16 surrogate", hex("eda080"))),
                Arguments.of(Named.of("above U+10FFFF", hex("f4908080"))),
                Arguments.of(Named.of("truncated sequence", hex("e282"))),
                Arguments.of(Named.of("truncated sequence before ASCII", hex("e28241"))));
    }

    /** A PUBLISH whose topicPath is these bytes. */
    private ByteBuf publishWithPath(byte[] path) {
        ByteBuf body = Unpooled.buffer();
        try {
            body.writeInt(1).writeShort(path.length).writeBytes(path).writeBytes(VALUE);
            return message(MessageType.PUBLISH, body.readableBytes(), ByteBufUtil.getBytes(body));
        } finally {
            body.release();
        }
    }

    @ParameterizedTest
    @MethodSource("invalidUtf8")
    void invalidUtf8InAStringIsMalformed(byte[] bytes) {
        ProtocolException e = decodeFailure(publishWithPath(bytes), recorder.serverSide());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains("PUBLISH message", "field topicPath is not valid UTF-8");
        assertThat(recorder.events).isEmpty();
    }

    @Test
    void validMultiByteUtf8IsAccepted() throws ProtocolException {
        WireCodec.decode(publishWithPath("€𝄞é".getBytes(StandardCharsets.UTF_8)), recorder.serverSide());

        assertThat(recorder.events).containsExactly(event("PUBLISH", 1, "€𝄞é", "0001feff"));
    }

    static Stream<Arguments> stringFields() {
        // type, body with the bad string (ff) in the named field
        return Stream.of(
                Arguments.of("HELLO", MessageType.HELLO, "0001 0001ff", "clientName"),
                Arguments.of("SUBSCRIBE", MessageType.SUBSCRIBE, "00000001 0001ff 00000000", "selector"),
                Arguments.of("SUBSCRIBE", MessageType.SUBSCRIBE,
                        "00000001 000123 00000001 0001ff 0000000000000001", "resume[0].topicPath"),
                Arguments.of("PUBLISH", MessageType.PUBLISH, "00000001 0001ff", "topicPath"),
                Arguments.of("WELCOME", MessageType.WELCOME, "0001 0001ff 00000001 00000001", "sessionId"),
                Arguments.of("TOPIC", MessageType.TOPIC, "00000001 0001ff", "topicPath"),
                Arguments.of("REMOVE", MessageType.REMOVE, "00000001 0001ff", "selector"),
                Arguments.of("ERROR", MessageType.ERROR, "0001 00000000 0001ff", "reason"));
    }

    @ParameterizedTest(name = "{0}.{3}")
    @MethodSource("stringFields")
    void invalidUtf8IsNamedInEveryStringField(String typeName, byte type, String body, String field) {
        byte[] bytes = hex(body);

        ProtocolException e = decodeFailure(message(type, bytes.length, bytes), recorder.bothSides());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains(typeName + " message", "field " + field + " is not valid UTF-8");
    }

    @Test
    void writeStringAcceptsExactly65535Utf8Bytes() throws ProtocolException {
        String name = "€".repeat(21_845); // 3 bytes each: 65535
        ByteBuf frame = buffers.allocate();

        WireCodec.writeHello(frame, 1, name);
        WireCodec.decode(frame, recorder.serverSide());

        assertThat(frame.getUnsignedShort(WireCodec.HEADER_BYTES + 2)).isEqualTo(65_535);
        assertThat(recorder.events).containsExactly(event("HELLO", 1, name));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 7})
    void writeStringRefusesMoreThan65535Utf8BytesAndLeavesTheBufferAsItWas(int alreadyWritten) {
        ByteBuf out = buffers.allocate().writeZero(alreadyWritten);
        String s = "€".repeat(21_846); // 21846 chars but 65538 UTF-8 bytes

        assertThatThrownBy(() -> WireCodec.writeString(out, s))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65538 UTF-8 bytes")
                .hasMessageContaining("65535");
        assertThat(out.writerIndex()).isEqualTo(alreadyWritten);
    }

    @Test
    void writeStringRefusesAsciiOneByteOverTheLimit() {
        ByteBuf out = buffers.allocate();

        assertThatThrownBy(() -> WireCodec.writeString(out, "a".repeat(65_536)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65536 UTF-8 bytes");
    }

    @Test
    void writerRefusingAStringLeavesTheBufferAsItWas() {
        ByteBuf out = buffers.allocate();
        WireCodec.writePing(out, 1);
        int before = out.writerIndex();

        assertThatThrownBy(() -> WireCodec.writeHello(out, 1, "a".repeat(65_536)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(out.writerIndex()).as("a refused message must not leave bytes behind").isEqualTo(before);
    }

    @Test
    void writeErrorCutsVeryLongReasons() throws ProtocolException {
        String reason = "selector 'x' " + "y".repeat(100_000); // also over the 65535 a string holds
        ByteBuf frame = buffers.allocate();

        WireCodec.writeError(frame, ErrorCode.INVALID_SELECTOR, 3, reason);
        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("ERROR", 21, 3, reason.substring(0, 300) + "..."));
    }

    @Test
    void writeErrorKeepsReasonsUpTo1000Utf8Bytes() throws ProtocolException {
        String reason = "é".repeat(500); // 1000 bytes
        ByteBuf frame = buffers.allocate();

        WireCodec.writeError(frame, ErrorCode.INVALID_PATH, 3, reason);
        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("ERROR", 20, 3, reason));
    }

    @Test
    void writeErrorCutsMultiByteReasonsToValidUtf8() throws ProtocolException {
        String reason = "x" + "🚀".repeat(1_000); // the 300-char cut falls inside a surrogate pair
        ByteBuf frame = buffers.allocate();

        WireCodec.writeError(frame, ErrorCode.INVALID_PATH, 3, reason);
        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).hasSize(1);
        assertThat(recorder.events.get(0)).startsWith("ERROR(20, 3, x🚀").endsWith("...)");
    }

    @Test
    void writeErrorWritesANullReasonAsEmpty() throws ProtocolException {
        ByteBuf frame = buffers.allocate();

        WireCodec.writeError(frame, ErrorCode.SERVER_SHUTDOWN, 0, null);
        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("ERROR", 10, 0, ""));
    }

    @Test
    void errorCodeUnknownToThisVersionIsPassedThrough() throws ProtocolException {
        byte[] body = hex("0063 00000005 0002 6f6b"); // code 99, "ok"

        WireCodec.decode(message(MessageType.ERROR, body.length, body), recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("ERROR", 99, 5, "ok"));
        assertThat(ErrorCode.of(99)).isNull();
        assertThat(ErrorCode.of(-1)).isNull();
        assertThat(ErrorCode.of(20)).isEqualTo(ErrorCode.INVALID_PATH);
    }

    // ---------------------------------------------------------------- message types

    @ParameterizedTest
    @ValueSource(ints = {0x00, 0x08, 0x7f, 0x80, 0x8d, 0xff}) // 0x08 and 0x8d: the first after REMOVE and REMOVED
    void unknownTypeByteIsUnknownMessageType(int type) {
        ByteBuf frame = buffers.allocate();
        WireCodec.writePing(frame, 1);
        frame.writeByte(type).writeInt(2).writeShort(0);

        ProtocolException e = decodeFailure(frame, recorder.bothSides());

        assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
        assertThat(e.reason()).contains(String.format("unknown message type 0x%02x at offset 13", type));
        assertThat(recorder.events).containsExactly(event("PING", 1));
    }

    @ParameterizedTest
    @MethodSource("samples")
    void aTypeFromTheWrongDirectionIsRefusedByTheDefaultMethods(Sample sample) {
        ByteBuf frame = encode(sample);
        MessageHandler wrongSide = sample.clientToServer() ? recorder.clientSide() : recorder.serverSide();

        ProtocolException e = decodeFailure(frame, wrongSide);

        assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
        assertThat(e.reason()).contains("message type " + MessageType.name(sample.type()) + " is not accepted");
        assertThat(recorder.events).isEmpty();
    }

    @Test
    void serverStopsAtTheFirstServerToClientMessageOfABatch() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeHello(frame, 1, "c");
        withBuffer(VALUE, v -> WireCodec.writeUpdate(frame, 7, 1, 0, v, 0, 4));
        WireCodec.writePing(frame, 2);

        ProtocolException e = decodeFailure(frame, recorder.serverSide());

        assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
        assertThat(e.reason()).contains("UPDATE");
        assertThat(recorder.events).containsExactly(event("HELLO", 1, "c"));
    }

    // ---------------------------------------------------------------- SUBSCRIBE resume list

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 0x1999_999AL, 0xFFFF_FFFFL})
    void resumeCountTooLargeForTheBodyIsMalformed(long count) {
        // one 10-byte entry ("" and sequence 1) but a larger count
        ByteBuf body = Unpooled.buffer();
        try {
            body.writeInt(1).writeShort(1).writeByte('#').writeInt((int) count).writeShort(0).writeLong(1);
            if (count == 1) {
                body.writerIndex(body.writerIndex() - 1); // 9 bytes left for one entry
            }
            ByteBuf frame = message(MessageType.SUBSCRIBE, body.readableBytes(), ByteBufUtil.getBytes(body));

            ProtocolException e = decodeFailure(frame, recorder.serverSide());

            assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
            assertThat(e.reason()).contains("SUBSCRIBE message", "resumeCount " + count + " does not fit");
            assertThat(recorder.events).isEmpty();
        } finally {
            body.release();
        }
    }

    @Test
    void resumeEntryLongerThanItsMinimumIsCheckedFieldByField() {
        // count 2 with 21 bytes left passes the count check, but the first path is 9 bytes long
        byte[] body = hex("00000001 0001 23 00000002 0009 66782f455552555344 0000000000000001 0000");

        ProtocolException e = decodeFailure(message(MessageType.SUBSCRIBE, body.length, body), recorder.serverSide());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains("SUBSCRIBE message", "field resume[1].lastSequence needs 8 bytes, 0 left");
    }

    // ---------------------------------------------------------------- u64 range

    static Stream<Arguments> sequencesAbove2To63() {
        return Stream.of(
                Arguments.of("SNAPSHOT", "sequence", (Consumer<ByteBuf>) out ->
                        withBuffer(VALUE, v -> WireCodec.writeSnapshot(out, 1, 1, -1L, 0, v, 0, 4))),
                Arguments.of("UPDATE", "sequence", (Consumer<ByteBuf>) out ->
                        withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 1, -1L, 0, v, 0, 4))),
                Arguments.of("PUBLISH_ACK", "sequence", (Consumer<ByteBuf>) out ->
                        WireCodec.writePublishAck(out, 1, -1L)),
                Arguments.of("SUBSCRIBE", "resume[0].lastSequence", (Consumer<ByteBuf>) out ->
                        WireCodec.writeSubscribe(out, 1, "#", Map.of("a", -1L))),
                Arguments.of("UNMATCHED", "sequence", (Consumer<ByteBuf>) out ->
                        WireCodec.writeUnmatched(out, 1, 1, -1L)),
                Arguments.of("TOPIC_REMOVED", "lastSequence", (Consumer<ByteBuf>) out ->
                        WireCodec.writeTopicRemoved(out, 1, -1L)),
                Arguments.of("UPDATE", "sequence", (Consumer<ByteBuf>) out ->
                        withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 1, -1L, 0, 1, v, 0, 4))));
    }

    @ParameterizedTest(name = "{0}.{1}")
    @MethodSource("sequencesAbove2To63")
    void u64SequenceAbove2To63Minus1IsMalformed(String typeName, String field, Consumer<ByteBuf> writer) {
        ByteBuf frame = buffers.allocate();
        writer.accept(frame);

        ProtocolException e = decodeFailure(frame, recorder.bothSides());

        assertThat(e.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(e.reason()).contains(typeName + " message",
                "field " + field + " is 18446744073709551615, above 2^63-1");
    }

    @Test
    void u64Of2To63IsTheFirstValueRefused() {
        ByteBuf frame = buffers.allocate();
        WireCodec.writePublishAck(frame, 1, Long.MIN_VALUE);

        ProtocolException e = decodeFailure(frame, recorder.clientSide());

        assertThat(e.reason()).contains("field sequence is 9223372036854775808, above 2^63-1");
    }

    @Test
    void pingAndPongNoncesUseAll64Bits() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        WireCodec.writePing(frame, -1L);
        WireCodec.writePong(frame, Long.MIN_VALUE);

        WireCodec.decode(frame, recorder.bothSides());

        assertThat(recorder.events).containsExactly(event("PING", -1L), event("PONG", Long.MIN_VALUE));
    }

    // ---------------------------------------------------------------- views

    @Test
    void overheadConstantsOfViewedMessagesEqualTheEncodedSizeOfAnEmptyValue() {
        ByteBuf update = buffers.allocate();
        ByteBuf snapshot = buffers.allocate();
        withBuffer(new byte[0], v -> {
            WireCodec.writeUpdate(update, 1, 1, 0, 9, v, 0, 0);
            WireCodec.writeSnapshot(snapshot, 1, 1, 1, 0, 9, v, 0, 0);
        });

        assertThat(update.readableBytes()).isEqualTo(WireCodec.VIEWED_UPDATE_OVERHEAD_BYTES)
                .isEqualTo(WireCodec.UPDATE_OVERHEAD_BYTES + WireCodec.VIEW_ID_BYTES);
        assertThat(snapshot.readableBytes()).isEqualTo(WireCodec.VIEWED_SNAPSHOT_OVERHEAD_BYTES)
                .isEqualTo(WireCodec.SNAPSHOT_OVERHEAD_BYTES + WireCodec.VIEW_ID_BYTES);
    }

    @Test
    void theViewIdComesAfterTheFlagsAndTheValueAfterIt() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        withBuffer(VALUE, v -> WireCodec.writeUpdate(frame, 7, 1, UpdateFlags.DELTA, 0x01020304, v, 0, 4));
        int[] got = new int[3];

        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf f, int valueIndex,
                                 int valueLength) {
                got[0] = flags;
                got[1] = viewId;
                got[2] = valueIndex;
            }
        });

        assertThat(frame.getByte(WireCodec.HEADER_BYTES + 4 + 8)).isEqualTo((byte) 0x12); // DELTA | VIEWED
        assertThat(frame.getInt(WireCodec.HEADER_BYTES + 4 + 8 + 1)).isEqualTo(0x01020304);
        assertThat(got).containsExactly(UpdateFlags.DELTA | UpdateFlags.VIEWED, 0x01020304,
                WireCodec.VIEWED_UPDATE_OVERHEAD_BYTES);
    }

    @Test
    void withoutTheFlagTheViewAwareMethodsGetViewIdZeroAndTheValueRightAfterTheFlags() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        withBuffer(VALUE, v -> {
            WireCodec.writeUpdate(frame, 7, 1, 0, v, 0, 4);
            WireCodec.writeSnapshot(frame, 2, 7, 1, 0, v, 0, 4);
        });
        List<String> got = new ArrayList<>();

        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf f, int valueIndex,
                                 int valueLength) {
                got.add("UPDATE view " + viewId + " value " + ByteBufUtil.hexDump(f, valueIndex, valueLength));
            }

            @Override
            public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf f,
                                   int valueIndex, int valueLength) {
                got.add("SNAPSHOT view " + viewId + " value " + ByteBufUtil.hexDump(f, valueIndex, valueLength));
            }
        });

        assertThat(got).containsExactly("UPDATE view 0 value 0001feff", "SNAPSHOT view 0 value 0001feff");
    }

    /** A client that takes plain updates and snapshots only, as every client before issue 16. */
    private MessageHandler plainClient() {
        return new MessageHandler() {
            @Override
            public void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength) {
                recorder.events.add(event("UPDATE", alias, sequence, flags));
            }

            @Override
            public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame,
                                   int valueIndex, int valueLength) {
                recorder.events.add(event("SNAPSHOT", subscriptionId, alias, sequence, flags));
            }
        };
    }

    @Test
    void aHandlerWithoutViewsGetsPlainMessagesThroughTheDefaults() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        withBuffer(VALUE, v -> {
            WireCodec.writeSnapshot(frame, 2, 7, 1, UpdateFlags.GAP, v, 0, 4);
            WireCodec.writeUpdate(frame, 7, 2, UpdateFlags.CONFLATED, v, 0, 4);
        });

        WireCodec.decode(frame, plainClient());

        assertThat(recorder.events).containsExactly(event("SNAPSHOT", 2, 7, 1, UpdateFlags.GAP),
                event("UPDATE", 7, 2, UpdateFlags.CONFLATED));
    }

    static Stream<Arguments> viewedMessages() {
        return Stream.of(
                Arguments.of("UPDATE", (Consumer<ByteBuf>) out ->
                        withBuffer(VALUE, v -> WireCodec.writeUpdate(out, 7, 1, 0, 9, v, 0, 4))),
                Arguments.of("SNAPSHOT", (Consumer<ByteBuf>) out ->
                        withBuffer(VALUE, v -> WireCodec.writeSnapshot(out, 2, 7, 1, 0, 9, v, 0, 4))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("viewedMessages")
    void aHandlerWithoutViewsRefusesAMessageThroughAView(String typeName, Consumer<ByteBuf> writer) {
        ByteBuf frame = buffers.allocate();
        writer.accept(frame);

        ProtocolException e = decodeFailure(frame, plainClient());

        assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
        assertThat(e.reason()).isEqualTo("message type " + typeName
                + " is not accepted through a view (flag VIEWED, view 9) by this receiver, which asked for none");
        assertThat(recorder.events).isEmpty();
    }

    @Test
    void viewAndUnmatchedAreRefusedByADefaultHandler() {
        for (Consumer<ByteBuf> writer : List.<Consumer<ByteBuf>>of(out -> WireCodec.writeView(out, 1, 2),
                out -> WireCodec.writeUnmatched(out, 2, 3, 4))) {
            ByteBuf frame = buffers.allocate();
            writer.accept(frame);

            ProtocolException e = decodeFailure(frame, plainClient());

            assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
            assertThat(e.reason()).matches("message type (VIEW|UNMATCHED) is not accepted in this direction");
        }
    }

    @Test
    void theWritersWithoutAViewIdRefuseTheViewedFlagAndWriteNothing() {
        ByteBuf out = buffers.allocate();
        WireCodec.writePing(out, 1);
        int before = out.writerIndex();

        withBuffer(VALUE, v -> {
            assertThatThrownBy(() -> WireCodec.writeUpdate(out, 1, 1, UpdateFlags.VIEWED, v, 0, 4))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("VIEWED");
            assertThatThrownBy(() -> WireCodec.writeSnapshot(out, 1, 1, 1, 0xFF, v, 0, 4))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flags 0xff include VIEWED");
        });
        assertThat(out.writerIndex()).isEqualTo(before);
    }

    // ---------------------------------------------------------------- removing topics

    @Test
    void aTopicWithoutAnIncarnationAsEarlierServersSendItDecodesAsIncarnationZero() throws ProtocolException {
        // the old topic.hex: alias 256, "fx/€", and the body ends there
        ByteBuf frame = message(MessageType.TOPIC, 12, hex("00000100 0006 66782fe282ac"));
        WireCodec.writeTopic(frame, 256, "fx/€", GoldenFramesTest.INCARNATION);

        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("TOPIC", 256, "fx/€", 0),
                event("TOPIC", 256, "fx/€", 1764384256));
    }

    @Test
    void theTopicWriterWithoutAnIncarnationWritesIncarnationZero() {
        ByteBuf without = buffers.allocate();
        WireCodec.writeTopic(without, 7, "fx/EURUSD");
        ByteBuf zero = buffers.allocate();
        WireCodec.writeTopic(zero, 7, "fx/EURUSD", 0);

        assertThat(ByteBufUtil.hexDump(without)).isEqualTo(ByteBufUtil.hexDump(zero))
                .endsWith("0009" + "66782f455552555344" + "00000000");
        assertThat(without.readableBytes()).isEqualTo(WireCodec.topicBytes("fx/EURUSD"));
    }

    @Test
    void theIncarnationComesAfterThePathAndFieldsAppendedAfterItAreSkipped() throws ProtocolException {
        byte[] body = hex("00000007 0001 61 80000001 cafe");
        ByteBuf frame = message(MessageType.TOPIC, body.length, body);
        WireCodec.writeTopicRemoved(frame, 7, 3);

        WireCodec.decode(frame, recorder.clientSide());

        assertThat(recorder.events).containsExactly(event("TOPIC", 7, "a", 2147483649L), event("TOPIC_REMOVED", 7, 3));
    }

    @Test
    void aHandlerThatKnowsNoIncarnationsGetsTheTopicThroughTheDefault() throws ProtocolException {
        ByteBuf frame = buffers.allocate();
        WireCodec.writeTopic(frame, 7, "fx/EURUSD", GoldenFramesTest.INCARNATION);
        WireCodec.writeTopic(frame, 8, "fx/GBPUSD");
        List<String> got = new ArrayList<>();

        WireCodec.decode(frame, new MessageHandler() {
            @Override
            public void onTopic(int alias, String topicPath) {
                got.add(alias + " " + topicPath);
            }
        });

        assertThat(got).containsExactly("7 fx/EURUSD", "8 fx/GBPUSD");
    }

    @Test
    void aReceiverOfAnEarlierRevisionRefusesTheRemovalMessagesThroughItsDefaults() {
        // as any type a receiver does not take: a client built before removals, which overrides
        // neither onTopicRemoved nor onRemoved, fails its session on the first one it gets
        List<Consumer<ByteBuf>> toClients = List.of(out -> WireCodec.writeTopicRemoved(out, 7, 43),
                out -> WireCodec.writeRemoved(out, 6, 3));
        for (Consumer<ByteBuf> writer : toClients) {
            ByteBuf frame = buffers.allocate();
            writer.accept(frame);

            ProtocolException e = decodeFailure(frame, plainClient());

            assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
            assertThat(e.reason()).matches("message type (TOPIC_REMOVED|REMOVED) is not accepted in this direction");
        }
        ByteBuf remove = buffers.allocate();
        WireCodec.writeRemove(remove, 6, "fx/#");

        ProtocolException e = decodeFailure(remove, new MessageHandler() {
        });

        assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_MESSAGE_TYPE);
        assertThat(e.reason()).isEqualTo("message type REMOVE is not accepted in this direction");
    }

    @Test
    void removeRefusesASelectorOfMoreThan65535BytesAndWritesNothing() {
        ByteBuf out = buffers.allocate();
        WireCodec.writePing(out, 1);
        int before = out.writerIndex();

        assertThatThrownBy(() -> WireCodec.writeRemove(out, 1, "a".repeat(65_536)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(out.writerIndex()).isEqualTo(before);
    }
}
