package io.ringcast.cluster.internal;

import static io.ringcast.cluster.internal.TopicLogTesting.anonymous;
import static io.ringcast.cluster.internal.TopicLogTesting.apply;
import static io.ringcast.cluster.internal.TopicLogTesting.applyOne;
import static io.ringcast.cluster.internal.TopicLogTesting.publish;
import static io.ringcast.cluster.internal.TopicLogTesting.republish;
import static io.ringcast.cluster.internal.TopicLogTesting.snapshot;
import static io.ringcast.cluster.internal.TopicLogTesting.toExistingTopicOnly;
import static io.ringcast.cluster.internal.TopicLogTesting.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLogTesting.Applied;
import io.ringcast.cluster.internal.TopicLogTesting.RecordingSink;
import io.ringcast.log.PublishResult;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;

class TopicLogTest {
    private final RecordingSink sink = new RecordingSink();
    private final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 1000, 1000);

    @Test
    void sequencesAreConsecutivePerTopicAndIndependentAcrossTopics() {
        EntryResponse first = apply(log, anonymous("a", "a1"), anonymous("b", "b1"), anonymous("a", "a2"));
        EntryResponse second = apply(log, anonymous("b", "b2"), anonymous("a", "a3"), anonymous("c", "c1"));

        assertThat(first.results()).containsExactly(PublishResult.applied(1), PublishResult.applied(1),
                PublishResult.applied(2));
        assertThat(second.results()).containsExactly(PublishResult.applied(2), PublishResult.applied(3),
                PublishResult.applied(1));
        assertThat(sink.applied).containsExactly(new Applied("a", 1, "a1"), new Applied("b", 1, "b1"),
                new Applied("a", 2, "a2"), new Applied("b", 2, "b2"), new Applied("a", 3, "a3"), new Applied("c", 1, "c1"));
        assertThat(log.topics()).isEqualTo(3);
        assertThat(log.lastSequence("a")).isEqualTo(3);
        assertThat(log.lastSequence("nowhere")).isZero();
    }

    @Test
    void withoutAResponseTheEntryIsAppliedAllTheSame() {
        byte[] entry = TopicLogCodec.encodeEntry(List.of(anonymous("a", "1"), anonymous("a", "2")));
        assertThat(log.apply(entry, 0, entry.length, false)).isNull();
        assertThat(sink.applied).containsExactly(new Applied("a", 1, "1"), new Applied("a", 2, "2"));
    }

    @Test
    void aPublishThatWouldCreateATopicPastTheBoundIsRefusedInTheLog() {
        TopicLog bounded = new TopicLog(sink, SnapshotContent.NONE, 2, 1000);
        EntryResponse r = apply(bounded, anonymous("a", "1"), anonymous("b", "1"), anonymous("c", "1"),
                anonymous("a", "2"), publish("p", 7, 1, "d", "1"));
        assertThat(r.results()).containsExactly(PublishResult.applied(1), PublishResult.applied(1),
                PublishResult.TOO_MANY_TOPICS, PublishResult.applied(2), PublishResult.TOO_MANY_TOPICS);
        assertThat(sink.applied).extracting(Applied::path).containsExactly("a", "b", "a");
        assertThat(bounded.topics()).isEqualTo(2);
        // the refused publish was not recorded as applied: sent again it is refused alike, not acked
        assertThat(applyOne(bounded, republish("p", 7, 1, "d", "1"))).isEqualTo(PublishResult.TOO_MANY_TOPICS);
        // and the correlation id is still free for its topic: no conflict
        assertThat(applyOne(bounded, republish("p", 7, 1, "a", "3"))).isEqualTo(PublishResult.applied(3));

        TopicLog none = new TopicLog(sink, SnapshotContent.NONE, 0, 1000);
        assertThat(applyOne(none, anonymous("a", "1"))).isEqualTo(PublishResult.TOO_MANY_TOPICS);
    }

    @Test
    void aPublishToAnExistingTopicOnlyIsAppliedToOneThatExistsAndRefusedForANewOne() {
        apply(log, anonymous("a", "1"));
        EntryResponse r = apply(log, toExistingTopicOnly("a", "2"),
                new LoggedPublish("p", 7, 0, 0, 2, false, "b", utf8("1"), true), anonymous("c", "1"));
        assertThat(r.results()).containsExactly(PublishResult.applied(2), PublishResult.TOO_MANY_TOPICS,
                PublishResult.applied(1));
        assertThat(sink.applied).extracting(Applied::path).containsExactly("a", "a", "c");
        assertThat(log.topics()).isEqualTo(2);
        // not recorded as applied: the same publish sent again by a node under its mark creates the topic
        assertThat(applyOne(log, republish("p", 7, 2, "b", "1")))
                .isEqualTo(PublishResult.applied(1));
    }

    @Test
    void aMalformedEntryIsRefusedWholeWithoutChangingTheState() throws Exception {
        apply(log, publish("p", 7, 1, "a", "1"), anonymous("b", "1"));
        byte[] before = snapshot(log);
        int applied = sink.applied.size();

        byte[] entry = TopicLogCodec.encodeEntry(List.of(publish("p", 7, 2, "a", "2"), anonymous("c", "1"),
                publish("q", 8, 1, "d", "1")));
        byte[] cut = Arrays.copyOf(entry, entry.length - 1); // the first publishes are whole, the last is not
        EntryResponse r = TopicLogCodec.decodeResponse(log.apply(cut, 0, cut.length, true));

        assertThat(r.isRefused()).isTrue();
        assertThat(r.refusal()).contains("nothing of it applied").contains("value of publish 2").contains("do not fit");
        assertThat(sink.applied).hasSize(applied);
        assertThat(snapshot(log)).isEqualTo(before);
        assertThat(log.refusedEntries()).isEqualTo(1);
        assertThat(log.apply(cut, 0, cut.length, false)).isNull();
        assertThat(log.apply(new byte[] {9, 9, 9}, 1, 1, true)).isNotNull();
        assertThat(snapshot(log)).isEqualTo(before);

        // the whole entry then applies from where the state was
        assertThat(TopicLogCodec.decodeResponse(log.apply(entry, 0, entry.length, true)).results())
                .containsExactly(PublishResult.applied(2), PublishResult.applied(1), PublishResult.applied(1));
    }

    @Test
    void twoStateMachinesFedTheSameEntriesAgreeOnEverything() {
        RecordingSink sinkA = new RecordingSink();
        RecordingSink sinkB = new RecordingSink();
        // small bounds, so that eviction, outcome unknown and the topic bound all happen
        TopicLog a = new TopicLog(sinkA, SnapshotContent.NONE, 40, 12, 16);
        TopicLog b = new TopicLog(sinkB, SnapshotContent.NONE, 40, 12, 16);
        List<byte[]> responsesA = new ArrayList<>();
        List<byte[]> responsesB = new ArrayList<>();
        for (byte[] entry : randomEntries(new Random(18), 2_000)) {
            responsesA.add(a.apply(entry, 0, entry.length, true));
            responsesB.add(b.apply(entry.clone(), 0, entry.length, true));
        }
        assertThat(sinkA.applied).isEqualTo(sinkB.applied).isNotEmpty();
        for (int i = 0; i < responsesA.size(); i++) {
            assertThat(responsesA.get(i)).as("response %d", i).isEqualTo(responsesB.get(i));
        }
        assertThat(snapshot(a)).isEqualTo(snapshot(b));
        assertThat(a.forgottenPublishers()).isPositive();
    }

    @Test
    void everyNodeGivesAnEntryTheSameOrdinalAndTellsItOnlyOnceTheEntrysUpdatesAreInTheSink() throws Exception {
        RecordingSink sinkA = new RecordingSink();
        RecordingSink sinkB = new RecordingSink();
        List<Long> toldA = new ArrayList<>();
        List<Long> toldB = new ArrayList<>();
        List<Integer> updatesWhenTold = new ArrayList<>();
        TopicLog a = new TopicLog(sinkA, SnapshotContent.NONE, 40, 12, 16, ordinal -> {
            toldA.add(ordinal);
            updatesWhenTold.add(sinkA.applied.size());
        });
        TopicLog b = new TopicLog(sinkB, SnapshotContent.NONE, 40, 12, 16, toldB::add);
        List<byte[]> entries = randomEntries(new Random(5), 500); // a few of them malformed: not counted
        List<Integer> updatesAfter = new ArrayList<>();
        long ordinal = 0;
        for (int i = 0; i < entries.size(); i++) {
            byte[] entry = entries.get(i);
            byte[] response = a.apply(entry, 0, entry.length, true);
            b.apply(entry.clone(), 0, entry.length, i % 2 == 0); // with a response or not: counted alike
            EntryResponse decoded = TopicLogCodec.decodeResponse(response);
            if (!decoded.isRefused()) {
                updatesAfter.add(sinkA.applied.size());
                assertThat(decoded.ordinal()).as("entry %d's ordinal in its response", i).isEqualTo(++ordinal);
            }
        }
        long applied = 500 - a.refusedEntries();
        assertThat(a.refusedEntries()).as("malformed entries among them").isPositive();
        assertThat(toldA).isEqualTo(toldB).isEqualTo(LongStream.rangeClosed(1, applied).boxed().toList());
        assertThat(a.appliedEntries()).isEqualTo(b.appliedEntries()).isEqualTo(applied);
        assertThat(updatesWhenTold).as("the sink had each entry's updates when its ordinal was told")
                .isEqualTo(updatesAfter);
    }

    /**
     * Entries of 1 to 20 publishes from 30 publishers of 5 principals to 50 topics, a third of them
     * sent again (as REPUBLISH or as a plain publish), some to another topic; a few malformed.
     */
    static List<byte[]> randomEntries(Random random, int count) {
        return randomEntries(random, count, false);
    }

    /**
     * {@link #randomEntries(Random, int)}, and with {@code removals} one record in ten a removal of
     * one of the 50 topics, half of them on a last sequence of 1 to 5 (an expiry, which may or may
     * not hold); without, the same entries as before removals existed, for the same seed.
     */
    static List<byte[]> randomEntries(Random random, int count, boolean removals) {
        List<byte[]> entries = new ArrayList<>();
        List<LoggedPublish> sent = new ArrayList<>();
        int[] nextId = new int[30];
        for (int e = 0; e < count; e++) {
            List<LoggedRecord> batch = new ArrayList<>();
            int size = 1 + random.nextInt(20);
            for (int i = 0; i < size; i++) {
                if (removals && random.nextInt(10) == 0) {
                    String path = "t/" + random.nextInt(50);
                    batch.add(new LoggedRemoval(path, random.nextBoolean() ? 0 : 1 + random.nextInt(5)));
                    continue;
                }
                int publisher = random.nextInt(31);
                String path = "t/" + random.nextInt(50);
                String value = "v" + e + "." + i;
                if (publisher == 30) {
                    batch.add(anonymous(path, value));
                } else if (!sent.isEmpty() && random.nextInt(3) == 0) {
                    LoggedPublish old = sent.get(sent.size() - 1 - random.nextInt(Math.min(sent.size(), 200)));
                    String again = random.nextInt(10) == 0 ? path : old.path();
                    batch.add(new LoggedPublish(old.principal(), old.publisherId(), old.correlationId(),
                            random.nextBoolean(), again, TopicLogTesting.utf8(value)));
                } else {
                    LoggedPublish p = new LoggedPublish("principal " + publisher % 5, 1000 + publisher,
                            nextId[publisher]++, false, path, TopicLogTesting.utf8(value));
                    sent.add(p);
                    batch.add(p);
                }
            }
            byte[] entry = TopicLogCodec.encodeEntry(batch);
            entries.add(random.nextInt(100) == 0 ? Arrays.copyOf(entry, random.nextInt(entry.length)) : entry);
        }
        return entries;
    }
}
