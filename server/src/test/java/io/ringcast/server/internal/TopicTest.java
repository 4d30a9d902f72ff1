package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import static io.ringcast.server.internal.TopicFixtures.CACHED;
import static io.ringcast.server.internal.TopicFixtures.UNCACHED;
import static io.ringcast.server.internal.TopicFixtures.historyValue;
import static io.ringcast.server.internal.TopicFixtures.lastValue;
import static io.ringcast.server.internal.TopicFixtures.publish;
import static io.ringcast.server.internal.TopicFixtures.publishDelta;
import static io.ringcast.server.internal.TopicFixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Topic}'s history ring: which updates it keeps, what a resume can replay, where the newest
 * value is read from, and that every frame and value copy it took over is released exactly once.
 * A reference count of 1 below means: only the test's own reference is left, the topic released its.
 */
class TopicTest {
    private final List<ByteBuf> watched = new ArrayList<>();
    private final Topic topic = TopicFixtures.topic(7, "fx/EURUSD", 3);

    /** Keeps a reference of the test's own to a history chunk, so the topic's release can be seen in the count. */
    private ByteBuf watch(ByteBuf chunk) {
        watched.add(chunk.retain());
        return chunk;
    }

    @AfterEach
    void releaseEverything() {
        topic.releaseHistory();
        watched.forEach(ByteBuf::release);
    }

    @Test
    void largeValuesKeepFewerUpdatesWithinHistoryMaxBytesAndTheNewestAlways() {
        Topic large = new Topic(8, "big/t", new String[] {"big", "t"}, SubscriberSet.empty(1), 8, 100_000, CACHED);
        try {
            List<ByteBuf> chunks = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                chunks.add(watch(publish(large, Character.toString('a' + i).repeat(30_000))));
            }
            assertThat(large.historySize()).as("30-kB updates within 100 kB").isEqualTo(3);
            assertThat(large.historyBytes()).isBetween(90_000L, 100_000L);
            assertThat(large.canReplayAfter(3)).isTrue();
            assertThat(large.canReplayAfter(2)).as("update 3 was let go").isFalse();
            assertThat(chunks).as("a chunk each: 30 kB is more than an eighth of the history").doesNotHaveDuplicates();
            assertThat(chunks.subList(0, 3)).as("the chunks of the updates let go are released")
                    .allSatisfy(c -> assertThat(c.refCnt()).isEqualTo(1));
            assertThat(chunks.subList(3, 5)).allSatisfy(c -> assertThat(c.refCnt()).isEqualTo(2));
            assertThat(chunks.get(5).refCnt()).as("its update's and the topic's, still appending to it").isEqualTo(3);

            ByteBuf huge = watch(publish(large, "z".repeat(150_000)));
            assertThat(large.historySize()).as("a value larger than the bound is still the newest").isEqualTo(1);
            assertThat(lastValue(large)).startsWith("zzz");
            assertThat(chunks.subList(3, 6)).allSatisfy(c -> assertThat(c.refCnt()).isEqualTo(1));
            assertThat(huge.refCnt()).isEqualTo(3);
        } finally {
            large.releaseHistory();
        }
        assertThat(large.historyBytes()).isZero();
    }

    @Test
    void aLongHistoryHoldsItsUpdatesInFewChunksEachReleasedWithItsLastUpdate() {
        Topic longer = TopicFixtures.topic(9, "long/t", 4096);
        try {
            Set<ByteBuf> chunks = Collections.newSetFromMap(new IdentityHashMap<>());
            for (int i = 1; i <= 3 * 4096; i++) {
                ByteBuf chunk = publish(longer, "%0200d".formatted(i));
                if (chunks.add(chunk)) {
                    watch(chunk);
                }
            }
            long held = longer.historyBytes();
            assertThat(held).isEqualTo(4096L * (WireCodec.UPDATE_OVERHEAD_BYTES + 200));
            long live = chunks.stream().filter(c -> c.refCnt() > 1).count();
            assertThat(live).as("chunks of up to 64 KiB hold the last 4,096 updates of 200 B").isBetween(14L, 20L);
            assertThat(chunks.stream().filter(c -> c.refCnt() > 1).mapToLong(ByteBuf::capacity).sum())
                    .as("the chunks' bytes: what the history holds, and at most two chunks' worth more")
                    .isBetween(held, held + 2L * Topic.MAX_CHUNK_BYTES);
            assertThat(chunks.size()).as("a chunk for each of the first few updates, then larger ones").isLessThan(100);
            assertThat(historyValue(longer, 3 * 4096)).isEqualTo("%0200d".formatted(3 * 4096));
            assertThat(historyValue(longer, 2 * 4096 + 1)).isEqualTo("%0200d".formatted(2 * 4096 + 1));
        } finally {
            longer.releaseHistory();
        }
    }

    @Test
    void newTopicHasNoValueAndNothingToReplay() {
        assertThat(topic.hasValue()).isFalse();
        assertThat(topic.historySize()).isZero();
        assertThat(topic.canReplayAfter(0)).isFalse();
    }

    @Test
    void historyKeepsEachUpdateMessageAlone() {
        ByteBuf chunk = publish(topic, "1.0841"); // its frame holds the TOPIC message in front
        publish(topic, "1.0842");

        int offset = topic.historyUpdateOffset(1);
        assertThat(offset).as("no frame header, no TOPIC message").isZero();
        assertThat(chunk.getByte(offset)).isEqualTo(MessageType.UPDATE);
        assertThat(chunk.getInt(offset + WireCodec.HEADER_BYTES)).as("alias").isEqualTo(7);
        assertThat(chunk.getLong(offset + WireCodec.HEADER_BYTES + 4)).as("sequence").isEqualTo(1);
        assertThat(topic.historyUpdateLength(1)).isEqualTo(WireCodec.UPDATE_OVERHEAD_BYTES + 6);
        assertThat(historyValue(topic, 1)).isEqualTo("1.0841");
        assertThat(historyValue(topic, 2)).isEqualTo("1.0842");
        assertThat(topic.historyBytes()).isEqualTo(2L * (WireCodec.UPDATE_OVERHEAD_BYTES + 6));
    }

    @Test
    void newestValueIsReadWhereTheHistoryKeepsItsMessage() {
        publish(topic, "a");
        ByteBuf newest = publish(topic, "bb");

        assertThat(topic.hasValue()).isTrue();
        assertThat(topic.lastValueBuffer()).isSameAs(newest);
        assertThat(topic.lastValueIndex()).isEqualTo(topic.historyUpdateOffset(2) + WireCodec.UPDATE_OVERHEAD_BYTES);
        assertThat(topic.lastValueLength()).isEqualTo(2);
        assertThat(lastValue(topic)).isEqualTo("bb");
    }

    @Test
    void newestValueIsReadFromItsCopyAfterItsMessageWhenTheMessageHoldsADelta() {
        publish(topic, "{\"bid\":1.0841}");
        publishDelta(topic, new byte[]{1, 2, 3}, "{\"bid\":1.0842}");

        assertThat(lastValue(topic)).isEqualTo("{\"bid\":1.0842}");
        assertThat(topic.lastValueIndex()).as("right after the delta's message")
                .isEqualTo(topic.historyUpdateOffset(2) + topic.historyUpdateLength(2));
        assertThat(historyValue(topic, 2)).isEqualTo("\u0001\u0002\u0003");
        assertThat(topic.historyFrame(2).getByte(topic.historyUpdateOffset(2) + WireCodec.UPDATE_OVERHEAD_BYTES - 1))
                .as("the message's flags").isEqualTo((byte) UpdateFlags.DELTA);
        assertThat(topic.historyBytes()).as("the delta's message and the full value")
                .isEqualTo(WireCodec.UPDATE_OVERHEAD_BYTES + 14 + WireCodec.UPDATE_OVERHEAD_BYTES + 3 + 14);

        publish(topic, "{\"bid\":1.0843}");
        assertThat(lastValue(topic)).isEqualTo("{\"bid\":1.0843}");
        assertThat(historyFullValue(topic, 2)).as("the copy stays with its update, for a rewind")
                .isEqualTo("{\"bid\":1.0842}");
    }

    @Test
    void eachDeltaKeepsItsFullValueUntilItsUpdateFallsOutOfTheHistory() {
        publish(topic, "v1");
        publishDelta(topic, utf8("d2"), "v2");
        publishDelta(topic, utf8("d3"), "v3");
        long bytes = topic.historyBytes();

        assertThat(lastValue(topic)).isEqualTo("v3");
        assertThat(historyFullValue(topic, 2)).isEqualTo("v2");
        assertThat(historyFullValue(topic, 3)).isEqualTo("v3");

        publish(topic, "v4"); // history: 2, 3, 4
        assertThat(topic.historyBytes()).as("update 1 fell out, 4 came: the same size, v1 as v4")
                .isEqualTo(bytes);
        publish(topic, "v5"); // history: 3, 4, 5
        assertThat(topic.historyBytes()).as("update 2 fell out, and the copy of v2 with it").isEqualTo(bytes - 2);
        assertThat(historyFullValue(topic, 3)).isEqualTo("v3");
    }

    @Test
    void historyKeepsTheNewestUpdates() {
        for (int i = 1; i <= 5; i++) {
            publish(topic, "v" + i);
        }

        assertThat(topic.historySize()).isEqualTo(3);
        assertThat(topic.historyBytes()).isEqualTo(3L * (WireCodec.UPDATE_OVERHEAD_BYTES + 2));
        assertThat(historyValue(topic, 3)).isEqualTo("v3");
        assertThat(historyValue(topic, 5)).isEqualTo("v5");
        assertThat(lastValue(topic)).isEqualTo("v5");
    }

    @Test
    void resumeCanReplayOnlyWhenTheHistoryReachesBackToTheUpdateAfterTheLastSeen() {
        for (int i = 1; i <= 5; i++) {
            publish(topic, "v" + i); // history: 3, 4, 5
        }

        assertThat(topic.canReplayAfter(2)).as("needs 3..5, all kept").isTrue();
        assertThat(topic.canReplayAfter(4)).as("needs 5").isTrue();
        assertThat(topic.canReplayAfter(1)).as("needs 2, evicted").isFalse();
        assertThat(topic.canReplayAfter(0)).isFalse();
        assertThat(topic.canReplayAfter(5)).as("up to date: nothing to replay").isFalse();
        assertThat(topic.canReplayAfter(9)).as("seen more than exists (a restarted server)").isFalse();
    }

    @Test
    void historyNotYetFullReplaysFromTheFirstUpdate() {
        publish(topic, "v1");
        publish(topic, "v2");

        assertThat(topic.canReplayAfter(0)).isTrue();
        assertThat(topic.canReplayAfter(1)).isTrue();
        assertThat(topic.canReplayAfter(2)).isFalse();
    }

    @Test
    void releaseHistoryReleasesEveryChunkAndCanBeCalledTwice() {
        ByteBuf c1 = watch(publish(topic, "v1"));
        ByteBuf c2 = watch(publish(topic, "v2"));
        ByteBuf c3 = watch(publishDelta(topic, utf8("d3"), "v3"));
        assertThat(List.of(c1, c2, c3)).extracting(ByteBuf::refCnt)
                .as("the test's, each update's, and the topic's of the last").containsExactly(2, 2, 3);

        topic.releaseHistory();
        topic.releaseHistory();

        assertThat(List.of(c1, c2, c3)).extracting(ByteBuf::refCnt).containsOnly(1);
        assertThat(topic.historyBytes()).isZero();
        assertThat(topic.hasValue()).isFalse();
        assertThat(topic.historySize()).isZero();
        assertThat(topic.canReplayAfter(2)).isFalse();
        assertThat(topic.sequence).as("the sequence stays").isEqualTo(3);
    }

    @Test
    void historyStartsAgainAfterARelease() {
        publish(topic, "v1");
        publish(topic, "v2");
        topic.releaseHistory();

        publish(topic, "v3");

        assertThat(topic.historySize()).isEqualTo(1);
        assertThat(lastValue(topic)).isEqualTo("v3");
        assertThat(topic.canReplayAfter(2)).isTrue();
        assertThat(topic.canReplayAfter(1)).as("2 was dropped with the history").isFalse();
    }

    @Test
    void turningTheCacheOffReleasesTheHistoryAndOtherTogglesKeepIt() {
        ByteBuf chunk = watch(publish(topic, "v1"));

        TopicFeatures conflated = new TopicFeatures(true, true, true, Conflation.ALWAYS);
        topic.features(conflated);
        assertThat(topic.features).isEqualTo(conflated);
        assertThat(topic.hasValue()).as("cache still on").isTrue();
        assertThat(chunk.refCnt()).isEqualTo(3);

        topic.features(UNCACHED);
        assertThat(topic.features).isEqualTo(UNCACHED);
        assertThat(topic.hasValue()).isFalse();
        assertThat(chunk.refCnt()).isEqualTo(1);

        topic.features(CACHED);
        assertThat(topic.hasValue()).as("nothing comes back with the cache").isFalse();
    }

    @Test
    void historyOfOneKeepsOnlyTheNewestUpdate() {
        Topic one = TopicFixtures.topic(1, "a", 1);
        ByteBuf first = watch(publish(one, "v1"));
        publish(one, "v2");

        assertThat(first.refCnt()).as("v2 did not fit beside v1: v1's chunk went with it").isEqualTo(1);
        assertThat(one.historySize()).isEqualTo(1);
        assertThat(lastValue(one)).isEqualTo("v2");
        assertThat(one.canReplayAfter(1)).isTrue();
        assertThat(one.canReplayAfter(0)).isFalse();
        one.releaseHistory();
    }

    /** The full value the history knows of update {@code seq}. */
    private static String historyFullValue(Topic topic, long seq) {
        assertThat(topic.historyValueKnown(seq)).isTrue();
        return topic.historyValueBuffer(seq).toString(topic.historyValueIndex(seq), topic.historyValueLength(seq),
                StandardCharsets.UTF_8);
    }
}
