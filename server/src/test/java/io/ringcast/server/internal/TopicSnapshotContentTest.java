package io.ringcast.server.internal;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.internal.ReceivedFrames.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The topics' part of the cluster's Raft snapshots ({@link TopicSnapshotContent}), without sockets
 * or an engine: a thread of the test plays the Raft engine's apply thread and writes or reads a
 * snapshot, which asks the sequencer through the inbound ring; the test thread plays the sequencer
 * ({@link EmbeddedNode#runInbound}). What a node that took a snapshot over gives its subscribers,
 * old and new, and what a damaged snapshot leaves.
 */
@Timeout(30)
class TopicSnapshotContentTest {
    /** A cluster node keeping four updates of history per topic. */
    private static final String NODE = "history: {length: 4}";

    private final ExecutorService engine = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-raft-engine"));
    private final List<EmbeddedNode> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        engine.shutdownNow();
        nodes.forEach(EmbeddedNode::close);
    }

    private EmbeddedNode clusterNode() {
        EmbeddedNode node = new EmbeddedNode(NODE, true);
        nodes.add(node);
        return node;
    }

    private static TopicSnapshotContent contentOf(EmbeddedNode node) {
        return new TopicSnapshotContent(node.inbound(), node.config().limits().pathLimits());
    }

    /**
     * Runs {@code work} on the engine's thread while the test thread, playing the sequencer, runs
     * the {@code commands} it puts into the node's inbound ring.
     */
    private <T> T onEngineThread(EmbeddedNode node, int commands, Callable<T> work) throws Exception {
        Future<T> done = engine.submit(work);
        node.runInbound(commands);
        return done.get(10, TimeUnit.SECONDS);
    }

    /** The node's part of a snapshot, as the engine thread writes it while the sequencer captures. */
    private byte[] snapshotOf(EmbeddedNode node) throws Exception {
        TopicSnapshotContent content = contentOf(node);
        return onEngineThread(node, 1, () -> written(content));
    }

    private static byte[] written(SnapshotContent content) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        content.write(new DataOutputStream(bytes));
        return bytes.toByteArray();
    }

    /** The engine thread reads {@code snapshot} into {@code node}; returns once the sequencer has taken it over. */
    private void takeOver(EmbeddedNode node, byte[] snapshot) throws Exception {
        TopicSnapshotContent content = contentOf(node);
        onEngineThread(node, 1, () -> {
            content.read(new DataInputStream(new ByteArrayInputStream(snapshot)));
            return null;
        });
    }

    private static void applyAll(EmbeddedNode node, String path, int from, int to) {
        for (int seq = from; seq <= to; seq++) {
            node.apply(path, seq, path + "#" + seq);
        }
    }

    private static List<Received> snapshots(List<Received> got) {
        return of(got, MessageType.SNAPSHOT);
    }

    @Test
    void aNodeTakingOverASnapshotHasEveryTopicsValueAndSequenceButNotTheHistoryBefore() throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "fx/eur", 1, 6);
        applyAll(leader, "fx/gbp", 1, 1);
        applyAll(leader, "news/日本語/🚀", 1, 2);
        byte[] snapshot = snapshotOf(leader);

        EmbeddedNode restored = clusterNode();
        takeOver(restored, snapshot);

        assertThat(restored.counters.topics()).isEqualTo(3);
        assertThat(restored.counters.valuesCached()).isEqualTo(3);
        Session fresh = restored.session(0);
        restored.subscribe(fresh, 1, "#");
        assertThat(snapshots(restored.received(fresh))).extracting(Received::flags, Received::sequence, Received::text)
                .containsExactlyInAnyOrder(tuple(0, 6L, "fx/eur#6"), tuple(0, 1L, "fx/gbp#1"),
                        tuple(0, 2L, "news/日本語/🚀#2"));

        Session oneBehind = restored.session(1);
        restored.subscribe(oneBehind, 1, "fx/eur", Map.of("fx/eur", 5L));
        assertThat(of(restored.received(oneBehind), MessageType.UPDATE)).extracting(Received::sequence, Received::text)
                .containsExactly(tuple(6L, "fx/eur#6"));

        Session beforeHistory = restored.session(0);
        restored.subscribe(beforeHistory, 1, "fx/eur", Map.of("fx/eur", 3L)); // in the leader's history, not the snapshot's
        assertThat(snapshots(restored.received(beforeHistory))).extracting(Received::flags, Received::sequence,
                Received::text).containsExactly(tuple(UpdateFlags.GAP, 6L, "fx/eur#6"));

        restored.apply("fx/eur", 7, "fx/eur#7");
        assertThat(of(restored.received(fresh), MessageType.UPDATE)).extracting(Received::sequence, Received::text)
                .containsExactly(tuple(7L, "fx/eur#7"));
    }

    /**
     * A node at a#2, b#2 with a subscriber on '#' takes over the snapshot of a leader at a#{@code aTo},
     * b#2, c#1. The subscriber's messages since then, and a's alias.
     */
    private record Behind(EmbeddedNode node, Session sub, int aliasOfA, List<Received> got) {
    }

    private Behind takeOverFromLeaderAt(int aTo) throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "a", 1, aTo);
        applyAll(leader, "b", 1, 2);
        applyAll(leader, "c", 1, 1);
        byte[] snapshot = snapshotOf(leader);

        EmbeddedNode behind = clusterNode();
        applyAll(behind, "a", 1, 2);
        applyAll(behind, "b", 1, 2);
        Session sub = behind.session(1);
        behind.subscribe(sub, 1, "#");
        int aliasOfA = of(behind.received(sub), MessageType.TOPIC).stream().filter(t -> t.text().equals("a"))
                .findFirst().orElseThrow().alias();
        takeOver(behind, snapshot);
        return new Behind(behind, sub, aliasOfA, behind.received(sub));
    }

    @Test
    void subscribersOfATopicTheSnapshotMovesOnByOneGetItsValueAsTheNextUpdateAndThenCarryOn() throws Exception {
        Behind b = takeOverFromLeaderAt(3);
        int a = b.aliasOfA();
        assertThat(b.got()).extracting(Received::line).as("a's 3 is the snapshot's value: no gap")
                .containsExactlyInAnyOrder("UPDATE " + a + " #3 a#3",
                        "TOPIC 3 c", "UPDATE 3 #1 c#1"); // new here, all of it in the snapshot; b did not move: nothing
        b.node().apply("a", 4, "a#4");
        assertThat(of(b.node().received(b.sub()), MessageType.UPDATE)).extracting(Received::alias, Received::sequence,
                Received::flags).containsExactly(tuple(a, 4L, 0));
    }

    @Test
    void subscribersOfTopicsTheSnapshotMovesOnByMoreAreToldOfTheGapAndThenCarryOn() throws Exception {
        Behind b = takeOverFromLeaderAt(9); // the leader's history keeps 6 to 9, its snapshot 9 alone
        int a = b.aliasOfA();
        assertThat(b.got()).extracting(Received::line).containsExactlyInAnyOrder(
                "SNAPSHOT 0 " + a + " #9 GAP a#9", // moved past what the snapshot holds: the gap, with the value
                "TOPIC 3 c", "UPDATE 3 #1 c#1"); // new here, replayed; b did not move: nothing
        b.node().apply("a", 10, "a#10");
        assertThat(of(b.node().received(b.sub()), MessageType.UPDATE)).extracting(Received::alias, Received::sequence,
                Received::flags).containsExactly(tuple(a, 10L, 0));
        assertThat(b.node().counters.topics()).isEqualTo(3);
        assertThat(b.node().counters.valuesCached()).isEqualTo(3);
    }

    @Test
    void aTopicAtTheSnapshotsSequenceKeepsItsHistoryAndItsSubscribersHearNothing() throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "a", 1, 4);
        byte[] snapshot = snapshotOf(leader);

        EmbeddedNode follower = clusterNode();
        applyAll(follower, "a", 1, 4);
        Session sub = follower.session(0);
        follower.subscribe(sub, 1, "a");
        follower.received(sub);
        takeOver(follower, snapshot);
        assertThat(follower.received(sub)).isEmpty();

        Session resumed = follower.session(1);
        follower.subscribe(resumed, 1, "a", Map.of("a", 1L));
        assertThat(of(follower.received(resumed), MessageType.UPDATE)).extracting(Received::text)
                .containsExactly("a#2", "a#3", "a#4");
    }

    @Test
    void aSnapshotsSizeFollowsItsTopicsValuesNotTheirHistory() throws Exception {
        EmbeddedNode once = clusterNode();
        EmbeddedNode often = new EmbeddedNode("history: {length: 4096}", true);
        nodes.add(often);
        String value = "v".repeat(200);
        once.apply("t", 1000, value);
        for (int seq = 1; seq <= 1000; seq++) {
            often.apply("t", seq, value);
            if (seq % 500 == 0) {
                often.deliver();
            }
        }
        byte[] ofOnce = snapshotOf(once);
        byte[] ofOften = snapshotOf(often);
        assertThat(ofOften).as("1,000 updates in history, 200 B each").hasSize(ofOnce.length);
        assertThat(ofOnce.length).isLessThan(300);
    }

    /** Creates {@code n} topics with one update of 200 bytes each, delivering as it goes (the ring has 1,024 slots). */
    private static void applyMany(EmbeddedNode node, int n) {
        String value = "v".repeat(200);
        for (int i = 0; i < n; i++) {
            node.apply(String.format("s/topic-%05d", i), 1, value);
            if (i % 500 == 499) {
                node.deliver();
            }
        }
        node.deliver();
    }

    /**
     * A subscriber on '#' whose reply streams (3,001 topics) has been sent "a" (at #2) when the node
     * takes over a snapshot that moves "a" on to #3: the replay of 3 is held with a's updates
     * and comes after SUBSCRIBED, after a's snapshot, as the updates themselves would have.
     */
    @Test
    void aSubscriberWhoseReplyStreamsIsReplayedATopicTheSnapshotMovesOnAfterItsSubscribed() throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "a", 1, 3);
        applyMany(leader, 3000);
        byte[] snapshot = snapshotOf(leader);

        EmbeddedNode behind = clusterNode();
        applyAll(behind, "a", 1, 2);
        applyMany(behind, 3000);
        Session sub = behind.session(0);
        behind.subscribe(sub, 1, "#");
        behind.deliverWindow(); // "a", created first, is in the first window
        assertThat(behind.counters.subscribeRepliesPending()).isEqualTo(1);
        takeOver(behind, snapshot);
        behind.deliver();

        List<String> ofA = new ArrayList<>();
        int aliasOfA = 1;
        boolean subscribed = false;
        for (Received m : behind.received(sub)) {
            subscribed |= m.is(MessageType.SUBSCRIBED);
            if (m.alias() == aliasOfA && !m.is(MessageType.SUBSCRIBED)) {
                ofA.add((subscribed ? "after " : "before ") + m.line());
            }
        }
        assertThat(ofA).containsExactly("before TOPIC 1 a", "before SNAPSHOT 1 1 #2 a#2", "after UPDATE 1 #3 a#3");
    }

    /** A topic the snapshot lacks was removed by entries this node had not applied: it is removed here too. */
    @Test
    void aTopicTheSnapshotLacksIsRemovedAndTheLogsNewNumberingOfItIsApplied() throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "a", 1, 1);
        byte[] snapshot = snapshotOf(leader);

        EmbeddedNode other = clusterNode();
        applyAll(other, "a", 1, 1);
        applyAll(other, "x", 1, 3);
        Session sub = other.session(0);
        other.subscribe(sub, 1, "x");
        other.received(sub);

        takeOver(other, snapshot);

        assertThat(other.received(sub)).extracting(Received::line).containsExactly("TOPIC_REMOVED 2 #3");
        assertThat(other.counters.valuesCached()).as("a's only").isEqualTo(1);
        assertThat(other.counters.topics()).isEqualTo(1);
        other.apply("x", 1, "x again");
        assertThat(other.received(sub)).extracting(Received::line)
                .containsExactly("TOPIC 3 x", "UPDATE 3 #1 x again");
    }

    @Test
    void aSnapshotHoldsEveryUpdateHandedToTheSequencerBeforeIt() throws Exception {
        EmbeddedNode leader = clusterNode();
        SequencerProxy inbound = leader.inbound();
        TopicSnapshotContent content = contentOf(leader);
        byte[] snapshot = onEngineThread(leader, 4, () -> { // three updates, then the capture: one ring, in order
            for (int seq = 1; seq <= 3; seq++) {
                inbound.applyFromCluster("t", new String[]{"t"}, seq, 1, ("t#" + seq).getBytes(StandardCharsets.UTF_8));
            }
            return written(content);
        });

        EmbeddedNode restored = clusterNode();
        takeOver(restored, snapshot);
        Session fresh = restored.session(0);
        restored.subscribe(fresh, 1, "t");
        assertThat(snapshots(restored.received(fresh))).extracting(Received::sequence, Received::text)
                .containsExactly(tuple(3L, "t#3"));
    }

    @Test
    void aDamagedSnapshotIsRefusedNamingWhatIsWrongAndTheTopicsStayAsTheyWere() throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "a/b", 1, 3);
        byte[] good = snapshotOf(leader);
        EmbeddedNode node = clusterNode();
        applyAll(node, "a/b", 1, 1);
        TopicSnapshotContent content = contentOf(node);

        byte[] badMagic = good.clone();
        badMagic[Integer.BYTES] ^= 0x55;
        byte[] longValue = good.clone(); // the last value's length, after the header, path, incarnation, sequence and history count (0)
        int entryLengthAt = Integer.BYTES + 12 + (2 + "a/b".length()) + 4 + 8 + 4;
        ByteBuffer.wrap(longValue).putInt(entryLengthAt, Integer.MAX_VALUE - 1);
        Map<String, byte[]> damaged = Map.of(
                "the snapshot ends before its topics", new byte[0],
                "the snapshot's topics claim a negative length: -1", ByteBuffer.allocate(4).putInt(-1).array(),
                "the snapshot's topics are truncated: " + (good.length - Integer.BYTES) + " bytes claimed, fewer there",
                Arrays.copyOf(good, good.length - 1),
                "the snapshot's topics are truncated: 2147483647 bytes claimed, fewer there",
                ByteBuffer.allocate(12).putInt(Integer.MAX_VALUE).array(),
                "the snapshot's topics are damaged (not a Ringcast state file (bad magic number)); none taken over",
                badMagic,
                "the snapshot's topics are damaged (truncated: last value length in a/b is 2147483646 bytes, more than the "
                        + "input holds); none taken over", longValue);
        for (Map.Entry<String, byte[]> d : damaged.entrySet()) {
            assertThatThrownBy(() -> content.read(new DataInputStream(new ByteArrayInputStream(d.getValue()))))
                    .isInstanceOf(IOException.class).hasMessage(d.getKey());
            assertThat(node.inboundPending()).as("nothing asked of the sequencer for: %s", d.getKey()).isFalse();
        }

        Session sub = node.session(0);
        node.subscribe(sub, 1, "a/b");
        assertThat(snapshots(node.received(sub))).extracting(Received::sequence, Received::text)
                .containsExactly(tuple(1L, "a/b#1"));
    }

    @Test
    void aGroupsSnapshotHoldsItsTopicsAloneAndATakeOverLeavesTheOtherGroupsTopicsAsTheyWere() throws Exception {
        EmbeddedNode leader = clusterNode();
        applyAll(leader, "fx/eur", 1, 3);
        applyAll(leader, "news/a", 1, 2);
        SnapshotContent leaderFx = fxGroupOf(leader); // before the engine thread: it makes the node's inbound ring
        byte[] snapshot = onEngineThread(leader, 1, () -> written(leaderFx));

        EmbeddedNode follower = clusterNode();
        applyAll(follower, "fx/eur", 1, 1);
        applyAll(follower, "news/a", 1, 5); // another group's topic: further on here, and not in the snapshot
        SnapshotContent followerFx = fxGroupOf(follower);
        onEngineThread(follower, 1, () -> {
            followerFx.read(new DataInputStream(new ByteArrayInputStream(snapshot)));
            return null;
        });

        Session fresh = follower.session(0);
        follower.subscribe(fresh, 1, "#");
        assertThat(snapshots(follower.received(fresh))).extracting(Received::sequence, Received::text)
                .containsExactlyInAnyOrder(tuple(3L, "fx/eur#3"), tuple(5L, "news/a#5"));
    }

    /** The node's content for a Raft group that holds the topics under {@code fx/}. */
    private static SnapshotContent fxGroupOf(EmbeddedNode node) {
        return contentOf(node).ofTopics(path -> path.startsWith("fx/"));
    }

    @Test
    void aRequestTheSequencerCouldNotAnswerFailsTheSnapshotWithItsCause() {
        TopicSnapshotRequest capture = TopicSnapshotRequest.capture(path -> true);
        capture.fail(new IllegalStateException("out of frames"));

        assertThatThrownBy(capture::await).isInstanceOf(IOException.class)
                .hasMessage("the sequencer could not capture the snapshot's topics: "
                        + "java.lang.IllegalStateException: out of frames");
    }
}
