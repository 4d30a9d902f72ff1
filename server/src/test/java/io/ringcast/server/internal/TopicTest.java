package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

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

    /** Keeps a reference of the test's own, so the topic's release can be seen in the count. */
    private ByteBuf watch(ByteBuf frameOrCopy) {
        watched.add(frameOrCopy.retain());
        return frameOrCopy;
    }

    @AfterEach
    void releaseEverything() {
        topic.releaseHistory();
        watched.forEach(ByteBuf::release);
    }

    @Test
    void itsDefinitionIsTheTopicMessageOfItsPathMeasuredOnceInUtf8() throws Exception {
        Topic euro = TopicFixtures.topic(9, "fx/€/spot", 3); // '€' takes 3 bytes in UTF-8
        euro.incarnation = 0x692A5E00;
        ByteBuf written = Unpooled.buffer();
        ByteBuf expected = Unpooled.buffer();
        try {
            euro.writeDefinition(written);
            WireCodec.writeTopic(expected, 9, "fx/€/spot", 0x692A5E00);
            assertThat(ByteBufUtil.hexDump(written)).isEqualTo(ByteBufUtil.hexDump(expected));
            assertThat(euro.definitionBytes()).isEqualTo(written.readableBytes())
                    .isEqualTo(WireCodec.topicBytes("fx/€/spot"));
            // and read back by the decoder, which shares nothing with the writer
            List<String> decoded = new ArrayList<>();
            WireCodec.decodeOne(written, new MessageHandler() {
                @Override
                public void onTopic(int alias, String topicPath, int incarnation) {
                    decoded.add(alias + " " + topicPath + " " + Integer.toHexString(incarnation));
                }
            });
            assertThat(decoded).containsExactly("9 fx/€/spot 692a5e00");
            assertThat(written.isReadable()).as("the message's length field covers it exactly").isFalse();
        } finally {
            written.release();
            expected.release();
        }
    }

    @Test
    void largeValuesKeepFewerUpdatesWithinHistoryMaxBytesAndTheNewestAlways() {
        Topic large = new Topic(8, "big/t", new String[] {"big", "t"}, SubscriberSet.empty(1), 8, 100_000, CACHED);
        try {
            List<ByteBuf> frames = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                frames.add(watch(publish(large, Character.toString('a' + i).repeat(30_000))));
            }
            assertThat(large.historySize()).as("30-kB updates within 100 kB").isEqualTo(3);
            assertThat(large.historyBytes()).isBetween(90_000L, 100_000L);
            assertThat(large.canReplayAfter(3)).isTrue();
            assertThat(large.canReplayAfter(2)).as("update 3 was let go").isFalse();
            assertThat(frames.subList(0, 3)).as("the frames let go are released")
                    .allSatisfy(f -> assertThat(f.refCnt()).isEqualTo(1));
            assertThat(frames.subList(3, 6)).allSatisfy(f -> assertThat(f.refCnt()).isEqualTo(2));

            ByteBuf huge = watch(publish(large, "z".repeat(150_000)));
            assertThat(large.historySize()).as("a value larger than the bound is still the newest").isEqualTo(1);
            assertThat(lastValue(large)).startsWith("zzz");
            assertThat(frames.subList(3, 6)).allSatisfy(f -> assertThat(f.refCnt()).isEqualTo(1));
            assertThat(huge.refCnt()).isEqualTo(2);
        } finally {
            large.releaseHistory();
        }
        assertThat(large.historyBytes()).isZero();
    }

    @Test
    void theHistoryGrowsWithItsUpdatesUpToItsLengthAndKeepsEachInItsPlace() {
        Topic t = new Topic(9, "grow/t", new String[] {"grow", "t"}, SubscriberSet.empty(1), 64, CACHED);
        try {
            for (int i = 1; i <= 100; i++) {
                publish(t, "v" + i); // through 1, 2, 4 ... 64 slots, then round the full ring
                int kept = Math.min(i, 64);
                assertThat(t.historySize()).isEqualTo(kept);
                for (long seq = i - kept + 1; seq <= i; seq++) {
                    assertThat(t.historyValueBuffer(seq).toString(t.historyValueIndex(seq), t.historyValueLength(seq),
                            java.nio.charset.StandardCharsets.UTF_8)).as("update %d after %d", seq, i).isEqualTo("v" + seq);
                }
            }
            assertThat(t.canReplayAfter(36)).isTrue();
            assertThat(t.canReplayAfter(35)).isFalse();
        } finally {
            t.releaseHistory();
        }
    }

    @Test
    void newTopicHasNoValueAndNothingToReplay() {
        assertThat(topic.hasValue()).isFalse();
        assertThat(topic.historySize()).isZero();
        assertThat(topic.canReplayAfter(0)).isFalse();
    }

    @Test
    void firstFrameHoldsTheTopicMessageAndTheUpdateIsFoundAfterIt() {
        ByteBuf first = publish(topic, "1.0841");
        ByteBuf second = publish(topic, "1.0842");

        int offset = topic.historyUpdateOffset(1);
        assertThat(first.getByte(first.readerIndex() + 2)).as("the first message of the first frame")
                .isEqualTo(MessageType.TOPIC);
        assertThat(first.getByte(offset)).isEqualTo(MessageType.UPDATE);
        assertThat(first.getInt(offset + WireCodec.HEADER_BYTES)).as("alias").isEqualTo(7);
        assertThat(first.getLong(offset + WireCodec.HEADER_BYTES + 4)).as("sequence").isEqualTo(1);
        assertThat(topic.historyUpdateLength(1)).isEqualTo(WireCodec.UPDATE_OVERHEAD_BYTES + 6);
        assertThat(topic.historyUpdateOffset(2)).as("no TOPIC in later frames")
                .isEqualTo(second.readerIndex() + 2);
        assertThat(historyValue(topic, 1)).isEqualTo("1.0841");
        assertThat(historyValue(topic, 2)).isEqualTo("1.0842");
    }

    @Test
    void newestValueIsReadFromTheNewestFrameWithoutACopy() {
        publish(topic, "a");
        ByteBuf newest = publish(topic, "bb");

        assertThat(topic.hasValue()).isTrue();
        assertThat(topic.lastValueBuffer()).isSameAs(newest);
        assertThat(topic.lastValueIndex()).isEqualTo(topic.historyUpdateOffset(2) + WireCodec.UPDATE_OVERHEAD_BYTES);
        assertThat(topic.lastValueLength()).isEqualTo(2);
        assertThat(lastValue(topic)).isEqualTo("bb");
    }

    @Test
    void newestValueIsReadFromTheCopyWhenTheNewestFrameHoldsADelta() {
        publish(topic, "{\"bid\":1.0841}");
        ByteBuf copy = watch(publishDelta(topic, new byte[]{1, 2, 3}, "{\"bid\":1.0842}"));

        assertThat(topic.lastValueBuffer()).isSameAs(copy);
        assertThat(lastValue(topic)).isEqualTo("{\"bid\":1.0842}");
        assertThat(topic.historyFrame(2).getByte(topic.historyUpdateOffset(2) + WireCodec.UPDATE_OVERHEAD_BYTES - 1))
                .as("the frame's flags").isEqualTo((byte) UpdateFlags.DELTA);

        ByteBuf full = publish(topic, "{\"bid\":1.0843}");
        assertThat(topic.lastValueBuffer()).isSameAs(full);
        assertThat(lastValue(topic)).isEqualTo("{\"bid\":1.0843}");
        assertThat(copy.refCnt()).as("the copy stays with its update, for a rewind").isEqualTo(2);
        assertThat(historyFullValue(topic, 2)).isEqualTo("{\"bid\":1.0842}");
    }

    @Test
    void eachDeltaKeepsItsFullValueUntilItsUpdateFallsOutOfTheHistory() {
        publish(topic, "v1");
        ByteBuf firstCopy = watch(publishDelta(topic, utf8("d2"), "v2"));
        ByteBuf secondCopy = watch(publishDelta(topic, utf8("d3"), "v3"));

        assertThat(firstCopy.refCnt()).isEqualTo(2);
        assertThat(secondCopy.refCnt()).isEqualTo(2);
        assertThat(lastValue(topic)).isEqualTo("v3");
        assertThat(historyFullValue(topic, 2)).isEqualTo("v2");

        publish(topic, "v4");
        publish(topic, "v5"); // history: 3, 4, 5
        assertThat(firstCopy.refCnt()).as("update 2 fell out").isEqualTo(1);
        assertThat(secondCopy.refCnt()).isEqualTo(2);
    }

    @Test
    void historyKeepsTheNewestUpdatesAndReleasesEachEvictedFrameOnce() {
        List<ByteBuf> frames = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            frames.add(watch(publish(topic, "v" + i)));
        }

        assertThat(topic.historySize()).isEqualTo(3);
        assertThat(frames).extracting(ByteBuf::refCnt).as("updates 1..5").containsExactly(1, 1, 2, 2, 2);
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
    void releaseHistoryReleasesEveryFrameAndTheCopyAndCanBeCalledTwice() {
        ByteBuf f1 = watch(publish(topic, "v1"));
        ByteBuf f2 = watch(publish(topic, "v2"));
        ByteBuf copy = watch(publishDelta(topic, utf8("d3"), "v3"));
        ByteBuf f3 = watch(topic.historyFrame(3));

        topic.releaseHistory();
        topic.releaseHistory();

        assertThat(List.of(f1, f2, f3, copy)).extracting(ByteBuf::refCnt).containsOnly(1);
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
        ByteBuf frame = watch(publish(topic, "v1"));

        TopicFeatures conflated = new TopicFeatures(true, true, true, Conflation.ALWAYS);
        topic.features(conflated);
        assertThat(topic.features).isEqualTo(conflated);
        assertThat(topic.hasValue()).as("cache still on").isTrue();
        assertThat(frame.refCnt()).isEqualTo(2);

        topic.features(UNCACHED);
        assertThat(topic.features).isEqualTo(UNCACHED);
        assertThat(topic.hasValue()).isFalse();
        assertThat(frame.refCnt()).isEqualTo(1);

        topic.features(CACHED);
        assertThat(topic.hasValue()).as("nothing comes back with the cache").isFalse();
    }

    @Test
    void historyOfOneKeepsOnlyTheNewestUpdate() {
        Topic one = TopicFixtures.topic(1, "a", 1);
        ByteBuf first = watch(publish(one, "v1"));
        publish(one, "v2");

        assertThat(first.refCnt()).isEqualTo(1);
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
