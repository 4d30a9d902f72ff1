package io.ringcast.server.internal;

import io.netty.util.ResourceLeakDetector;
import io.ringcast.protocol.MessageType;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A subscribe reply larger than {@link Subscriptions#REPLY_WINDOW_BYTES} is produced a window at a
 * time, each once the last reached the socket, and the client still sees what docs/protocol.md
 * promises: each topic's {@code TOPIC} before anything of it, nothing of the new subscription's
 * topics before its {@code SUBSCRIBED}, then every update without gap or duplicate. The test
 * thread plays the client: {@link EmbeddedNode#deliverWindow} writes what is on the ring, and
 * {@link EmbeddedNode#continueReplies} hands the sequencer the requests for the next windows.
 * Windows are made in turns, at the end of a batch of commands ({@link Subscriptions#takeTurn}).
 */
@Timeout(60)
class StreamedRepliesTest {
    private static final String CACHE_OFF = "features: {lastValueCache: false}";
    /** One topic's part of a reply, by which a window may fall short of its size: its TOPIC and a snapshot of a value of up to 200 bytes. */
    private static final int ONE_TOPIC_BYTES = 300;

    private static String path(int i) {
        return String.format("s/topic-%05d", i);
    }

    /** Creates topics {@link #path}(0 .. n-1), each with one update of {@code valueBytes}, in that order. */
    private static void createTopics(EmbeddedNode node, int n, int valueBytes) {
        String value = "v".repeat(valueBytes);
        for (int i = 0; i < n; i++) {
            node.publish(null, 0, path(i), value);
            if (i % 500 == 499) {
                node.deliver(); // the embedded fan-out ring has 1,024 slots
            }
        }
        node.deliver();
    }

    private static int bytes(List<Received> messages) {
        return messages.stream().mapToInt(Received::wireBytes).sum();
    }

    @Test
    void subscribesOfOneBatchPastAWindowsWorthWaitForTheirTurnsAndThePublishAmongThemGoesOutFirst() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200); // about 740 KB of reply for #
            List<Session> whole = List.of(node.session(0), node.session(1), node.session(0), node.session(1));
            Session one = node.session(0);
            node.startBatch();
            for (Session s : whole) {
                node.subscribe(s, 1, "#");
            }
            node.subscribe(one, 1, path(7));
            node.publish(null, 0, path(8), "during");
            assertThat(node.counters.subscribeReplyWindowBytes()).as("the batch's replies: the first window only")
                    .isBetween((long) Subscriptions.REPLY_WINDOW_BYTES - ONE_TOPIC_BYTES, (long) Subscriptions.REPLY_WINDOW_BYTES);
            assertThat(node.counters.subscribeRepliesPending()).as("replies waiting for a turn, or streaming").isEqualTo(5);
            node.endBatch();

            for (Session s : whole) {
                List<String> got = node.received(s).stream().map(Received::line).toList();
                assertThat(got).filteredOn(m -> m.startsWith("SNAPSHOT")).hasSize(3000);
                // the first reply had reached the updated topic: its update comes after the reply
                List<String> after = got.subList(got.indexOf("SUBSCRIBED 1 3000") + 1, got.size());
                assertThat(after).allSatisfy(m -> assertThat(m).startsWith("UPDATE").endsWith("during"));
            }
            assertThat(node.received(one)).extracting(Received::line).last().isEqualTo("SUBSCRIBED 1 1");
            assertThat(node.counters.subscribeRepliesPending()).isZero();
            node.publish(null, 0, path(7), "after");
            assertThat(node.received(one)).as("its topic an ordinary membership: the update at once")
                    .extracting(Received::line).hasSize(1).first().asString().startsWith("UPDATE");
        }
    }

    @Test
    void aReplyLargerThanAWindowIsProducedAWindowAtATimeEachOnceTheLastWasWritten() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200); // about 740 KB of reply
            Session sub = node.session(0);
            node.subscribe(sub, 1, "#");
            assertThat(node.counters.subscribeRepliesPending()).isEqualTo(1);
            assertThat(node.counters.subscribeReplyWindowBytes()).as("the first window, produced and not written")
                    .isBetween((long) Subscriptions.REPLY_WINDOW_BYTES - ONE_TOPIC_BYTES, (long) Subscriptions.REPLY_WINDOW_BYTES);

            List<Received> all = new ArrayList<>();
            int windows = 0;
            while (true) {
                node.deliverWindow();
                List<Received> window = EmbeddedNode.drained(sub);
                assertThat(node.counters.subscribeReplyWindowBytes()).as("written: nothing in flight").isZero();
                assertThat(bytes(window)).as("window %d", windows)
                        .isPositive().isLessThanOrEqualTo(Subscriptions.REPLY_WINDOW_BYTES);
                windows++;
                all.addAll(window);
                node.deliverWindow();
                assertThat(EmbeddedNode.drained(sub)).as("nothing more until the client asks").isEmpty();
                if (node.continueReplies() == 0) {
                    break;
                }
            }
            assertThat(windows).isGreaterThanOrEqualTo(3);
            assertThat(all.get(all.size() - 1).line()).isEqualTo("SUBSCRIBED 1 3000");
            assertThat(all).filteredOn(m -> m.is(MessageType.SNAPSHOT)).hasSize(3000);
            new Stream(all).check();
            assertThat(node.counters.subscribeRepliesPending()).isZero();
        }
    }

    @Test
    void aReplyThatFitsAWindowIsAnsweredAtOnce() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 200, 200); // about 48 KB
            Session sub = node.session(1);
            node.subscribe(sub, 1, "#");
            assertThat(node.counters.subscribeRepliesPending()).isZero();
            node.deliverWindow();
            List<Received> got = EmbeddedNode.drained(sub);
            assertThat(got.get(got.size() - 1).line()).isEqualTo("SUBSCRIBED 1 200");
            assertThat(node.continueReplies()).as("no window waits for its write").isZero();
        }
    }

    /**
     * Updates of a topic the reply reached already, of one it reaches later, and of one created
     * while it streams: nothing of them before {@code SUBSCRIBED}, then every update once, in order.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void updatesWhileAReplyStreamsComeAfterItsSubscribedWithoutGapOrDuplicate(boolean cache) {
        int n = 40_000; // a reply of TOPICs alone takes many windows
        // the suite's paranoid leak detection records every buffer's accesses: over 40,000 topics
        // that was 15 to 20 s of this test's 20; the other tests here keep it
        ResourceLeakDetector.Level leakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
        try (EmbeddedNode node = new EmbeddedNode(cache ? "{}" : CACHE_OFF)) {
            createTopics(node, n, 10);
            Session sub = node.session(0);
            node.subscribe(sub, 1, "#");
            node.deliverWindow(); // the first window: path(0) reached, path(n - 1) not yet
            for (int round = 0; round < 2; round++) {
                node.publish(null, 0, path(0), "a" + round);
                node.publish(null, 0, path(n - 1), "z" + round);
                node.publish(null, 0, "s/new", "n" + round);
                node.continueReplies();
                node.deliverWindow();
            }
            assertThat(node.counters.subscribeRepliesPending()).as("the reply is still streaming").isEqualTo(1);
            node.deliver();
            node.publish(null, 0, path(0), "live");
            node.publish(null, 0, path(n - 1), "live");
            node.publish(null, 0, "s/new", "live");
            List<Received> got = node.received(sub);

            Stream stream = new Stream(got);
            stream.check();
            assertThat(stream.subscribedAt(1)).as("SUBSCRIBED, matching the topics there were").isPositive();
            assertThat(got.get(stream.subscribedAt(1)).sequence()).isEqualTo(n);
            assertThat(stream.firstUpdateAt()).as("no UPDATE before SUBSCRIBED").isGreaterThan(stream.subscribedAt(1));
            assertThat(stream.last(path(0))).isEqualTo(4);
            assertThat(stream.last(path(n - 1))).isEqualTo(4);
            assertThat(stream.last("s/new")).isEqualTo(3);
            if (cache) {
                assertThat(stream.messagesOf(path(0))).containsExactly("TOPIC", "SNAPSHOT 1 #1", "UPDATE #2", "UPDATE #3",
                        "UPDATE #4");
                assertThat(stream.messagesOf(path(n - 1))).as("its value when the reply reached it")
                        .containsExactly("TOPIC", "SNAPSHOT 1 #3", "UPDATE #4");
            } else {
                assertThat(stream.messagesOf(path(0))).containsExactly("TOPIC", "UPDATE #2", "UPDATE #3", "UPDATE #4");
                assertThat(stream.messagesOf(path(n - 1))).containsExactly("TOPIC", "UPDATE #4");
            }
            assertThat(stream.messagesOf("s/new")).as("created while the reply streamed: every update")
                    .containsExactly("TOPIC", "UPDATE #1", "UPDATE #2", "UPDATE #3");
        } finally {
            ResourceLeakDetector.setLevel(leakLevel);
        }
    }

    @Test
    void aResumeThatStreamsReplaysEveryTopicFromTheClientsPositionAsItIsWhenTheReplyReachesIt() {
        int n = 3000;
        try (EmbeddedNode node = new EmbeddedNode()) {
            Map<String, Long> resume = new HashMap<>();
            for (int round = 0; round < 3; round++) {
                createTopics(node, n, 100);
            }
            for (int i = 0; i < n; i++) {
                resume.put(path(i), 1L);
            }
            Session sub = node.session(1);
            node.subscribe(sub, 1, "#", resume);
            node.deliverWindow();
            node.publish(null, 0, path(n - 1), "later");
            node.deliver();
            List<Received> got = node.received(sub);

            Stream stream = new Stream(got);
            stream.check();
            assertThat(got.get(stream.subscribedAt(1)).sequence()).isEqualTo(n);
            assertThat(stream.messagesOf(path(0))).containsExactly("TOPIC", "UPDATE #2", "UPDATE #3");
            assertThat(stream.messagesOf(path(n - 1))).as("replayed up to its update while the reply streamed")
                    .containsExactly("TOPIC", "UPDATE #2", "UPDATE #3", "UPDATE #4");
        }
    }

    @Test
    void aSubscribeAndAnUnsubscribeSentWhileAReplyStreamsAreServedAfterItInTheirOrder() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200);
            for (int i = 0; i < 3; i++) {
                node.publish(null, 0, "a/x" + i, "a");
            }
            Session sub = node.session(0);
            node.subscribe(sub, 1, "#");
            node.deliverWindow();
            node.subscribe(sub, 2, "a/#");
            node.unsubscribe(sub, 1);
            node.deliver();
            List<String> lines = node.received(sub).stream().filter(m -> m.is(MessageType.SUBSCRIBED)
                    || m.is(MessageType.SNAPSHOT) && m.id() == 2).map(Received::line).toList();
            assertThat(lines).hasSize(5);
            assertThat(lines.get(0)).isEqualTo("SUBSCRIBED 1 3003");
            assertThat(lines.subList(1, 4)).containsExactlyInAnyOrder("SNAPSHOT 2 3001 #1 a", "SNAPSHOT 2 3002 #1 a",
                    "SNAPSHOT 2 3003 #1 a");
            assertThat(lines.get(4)).isEqualTo("SUBSCRIBED 2 3");
            assertThat(node.counters.subscribeRepliesPending()).isZero();

            node.publish(null, 0, path(0), "unsubscribed");
            node.publish(null, 0, "a/x0", "still");
            assertThat(node.received(sub)).extracting(Received::line).containsExactly("UPDATE 3001 #2 still");
        }
    }

    @Test
    void aSessionThatClosesWhileItsReplyStreamsHasNothingMoreProducedAndLeavesEveryTopic() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200);
            Session sub = node.session(0);
            node.subscribe(sub, 1, "#");
            node.deliverWindow();
            assertThat(EmbeddedNode.drained(sub)).isNotEmpty();
            node.closeSession(sub);
            assertThat(node.counters.subscribeRepliesPending()).isZero();
            assertThat(node.continueReplies()).as("its request for the next window, after its close").isEqualTo(1);
            node.publish(null, 0, path(0), "reached");
            node.publish(null, 0, path(2999), "not reached");
            node.deliver();
            assertThat(EmbeddedNode.drained(sub)).isEmpty();
            assertThat(node.counters.subscribeReplyWindowBytes()).isZero();
        }
    }

    @Test
    void updatesOfATopicTheSessionHadBeforeAreNotHeldAndStayInOrderWithTheSnapshotTheReplySends() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200);
            Session sub = node.session(0);
            node.subscribe(sub, 1, path(2999));
            node.subscribe(sub, 2, "#");
            node.deliverWindow();
            node.publish(null, 0, path(2999), "x1");
            node.publish(null, 0, path(2999), "x2");
            node.deliver();
            List<Received> got = node.received(sub);
            Stream stream = new Stream(got);
            stream.check();
            assertThat(stream.messagesOf(path(2999))).as("live through subscription 1 all along")
                    .containsExactly("TOPIC", "SNAPSHOT 1 #1", "UPDATE #2", "UPDATE #3", "SNAPSHOT 2 #3");
        }
    }

    @Test
    void aPublisherWhoseReplyStreamsGetsItsUpdatesBeforeTheirAcksAndItsAcksInOrder() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200);
            Session sub = node.session(1);
            node.subscribe(sub, 1, "#");
            node.deliverWindow();
            node.publish(sub, 7, path(0), "mine"); // a topic the reply joined: its update waits for SUBSCRIBED
            node.publish(sub, 8, "elsewhere/new", "mine too");
            node.deliver();
            List<String> after = new ArrayList<>();
            boolean subscribed = false;
            for (Received m : node.received(sub)) {
                subscribed |= m.is(MessageType.SUBSCRIBED);
                if (m.is(MessageType.PUBLISH_ACK)) {
                    assertThat(subscribed).as("acks wait behind the updates held for the reply").isTrue();
                }
                if (subscribed && !m.is(MessageType.TOPIC)) {
                    after.add(m.line());
                }
            }
            assertThat(after).containsExactlyInAnyOrder("SUBSCRIBED 1 3000", "UPDATE 1 #2 mine", "PUBLISH_ACK 7 #2",
                    "UPDATE 3001 #1 mine too", "PUBLISH_ACK 8 #1");
            assertThat(after.indexOf("UPDATE 1 #2 mine")).isLessThan(after.indexOf("PUBLISH_ACK 7 #2"));
            assertThat(after.indexOf("UPDATE 3001 #1 mine too")).isLessThan(after.indexOf("PUBLISH_ACK 8 #1"));
            assertThat(after.indexOf("PUBLISH_ACK 7 #2")).isLessThan(after.indexOf("PUBLISH_ACK 8 #1"));
        }
    }

    /**
     * One session's messages, checked as a client would: every SNAPSHOT and UPDATE after its topic's
     * TOPIC, and per topic no sequence twice and none skipped from the first one on.
     */
    /**
     * Topics removed while a reply streams over them: those it reached are in the reply and then
     * removed (after its {@code SUBSCRIBED}, in order), those it had not reached are left out, and the
     * creation order is compacted only once no reply walks it.
     */
    @Test
    void topicsRemovedWhileAReplyStreamsAreToldAfterItOrLeftOut() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            createTopics(node, 3000, 200);
            Session sub = node.session(0);
            Session admin = node.session(1);
            node.subscribe(sub, 1, "#");
            node.deliverWindow();
            List<Received> all = new ArrayList<>(EmbeddedNode.drained(sub));
            int reached = (int) all.stream().filter(m -> m.is(MessageType.TOPIC)).count();
            assertThat(reached).as("the first window reached some topics, not all").isBetween(1, 2999);
            node.remove(admin, 9, "s/#"); // every topic: the reached ones and those still ahead
            node.deliver();
            assertThat(EmbeddedNode.drained(admin)).extracting(Received::line).containsExactly("REMOVED 9 3000");
            assertThat(node.counters.topics()).isZero();
            while (node.continueReplies() > 0) {
                node.deliverWindow();
                all.addAll(EmbeddedNode.drained(sub));
            }
            node.deliver();
            all.addAll(EmbeddedNode.drained(sub));
            List<String> lines = all.stream().map(Received::line).toList();
            int subscribed = lines.indexOf("SUBSCRIBED 1 " + reached);
            assertThat(subscribed).as("SUBSCRIBED counts the topics the reply reached: %s", lines.subList(
                    Math.max(0, lines.size() - 3), lines.size())).isPositive();
            assertThat(all.subList(0, subscribed)).filteredOn(m -> m.is(MessageType.TOPIC)).hasSize(reached);
            assertThat(all.subList(subscribed + 1, all.size())).as("each reached topic's removal, after the reply")
                    .hasSize(reached).allMatch(m -> m.is(MessageType.TOPIC_REMOVED));
            // the tree kept the removed topics' places while the reply walked them; now it may drop them
            node.publish(null, 0, "fresh", "v");
            node.remove(null, 0, "fresh");
            node.deliver();
            node.subscribe(sub, 2, "#");
            node.deliver();
            assertThat(EmbeddedNode.drained(sub)).extracting(Received::line).containsExactly(
                    "TOPIC 3001 fresh", "UPDATE 3001 #1 v", "TOPIC_REMOVED 3001 #1", // through subscription 1, on #
                    "SUBSCRIBED 2 0");
        }
    }

    private static final class Stream {
        private final List<Received> messages;
        private final Map<Integer, String> paths = new HashMap<>();
        private final Map<String, List<String>> byTopic = new HashMap<>();
        private final Map<String, Long> last = new HashMap<>();

        Stream(List<Received> messages) {
            this.messages = messages;
        }

        void check() {
            for (Received m : messages) {
                if (m.is(MessageType.TOPIC)) {
                    paths.put(m.alias(), m.text());
                    byTopic.computeIfAbsent(m.text(), p -> new ArrayList<>()).add("TOPIC");
                } else if (m.is(MessageType.SNAPSHOT) || m.is(MessageType.UPDATE)) {
                    String path = paths.get(m.alias());
                    assertThat(path).as("a TOPIC before %s", m).isNotNull();
                    Long before = last.get(path);
                    if (m.is(MessageType.UPDATE) && before != null) {
                        assertThat(m.sequence()).as("%s after #%d of %s", m, before, path).isEqualTo(before + 1);
                    }
                    if (m.is(MessageType.SNAPSHOT) && before != null) {
                        assertThat(m.sequence()).as("%s after #%d of %s", m, before, path).isGreaterThanOrEqualTo(before);
                    }
                    last.put(path, m.sequence());
                    byTopic.computeIfAbsent(path, p -> new ArrayList<>()).add(m.is(MessageType.UPDATE)
                            ? "UPDATE #" + m.sequence() : "SNAPSHOT " + m.id() + " #" + m.sequence());
                }
            }
        }

        int subscribedAt(int subscriptionId) {
            for (int i = 0; i < messages.size(); i++) {
                if (messages.get(i).is(MessageType.SUBSCRIBED) && messages.get(i).id() == subscriptionId) {
                    return i;
                }
            }
            return -1;
        }

        int firstUpdateAt() {
            for (int i = 0; i < messages.size(); i++) {
                if (messages.get(i).is(MessageType.UPDATE)) {
                    return i;
                }
            }
            return Integer.MAX_VALUE;
        }

        long last(String path) {
            return last.getOrDefault(path, 0L);
        }

        List<String> messagesOf(String path) {
            return byTopic.getOrDefault(path, List.of());
        }
    }
}
