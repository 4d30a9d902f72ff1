package io.ringcast.cluster.internal;

import static io.ringcast.cluster.internal.TopicLogTesting.anonymous;
import static io.ringcast.cluster.internal.TopicLogTesting.apply;
import static io.ringcast.cluster.internal.TopicLogTesting.applyOne;
import static io.ringcast.cluster.internal.TopicLogTesting.publish;
import static io.ringcast.cluster.internal.TopicLogTesting.removal;
import static io.ringcast.cluster.internal.TopicLogTesting.republish;
import static io.ringcast.cluster.internal.TopicLogTesting.restore;
import static io.ringcast.cluster.internal.TopicLogTesting.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLogTesting.Applied;
import io.ringcast.cluster.internal.TopicLogTesting.LastValues;
import io.ringcast.cluster.internal.TopicLogTesting.RecordingSink;
import io.ringcast.cluster.internal.TopicLogTesting.Removed;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublisherLedgers;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Removals in the log (docs/protocol.md, "Removing topics"): a removal takes its topic out of the
 * replicated state and tells the sink in log order; an expiry's removal, conditional on the last
 * sequence, leaves a topic a publish reached first; the next publish makes a new topic from
 * sequence 1, with an incarnation the log decides alike on every node.
 */
class TopicLogRemovalTest {
    private final RecordingSink sink = new RecordingSink();
    private final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 1000, 1000);

    @Test
    void aRemovalTellsTheSinkTheLastSequenceAndThePathStartsAgainFromOneWithANewIncarnation() {
        apply(log, anonymous("a", "a1"), anonymous("b", "b1"));
        apply(log, anonymous("a", "a2"), anonymous("a", "a3"));
        int first = log.incarnation("a");

        assertThat(applyOne(log, removal("a"))).as("the removed topic's last sequence")
                .isEqualTo(PublishResult.applied(3));
        assertThat(sink.removed).containsExactly(new Removed("a", 3));
        assertThat(log.topics()).isEqualTo(1);
        assertThat(log.lastSequence("a")).isZero();
        assertThat(log.incarnation("a")).isZero();
        assertThat(log.lastSequence("b")).as("the others stay").isEqualTo(1);

        assertThat(applyOne(log, anonymous("a", "new1"))).isEqualTo(PublishResult.applied(1));
        assertThat(applyOne(log, anonymous("a", "new2"))).isEqualTo(PublishResult.applied(2));
        assertThat(log.incarnation("a")).isNotEqualTo(first).isNotZero();
        assertThat(sink.events).containsExactly(
                "apply a 1 #1 a1", "apply b 1 #1 b1", "apply a 2 #1 a2", "apply a 3 #1 a3",
                "removed a 3",
                "apply a 1 #4 new1", "apply a 2 #4 new2");
    }

    @Test
    void theIncarnationIsTheOrdinalOfTheEntryThatMadeTheTopic() {
        apply(log, anonymous("a", "1"));                     // entry 1 makes a
        apply(log, anonymous("b", "1"), anonymous("a", "2")); // entry 2 makes b
        apply(log, removal("a"));                           // entry 3
        apply(log, anonymous("c", "1"), anonymous("a", "1")); // entry 4 makes c and a again
        assertThat(log.incarnation("b")).isEqualTo(2);
        assertThat(log.incarnation("c")).isEqualTo(4);
        assertThat(log.incarnation("a")).isEqualTo(4);
        assertThat(sink.incarnations).containsExactly(1, 2, 1, 4, 4);

        assertThat(TopicLog.incarnation(7, 0)).isEqualTo(7);
        assertThat(TopicLog.incarnation((1L << 32) + 5, 0)).as("the ordinal's low 32 bits").isEqualTo(5);
        assertThat(TopicLog.incarnation(0xFFFF_FFFFL, 0)).as("a u32, above 2^31 too").isEqualTo(-1);
        assertThat(TopicLog.incarnation(1L << 32, 0)).as("never 0, which means not known").isEqualTo(1);
    }

    @Test
    void aPathMadeRemovedAndMadeAgainWithinOneEntryGetsAnotherIncarnationEachTime() {
        EntryResponse r = apply(log, anonymous("a", "x"), removal("a"), anonymous("a", "y"), removal("a"),
                anonymous("a", "z"), anonymous("b", "1"));
        assertThat(r.results()).containsExactly(PublishResult.applied(1), PublishResult.applied(1),
                PublishResult.applied(1), PublishResult.applied(1), PublishResult.applied(1), PublishResult.applied(1));
        assertThat(sink.removed).containsExactly(new Removed("a", 1), new Removed("a", 1));
        List<Integer> ofA = sink.incarnations.subList(0, 3);
        assertThat(new HashSet<>(ofA)).as("three topics of one path, three incarnations: " + ofA).hasSize(3)
                .doesNotContain(0);
        assertThat(ofA.get(0)).isEqualTo(1);
        assertThat(sink.incarnations.get(3)).as("b, made once in the entry: the entry's ordinal").isEqualTo(1);

        // a path removed in an entry after the one that made it: made again with that entry's ordinal
        apply(log, removal("a"), anonymous("a", "w"));
        assertThat(log.incarnation("a")).isEqualTo(2);
    }

    @Test
    void anExpirysRemovalLeavesATopicAPublishReachedFirst() {
        apply(log, anonymous("a", "1"), anonymous("a", "2"));
        // the leader saw a at 1 and decided to expire it; a publish got into the log before the removal
        assertThat(applyOne(log, removal("a", 1))).as("nothing removed").isEqualTo(PublishResult.applied(0));
        assertThat(sink.removed).isEmpty();
        assertThat(log.lastSequence("a")).isEqualTo(2);
        // in one entry too: the publish first keeps it
        EntryResponse r = apply(log, anonymous("a", "3"), removal("a", 2));
        assertThat(r.results()).containsExactly(PublishResult.applied(3), PublishResult.applied(0));
        assertThat(log.topics()).isEqualTo(1);
        // the condition holds: removed
        assertThat(applyOne(log, removal("a", 3))).isEqualTo(PublishResult.applied(3));
        assertThat(sink.removed).containsExactly(new Removed("a", 3));
        assertThat(log.topics()).isZero();
    }

    @Test
    void aRemovalOfAPathWithoutATopicRemovesNothing() {
        assertThat(applyOne(log, removal("nowhere"))).isEqualTo(PublishResult.applied(0));
        assertThat(applyOne(log, removal("nowhere", 4))).isEqualTo(PublishResult.applied(0));
        apply(log, anonymous("a", "1"));
        assertThat(apply(log, removal("a"), removal("a")).results()).as("the second finds nothing")
                .containsExactly(PublishResult.applied(1), PublishResult.applied(0));
        assertThat(sink.removed).containsExactly(new Removed("a", 1));
        assertThat(sink.applied).hasSize(1);
    }

    @Test
    void aRemovedTopicNoLongerCountsAgainstMaxTopics() {
        TopicLog bounded = new TopicLog(sink, SnapshotContent.NONE, 2, 1000);
        apply(bounded, anonymous("a", "1"), anonymous("b", "1"));
        assertThat(applyOne(bounded, anonymous("c", "1"))).isEqualTo(PublishResult.TOO_MANY_TOPICS);
        assertThat(applyOne(bounded, removal("a"))).isEqualTo(PublishResult.applied(1));
        assertThat(applyOne(bounded, anonymous("c", "1"))).isEqualTo(PublishResult.applied(1));
        assertThat(applyOne(bounded, anonymous("a", "2"))).as("a counts anew, past the bound now")
                .isEqualTo(PublishResult.TOO_MANY_TOPICS);
        assertThat(bounded.topics()).isEqualTo(2);
    }

    @Test
    void aPublishSentAgainAfterItsTopicWasRemovedIsStillRecognisedAndNotAppliedAgain() {
        assertThat(applyOne(log, publish("ann", 1, 10, "a", "x"))).isEqualTo(PublishResult.applied(1));
        applyOne(log, removal("a"));
        assertThat(applyOne(log, republish("ann", 1, 10, "a", "x"))).as("answered as it was the first time")
                .isEqualTo(PublishResult.alreadyApplied(1));
        assertThat(log.topics()).as("not made again by a copy").isZero();
        assertThat(applyOne(log, publish("ann", 1, 11, "a", "y"))).isEqualTo(PublishResult.applied(1));
        assertThat(sink.applied).containsExactly(new Applied("a", 1, "x"), new Applied("a", 1, "y"));
    }

    @Test
    void twoStateMachinesFedTheSameEntriesWithRemovalsAgreeOnEverythingIncarnationsIncluded() {
        RecordingSink sinkA = new RecordingSink();
        RecordingSink sinkB = new RecordingSink();
        TopicLog a = new TopicLog(sinkA, SnapshotContent.NONE, 40, 12, 16);
        TopicLog b = new TopicLog(sinkB, SnapshotContent.NONE, 40, 12, 16);
        List<byte[]> responsesA = new ArrayList<>();
        List<byte[]> responsesB = new ArrayList<>();
        for (byte[] entry : TopicLogTest.randomEntries(new Random(29), 2_000, true)) {
            responsesA.add(a.apply(entry, 0, entry.length, true));
            responsesB.add(b.apply(entry.clone(), 0, entry.length, true));
        }
        assertThat(sinkA.events).isEqualTo(sinkB.events);
        assertThat(sinkA.incarnations).isEqualTo(sinkB.incarnations);
        assertThat(sinkA.removed).as("removals happened").hasSizeGreaterThan(100);
        assertThat(new HashSet<>(sinkA.incarnations)).as("topics were made again, with other incarnations")
                .hasSizeGreaterThan(100);
        for (int i = 0; i < responsesA.size(); i++) {
            assertThat(responsesA.get(i)).as("response %d", i).isEqualTo(responsesB.get(i));
        }
        assertThat(snapshot(a)).isEqualTo(snapshot(b));
        assertSequencesStartAtOneAfterEachRemoval(sinkA);
    }

    /** Each topic's updates run 1, 2, 3... and start again at 1, with another incarnation, after each removal. */
    private static void assertSequencesStartAtOneAfterEachRemoval(RecordingSink sink) {
        Map<String, long[]> lastAndIncarnation = new java.util.HashMap<>();
        for (String event : sink.events) {
            String[] e = event.split(" ");
            if (e[0].equals("removed")) {
                long[] topic = lastAndIncarnation.remove(e[1]);
                assertThat(topic).as(event + ": of a topic that exists").isNotNull();
                assertThat(Long.parseLong(e[2])).as(event).isEqualTo(topic[0]);
                lastAndIncarnation.put(e[1] + " removed", topic);
                continue;
            }
            long sequence = Long.parseLong(e[2]);
            int incarnation = Integer.parseInt(e[3].substring(1));
            long[] topic = lastAndIncarnation.get(e[1]);
            if (topic == null) {
                assertThat(sequence).as(event + ": a new topic's first").isEqualTo(1);
                long[] before = lastAndIncarnation.remove(e[1] + " removed");
                if (before != null) {
                    assertThat(incarnation).as(event + ": another incarnation than the removed one's")
                            .isNotEqualTo((int) before[1]);
                }
                lastAndIncarnation.put(e[1], new long[] {1, incarnation});
            } else {
                assertThat(sequence).as(event).isEqualTo(topic[0] + 1);
                assertThat(incarnation).as(event + ": the topic's incarnation").isEqualTo((int) topic[1]);
                topic[0] = sequence;
            }
        }
    }

    @Test
    void aSnapshotKeepsIncarnationsAndARemovedTopicStaysRemoved() throws Exception {
        LastValues values = new LastValues();
        TopicLog original = new TopicLog(values, values, 1000, 1000);
        apply(original, anonymous("a", "a1"), anonymous("b", "b1"));
        apply(original, anonymous("c", "c1"));
        apply(original, removal("a"), removal("c"));
        apply(original, anonymous("a", "a-again"));
        byte[] taken = snapshot(original);
        assertThat(taken[4]).as("the snapshot's version").isEqualTo((byte) 3);

        LastValues restoredValues = new LastValues();
        TopicLog restored = new TopicLog(restoredValues, restoredValues, 1000, 1000);
        restore(restored, taken);
        assertThat(snapshot(restored)).isEqualTo(taken);
        assertThat(restored.topics()).isEqualTo(2);
        assertThat(restored.incarnation("a")).isEqualTo(original.incarnation("a")).isEqualTo(4);
        assertThat(restored.incarnation("b")).isEqualTo(original.incarnation("b")).isEqualTo(1);
        assertThat(restored.lastSequence("c")).isZero();
        assertThat(restoredValues.asStrings()).containsExactly(Map.entry("b", "b1"), Map.entry("a", "a-again"));

        values.calls.clear();
        restoredValues.calls.clear();
        for (TopicLog each : List.of(original, restored)) {
            assertThat(apply(each, anonymous("c", "c2"), anonymous("a", "a2"), removal("b", 1)).results())
                    .as("c made anew, a goes on, b removed on its sequence")
                    .containsExactly(PublishResult.applied(1), PublishResult.applied(2), PublishResult.applied(1));
        }
        assertThat(restoredValues.calls).isEqualTo(values.calls)
                .containsExactly("apply c 1 #5", "apply a 2 #4", "removed b 1");
        assertThat(snapshot(restored)).isEqualTo(snapshot(original));
    }

    @Test
    void aRestoredStateMachineGoesOnAsTheOriginalThroughRandomRemovals() throws Exception {
        List<byte[]> entries = TopicLogTest.randomEntries(new Random(31), 2_000, true);
        LastValues originalValues = new LastValues();
        TopicLog original = new TopicLog(originalValues, originalValues, 40, 12, 16);
        for (byte[] entry : entries.subList(0, 1_000)) {
            original.apply(entry, 0, entry.length, true);
        }
        byte[] taken = snapshot(original);
        LastValues restoredValues = new LastValues();
        TopicLog restored = new TopicLog(restoredValues, restoredValues, 40, 12, 16);
        restore(restored, taken);
        assertThat(restoredValues.asStrings()).isEqualTo(originalValues.asStrings());
        originalValues.calls.clear();
        restoredValues.calls.clear();
        for (byte[] entry : entries.subList(1_000, entries.size())) {
            assertThat(restored.apply(entry, 0, entry.length, true))
                    .isEqualTo(original.apply(entry, 0, entry.length, true));
        }
        assertThat(restoredValues.calls).isEqualTo(originalValues.calls).anyMatch(c -> c.startsWith("removed "));
        assertThat(snapshot(restored)).isEqualTo(snapshot(original));
    }

    /** A snapshot of the version before incarnations (2), as a node of the previous release wrote it. */
    @Test
    void aSnapshotWrittenBeforeIncarnationsIsReadWithIncarnationZero() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0x52435431); // "RCT1"
        out.writeByte(2);         // version 2
        out.writeByte(5);         // 5 entries applied
        out.writeByte(2);         // 2 topics: path, last sequence (no incarnation)
        out.writeByte(1);
        out.writeBytes("a");
        out.writeByte(3);
        out.writeByte(1);
        out.writeBytes("b");
        out.writeByte(1);
        out.write(new byte[] {2, 0, 0, 0}); // ledgers: version 2, none forgotten, no principals, no ledgers
        List<Long> told = new ArrayList<>();
        TopicLog restored = new TopicLog(sink, SnapshotContent.NONE, 1000, new PublisherLedgers(1000, 1000), told::add);
        restore(restored, bytes.toByteArray());

        assertThat(told).containsExactly(5L);
        assertThat(restored.topics()).isEqualTo(2);
        assertThat(restored.lastSequence("a")).isEqualTo(3);
        assertThat(restored.incarnation("a")).as("not known").isZero();
        assertThat(applyOne(restored, anonymous("a", "4"))).isEqualTo(PublishResult.applied(4)); // entry 6
        apply(restored, removal("a"));                                                          // entry 7
        assertThat(applyOne(restored, anonymous("a", "1"))).isEqualTo(PublishResult.applied(1)); // entry 8
        assertThat(sink.events).containsExactly("apply a 4 #0 4", "removed a 4", "apply a 1 #8 1");

        byte[] rewritten = snapshot(restored);
        assertThat(rewritten[4]).as("written as the current version").isEqualTo((byte) 3);
        TopicLog again = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 1000, 1000);
        restore(again, rewritten);
        assertThat(again.incarnation("b")).as("still not known").isZero();
        assertThat(again.incarnation("a")).isEqualTo(8);
        assertThat(snapshot(again)).isEqualTo(rewritten);
    }
}
