package io.ringcast.cluster.internal;

import static io.ringcast.cluster.internal.TopicLogTesting.apply;
import static io.ringcast.cluster.internal.TopicLogTesting.applyOne;
import static io.ringcast.cluster.internal.TopicLogTesting.publish;
import static io.ringcast.cluster.internal.TopicLogTesting.republish;
import static io.ringcast.cluster.internal.TopicLogTesting.restore;
import static io.ringcast.cluster.internal.TopicLogTesting.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLogTesting.LastValues;
import io.ringcast.cluster.internal.TopicLogTesting.RecordingSink;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublisherLedgers;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;

class TopicLogSnapshotTest {

    private static TopicLog node(LastValues values) {
        // small bounds, so that the ledgers' order and the forgotten principals matter after a restore
        return new TopicLog(values, values, 40, 12, 16);
    }

    @Test
    void aRestoredStateMachineGoesOnExactlyAsTheOriginal() throws Exception {
        List<byte[]> entries = TopicLogTest.randomEntries(new Random(7), 3_000);
        LastValues originalValues = new LastValues();
        TopicLog original = node(originalValues);
        for (byte[] entry : entries.subList(0, 1_500)) {
            original.apply(entry, 0, entry.length, true);
        }
        byte[] taken = snapshot(original);

        LastValues restoredValues = new LastValues();
        TopicLog restored = node(restoredValues);
        restore(restored, taken);
        assertThat(snapshot(restored)).as("state equal after the restore").isEqualTo(taken);
        assertThat(restoredValues.asStrings()).isEqualTo(originalValues.asStrings()).isNotEmpty();
        assertThat(restored.topics()).isEqualTo(original.topics());
        assertThat(restored.publishers()).isEqualTo(original.publishers());

        originalValues.calls.clear();
        restoredValues.calls.clear();
        for (byte[] entry : entries.subList(1_500, entries.size())) {
            assertThat(restored.apply(entry, 0, entry.length, true)).isEqualTo(original.apply(entry, 0, entry.length, true));
        }
        assertThat(restoredValues.calls).isEqualTo(originalValues.calls).isNotEmpty();
        assertThat(snapshot(restored)).as("state equal after the same further entries").isEqualTo(snapshot(original));
    }

    @Test
    void aRestoredLogCountsEntriesOnFromTheSnapshotsOrdinal() throws Exception {
        List<byte[]> entries = TopicLogTest.randomEntries(new Random(11), 300);
        TopicLog original = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 40, 12, 16);
        for (byte[] entry : entries.subList(0, 200)) {
            original.apply(entry, 0, entry.length, false);
        }
        byte[] taken = snapshot(original);

        List<Long> told = new ArrayList<>();
        TopicLog restored = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 40, 12, 16, told::add);
        apply(restored, publish("zed", 99, 1, "z", "z1")); // a state of its own, replaced whole
        told.clear();
        restore(restored, taken);
        long taken200 = original.appliedEntries();
        assertThat(taken200).as("200 entries less the malformed ones").isBetween(190L, 199L);
        assertThat(restored.appliedEntries()).isEqualTo(taken200);
        assertThat(told).as("the snapshot's ordinal is told once it is read").containsExactly(taken200);
        for (byte[] entry : entries.subList(200, entries.size())) {
            byte[] response = original.apply(entry, 0, entry.length, true);
            assertThat(restored.apply(entry, 0, entry.length, true)).isEqualTo(response);
        }
        assertThat(told).isEqualTo(LongStream.rangeClosed(taken200, original.appliedEntries()).boxed().toList());
        assertThat(apply(restored, publish("ann", 1, 1, "a", "x")).ordinal())
                .isEqualTo(apply(original, publish("ann", 1, 1, "a", "x")).ordinal())
                .isEqualTo(original.appliedEntries());
    }

    @Test
    void aSnapshotWrittenBeforeEntriesWereCountedIsRefusedSayingWhatToDo() throws Exception {
        TopicLog source = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, 10);
        applyOne(source, publish("ann", 1, 1, "a", "x"));
        byte[] version1 = snapshot(source);
        version1[4] = 1; // the version; what follows does not matter, it is not read

        List<Long> told = new ArrayList<>();
        TopicLog target = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, new PublisherLedgers(10, 10), told::add);
        applyOne(target, publish("bob", 2, 1, "b", "x"));
        told.clear();
        byte[] before = snapshot(target);
        assertThatThrownBy(() -> restore(target, version1)).isInstanceOf(IOException.class)
                .hasMessageContaining("snapshot version 1").hasMessageContaining("empty cluster.dataDir");
        assertThat(snapshot(target)).isEqualTo(before);
        assertThat(told).isEmpty();
    }

    @Test
    void theRestoredLedgersAnswerAsTheOriginal() throws Exception {
        TopicLog original = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, 3);
        applyOne(original, publish("ann", 1, 1, "a", "x"));
        applyOne(original, publish("ann", 2, 1, "b", "x"));
        applyOne(original, publish("bob", 3, 1, "c", "x"));
        applyOne(original, publish("ann", 1, 2, "zz", "x")); // ann's publisher 1 used last: [ann 2, bob 3, ann 1]
        applyOne(original, publish("carl", 4, 1, "c", "x")); // forgets ann 2: ann holds the most, 2 her least recently used
        // outcome unknown (ann lost a ledger), recorded for a topic that does not exist; forgets ann 1, ann's oldest
        assertThat(applyOne(original, republish("ann", 2, 9, "d", "x"))).isEqualTo(PublishResult.OUTCOME_UNKNOWN);

        TopicLog restored = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, 3);
        restore(restored, snapshot(original));
        for (TopicLog log : List.of(original, restored)) {
            assertThat(applyOne(log, republish("ann", 2, 9, "d", "x"))).isEqualTo(PublishResult.OUTCOME_UNKNOWN);
            assertThat(applyOne(log, republish("ann", 2, 9, "e", "x"))).isEqualTo(PublishResult.conflict("d"));
            assertThat(applyOne(log, republish("ann", 1, 1, "a", "x"))).as("ann 1 was forgotten: ann held the most")
                    .isEqualTo(PublishResult.OUTCOME_UNKNOWN);
            assertThat(applyOne(log, republish("bob", 3, 1, "c", "x"))).as("bob kept his")
                    .isEqualTo(PublishResult.alreadyApplied(1));
            assertThat(applyOne(log, republish("dave", 5, 1, "a", "x"))).as("dave never lost a ledger")
                    .isEqualTo(PublishResult.applied(2));
        }
        assertThat(snapshot(restored)).isEqualTo(snapshot(original));
    }

    @Test
    void theNodesContentIsWrittenAndReadAfterTheStateMachinesOwnPartOnTheSameThread() throws Exception {
        LastValues values = new LastValues();
        TopicLog log = node(values);
        assertThat(values.calls).isEmpty();
        apply(log, publish("ann", 1, 1, "a", "a1"), publish("ann", 1, 2, "b", "b1"), publish("ann", 1, 3, "a", "a2"));
        int ownPart = ownPartLength(log, values);
        values.calls.clear();

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        log.writeContentTo(new DataOutputStream(bytes));
        assertThat(ByteBuffer.wrap(bytes.toByteArray(), ownPart, Integer.BYTES).getInt())
                .as("the node's part right after the state machine's own").isEqualTo(LastValues.MARKER);
        assertThat(values.calls).containsExactly("write");
        assertThat(values.thread).isSameAs(Thread.currentThread());

        LastValues restoredValues = new LastValues();
        TopicLog restored = node(restoredValues);
        restore(restored, bytes.toByteArray()); // the node's part checks its marker: it is read where it was written
        assertThat(restoredValues.calls).containsExactly("read");
        assertThat(restoredValues.thread).isSameAs(Thread.currentThread());
        assertThat(restoredValues.asStrings()).containsExactly(Map.entry("a", "a2"), Map.entry("b", "b1"));
        assertThat(restored.lastSequence("a")).isEqualTo(2);
    }

    @Test
    void readingReplacesTheWholeState() throws Exception {
        TopicLog leader = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, 10);
        applyOne(leader, publish("ann", 1, 1, "a", "x"));
        applyOne(leader, publish("ann", 1, 2, "a", "y"));
        byte[] taken = snapshot(leader);
        TopicLog behind = new TopicLog(new RecordingSink(), SnapshotContent.NONE, 100, 10);
        applyOne(behind, publish("bob", 2, 1, "c", "x")); // a state of its own, of fewer entries

        restore(behind, taken);
        assertThat(snapshot(behind)).isEqualTo(taken);
        assertThat(behind.topics()).isEqualTo(1);
        assertThat(behind.publishers()).isEqualTo(1);
        assertThat(applyOne(behind, publish("bob", 2, 1, "c", "x"))).as("bob's publish is not known any more")
                .isEqualTo(PublishResult.applied(1));
    }

    /**
     * jgroups-raft 1.1.4 sends a lagging follower the leader's snapshot again until it answers, and
     * installs each copy as it comes; then it applies the log's entries after the snapshot again.
     */
    @Test
    void aSnapshotOfFewerEntriesThanTheNodeAppliedIsNotInstalledAndTheEntriesAppliedAgainAreSkipped()
            throws Exception {
        List<byte[]> entries = TopicLogTest.randomEntries(new Random(5), 400);
        LastValues leaderValues = new LastValues();
        TopicLog leader = node(leaderValues);
        for (byte[] entry : entries.subList(0, 200)) {
            leader.apply(entry, 0, entry.length, false);
        }
        byte[] first = snapshot(leader);
        long firstOrdinal = leader.appliedEntries();

        List<Long> told = new ArrayList<>();
        LastValues followerValues = new LastValues();
        TopicLog follower = new TopicLog(followerValues, followerValues, 40, 12, 16, told::add);
        restore(follower, first); // the first copy: installed
        for (byte[] entry : entries.subList(200, 300)) {
            leader.apply(entry, 0, entry.length, false);
            follower.apply(entry, 0, entry.length, false);
        }
        byte[] current = snapshot(follower);
        long currentOrdinal = follower.appliedEntries();
        followerValues.calls.clear();
        told.clear();

        // a late copy of the same snapshot; the rest of it is left unread (the engine reads nothing after it)
        follower.readContentFrom(new DataInputStream(new ByteArrayInputStream(first)));
        assertThat(followerValues.calls).as("the node's part is not read").isEmpty();
        assertThat(follower.staleSnapshots()).isEqualTo(1);
        assertThat(told).as("no ordinal told back").isEmpty();
        for (byte[] entry : entries.subList(200, 300)) { // the engine applies the entries after it again
            follower.apply(entry, 0, entry.length, false);
        }
        assertThat(followerValues.calls).as("entries applied before are not applied again").isEmpty();
        assertThat(told).as("nor told again").isEmpty();
        assertThat(follower.appliedEntries()).isEqualTo(currentOrdinal);
        assertThat(snapshot(follower)).as("the state it had").isEqualTo(current);

        for (byte[] entry : entries.subList(300, 400)) {
            assertThat(follower.apply(entry, 0, entry.length, true)).isEqualTo(leader.apply(entry, 0, entry.length, true));
        }
        assertThat(told).as("the entries after it are told").isNotEmpty().last().isEqualTo(leader.appliedEntries());
        assertThat(snapshot(follower)).as("alike after the entries that follow").isEqualTo(snapshot(leader));
        assertThat(firstOrdinal).isLessThan(currentOrdinal);
    }

    @Test
    void aMalformedSnapshotIsRefusedAndChangesNothing() throws Exception {
        LastValues values = new LastValues();
        TopicLog source = node(values);
        for (byte[] entry : TopicLogTest.randomEntries(new Random(3), 50)) {
            source.apply(entry, 0, entry.length, false);
        }
        byte[] taken = snapshot(source);
        int ownPart = ownPartLength(source, values);

        LastValues targetValues = new LastValues();
        TopicLog target = node(targetValues);
        apply(target, publish("zed", 99, 1, "z", "z1"));
        byte[] before = snapshot(target);
        targetValues.calls.clear();
        for (int cut = 0; cut < taken.length; cut++) {
            byte[] cutSnapshot = Arrays.copyOf(taken, cut);
            assertThatThrownBy(() -> restore(target, cutSnapshot)).as("cut at %d", cut).isInstanceOf(IOException.class);
            if (cut < ownPart) {
                assertThat(targetValues.calls).as("the node's part is not read after a bad own part").isEmpty();
            }
            targetValues.calls.clear();
            assertThat(target.lastSequence("z")).isEqualTo(1);
            assertThat(target.topics()).isEqualTo(1);
        }
        assertThat(snapshot(target)).isEqualTo(before);
        byte[] wrongMagic = taken.clone();
        wrongMagic[0] ^= 1;
        assertThatThrownBy(() -> restore(target, wrongMagic)).hasMessageContaining("not a topic log snapshot");
        byte[] wrongVersion = taken.clone();
        wrongVersion[4] = 4;
        assertThatThrownBy(() -> restore(target, wrongVersion))
                .hasMessageContaining("unknown topic log snapshot version 4");
        assertThat(snapshot(target)).isEqualTo(before);
    }

    /** The bytes of the state machine's own part: its snapshot less the node's part. */
    private static int ownPartLength(TopicLog log, LastValues values) throws IOException {
        return snapshot(log).length - contentBytes(values);
    }

    /** How many bytes {@link LastValues#write} writes for its values now. */
    private static int contentBytes(LastValues values) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        values.write(new DataOutputStream(bytes));
        return bytes.size();
    }
}
