package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every size {@link WireCodec} gives is exactly what its writer writes: callers size buffers by it. */
class MessageSizesTest {
    private static final String[] PATHS = {"", "a", "prices/eur-usd", "températures/zürich/今日", "x".repeat(5000)};

    private static int written(Consumer<ByteBuf> writer) {
        ByteBuf out = Unpooled.buffer();
        try {
            writer.accept(out);
            return out.readableBytes();
        } finally {
            out.release();
        }
    }

    @Test
    void fixedSizeMessagesAreAsLongAsTheirConstants() {
        assertEquals(WireCodec.PING_BYTES, written(out -> WireCodec.writePing(out, -1L)));
        assertEquals(WireCodec.PONG_BYTES, written(out -> WireCodec.writePong(out, 7)));
        assertEquals(WireCodec.UNSUBSCRIBE_BYTES, written(out -> WireCodec.writeUnsubscribe(out, 3)));
        assertEquals(WireCodec.PUBLISH_ACK_BYTES, written(out -> WireCodec.writePublishAck(out, 9, Long.MAX_VALUE)));
        assertEquals(WireCodec.SUBSCRIBED_BYTES, written(out -> WireCodec.writeSubscribed(out, 1, 100)));
        assertEquals(WireCodec.VIEW_BYTES, written(out -> WireCodec.writeView(out, 1, 2)));
        assertEquals(WireCodec.UNMATCHED_BYTES, written(out -> WireCodec.writeUnmatched(out, 1, 2, Long.MAX_VALUE)));
        assertEquals(WireCodec.TOPIC_REMOVED_BYTES, written(out -> WireCodec.writeTopicRemoved(out, 1, Long.MAX_VALUE)));
        assertEquals(WireCodec.REMOVED_BYTES, written(out -> WireCodec.writeRemoved(out, 1, 0)));
    }

    @Test
    void topicSizeCountsThePathInUtf8BytesAndTheIncarnation() {
        for (String path : PATHS) {
            assertEquals(WireCodec.topicBytes(path), written(out -> WireCodec.writeTopic(out, 1, path)), path);
            assertEquals(WireCodec.topicBytes(path), written(out -> WireCodec.writeTopic(out, 1, path, -1)), path);
        }
    }

    @Test
    void subscribeSizeCountsAU32PerIncarnation() {
        Map<String, Long> resume = new LinkedHashMap<>();
        int withoutOptions = WireCodec.subscribeBytes(1);
        for (int positions : new int[] {1, 2, WireCodec.MAX_RESUME_INCARNATIONS}) {
            while (resume.size() < positions) {
                String path = "t" + resume.size();
                resume.put(path, 1L);
                withoutOptions += WireCodec.resumeEntryBytes(ByteBufUtil.utf8Bytes(path));
            }
            SubscribeOptions options = SubscribeOptions.builder().incarnations(new int[positions]).build();
            int expected = withoutOptions + 1 + 3 + 4 * positions; // optionCount, kind and length, the u32s
            assertEquals(expected - withoutOptions, WireCodec.subscribeOptionsBytes(options), positions + " positions");
            assertEquals(expected, written(out -> WireCodec.writeSubscribe(out, 1, "#", resume, options)),
                    positions + " positions");
        }
    }

    @Test
    void welcomeSizeCountsTheSessionId() {
        for (String id : PATHS) {
            assertEquals(WireCodec.welcomeBytes(id), written(out -> WireCodec.writeWelcome(out, 1, id, 65536, 30000)));
        }
    }

    @Test
    void updateAndSnapshotSizesAddTheirOverheadToTheValue() {
        ByteBuf value = Unpooled.wrappedBuffer(new byte[300]);
        for (int length : new int[] {0, 1, 125, 300}) {
            assertEquals(WireCodec.updateBytes(length),
                    written(out -> WireCodec.writeUpdate(out, 1, 2, 0, value, 0, length)));
            assertEquals(WireCodec.snapshotBytes(length),
                    written(out -> WireCodec.writeSnapshot(out, 1, 2, 3, 0, value, 0, length)));
            assertEquals(WireCodec.viewedUpdateBytes(length),
                    written(out -> WireCodec.writeUpdate(out, 1, 2, 0, 9, value, 0, length)));
            assertEquals(WireCodec.viewedSnapshotBytes(length),
                    written(out -> WireCodec.writeSnapshot(out, 1, 2, 3, 0, 9, value, 0, length)));
        }
    }

    @Test
    void errorSizeFollowsTheReasonAsCutByTheWriter() {
        String[] reasons = {null, "", "bad", "ü".repeat(499), "ü".repeat(501), "今".repeat(2000), "r".repeat(70_000)};
        for (String reason : reasons) {
            assertEquals(WireCodec.errorBytes(reason),
                    written(out -> WireCodec.writeError(out, ErrorCode.MALFORMED_FRAME, 1, reason)),
                    reason == null ? "null" : reason.length() + " chars");
        }
    }

    @Test
    void publishSizeCountsPathAndValue() {
        byte[] value = new byte[77];
        for (String path : PATHS) {
            int expected = WireCodec.publishBytes(ByteBufUtil.utf8Bytes(path), value.length);
            assertEquals(expected, written(out -> WireCodec.writePublish(out, 1, path, value)), path);
            assertEquals(expected, written(out -> WireCodec.writeRepublish(out, 1, path, value)), path);
        }
    }

    @Test
    void subscribeSizeCountsSelectorAndEachResumePosition() {
        String selector = "prices/+/ü";
        int selectorBytes = ByteBufUtil.utf8Bytes(selector);
        assertEquals(WireCodec.subscribeBytes(selectorBytes),
                written(out -> WireCodec.writeSubscribe(out, 1, selector, Map.of())));
        Map<String, Long> resume = Map.of("prices/a/ü", 5L, "prices/今/ü", 9L);
        int expected = WireCodec.subscribeBytes(selectorBytes);
        for (String path : resume.keySet()) {
            expected += WireCodec.resumeEntryBytes(ByteBufUtil.utf8Bytes(path));
        }
        assertEquals(expected, written(out -> WireCodec.writeSubscribe(out, 1, selector, resume)));
        assertEquals(expected, written(out -> WireCodec.writeSubscribe(out, 1, selector, resume, SubscribeOptions.NONE)));
    }

    @Test
    void subscribeSizeAddsTheOptionsBlockComputedByTheCodec() {
        String selector = "prices/+/ü";
        int selectorBytes = ByteBufUtil.utf8Bytes(selector);
        Map<String, Long> resume = Map.of("prices/a/ü", 5L);
        int withoutOptions = WireCodec.subscribeBytes(selectorBytes) + WireCodec.resumeEntryBytes(
                ByteBufUtil.utf8Bytes("prices/a/ü"));
        assertEquals(0, WireCodec.subscribeOptionsBytes(SubscribeOptions.NONE));
        for (SubscribeOptions options : SubscribeOptionsWireTest.everyCombination()) {
            assertEquals(withoutOptions + WireCodec.subscribeOptionsBytes(options),
                    written(out -> WireCodec.writeSubscribe(out, 1, selector, resume, options)), options.toString());
            assertEquals(WireCodec.subscribeBytes(selectorBytes) + WireCodec.subscribeOptionsBytes(options),
                    written(out -> WireCodec.writeSubscribe(out, 1, selector, Map.of(), options)), options.toString());
        }
    }

    @Test
    void helloSizeFollowsEachFormOfTheMessage() {
        Credentials[] forms = {Credentials.ANONYMOUS, Credentials.password("ålice", "sécret"), Credentials.token("t0ken")};
        for (Credentials credentials : forms) {
            for (long publisherId : new long[] {0, -5}) {
                assertEquals(WireCodec.helloBytes("client ü", credentials, publisherId),
                        written(out -> WireCodec.writeHello(out, WireCodec.VERSION, "client ü", credentials, publisherId)),
                        credentials.kind() + "/" + publisherId);
            }
        }
    }
}
