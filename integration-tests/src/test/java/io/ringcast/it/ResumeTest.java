package io.ringcast.it;

import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import io.ringcast.testkit.FreePorts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.ServerCounter.DELTAS_SENT;
import static io.ringcast.server.ServerCounter.PUBLISHES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A subscriber's network fails (a proxy between it and the server is cut, or its connection is
 * killed) while publishing goes on; the client reconnects and resumes. History covers 16 updates
 * per topic here. Topics created while the client was away are replayed from their first update,
 * or flagged as a gap: never passed off as a plain snapshot.
 */
@Timeout(60)
class ResumeTest {
    static final int HISTORY = 16;
    static RingcastServer server;
    static RingcastClient publisher;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start("history:\n  length: " + HISTORY + "\n"
                + "features:\n  overrides:\n    - selector: \"resume/deltas/#\"\n      deltas: true\n"
                + "    - selector: \"resume/nocache/#\"\n      lastValueCache: false\n");
        publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build();
        publisher.connect().get(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        publisher.close();
        server.close();
    }

    private static void publish(String topic, int from, int to) throws Exception {
        for (int i = from; i <= to; i++) {
            assertThat(publisher.publish(topic, value(topic, i).getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS)).isEqualTo(i);
        }
    }

    /** Value {@code i} of {@code topic}: "v" + i, or a 200-byte record under resume/deltas/, which deltas shrink. */
    private static String value(String topic, int i) {
        return topic.startsWith("resume/deltas/") ? FeatureTogglesTest.record(i) : "v" + i;
    }

    /** Cuts the subscriber off, publishes {@code missed} updates, lets it back, and returns what it got. */
    private static List<Recorded.Got> cutPublishResume(String topic, int missed) throws Exception {
        try (CutOffSubscriber subscriber = new CutOffSubscriber(server)) {
            Recorded r = subscriber.subscribe(topic);
            publish(topic, 1, 10);
            Await.until(() -> r.lastSequence(topic) == 10, "the first 10 updates");

            subscriber.cut();
            publish(topic, 11, 10 + missed);
            subscriber.letBack();

            Await.until(() -> r.lastSequence(topic) == 10 + missed, "the resume to reach the newest update");
            publish(topic, 11 + missed, 15 + missed);
            Await.until(() -> r.lastSequence(topic) == 15 + missed, "live updates after the resume");
            return r.of(topic);
        }
    }

    @Test
    void resumeWithinHistoryReplaysMissedUpdatesWithoutGap() throws Exception {
        List<Recorded.Got> got = cutPublishResume("resume/within", HISTORY - 2);
        assertThat(got).extracting(Recorded.Got::sequence)
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, 10 + HISTORY - 2 + 5)
                        .boxed().toList());
        assertThat(got).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        assertThat(got.get(10).text()).isEqualTo("v11");
    }

    @Test
    void resumePastHistoryGetsSnapshotAfterGap() throws Exception {
        int missed = HISTORY * 3;
        List<Recorded.Got> got = cutPublishResume("resume/past", missed);
        assertThat(got.subList(0, 10)).extracting(Recorded.Got::sequence)
                .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        Recorded.Got gap = got.get(10);
        assertThat(gap.kind()).isEqualTo(UpdateKind.SNAPSHOT_AFTER_GAP);
        assertThat(gap.sequence()).isEqualTo(10 + missed);
        assertThat(gap.text()).isEqualTo("v" + (10 + missed));
        assertThat(got.subList(11, got.size())).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        assertThat(got.subList(11, got.size())).extracting(Recorded.Got::sequence)
                .containsExactly(11L + missed, 12L + missed, 13L + missed, 14L + missed, 15L + missed);
    }

    /** Replayed history holds deltas: each applies to the value before it, and the client sees full values. */
    @Test
    void resumeReplaysDeltasOntoTheLastValueTheClientHas() throws Exception {
        long deltasBefore = server.stats().get(DELTAS_SENT);
        String topic = "resume/deltas/a";
        List<Recorded.Got> got = cutPublishResume(topic, HISTORY - 2);

        assertThat(got).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i).sequence()).isEqualTo(i + 1);
            assertThat(got.get(i).text()).isEqualTo(value(topic, i + 1));
        }
        assertThat(server.stats().get(DELTAS_SENT) - deltasBefore).as("updates sent as deltas").isEqualTo(got.size() - 1);
    }

    // ------------------------------------------------------------------ topics created while the client was away

    /**
     * A raw peer subscribes to {@code selector} and receives update #1 of {@code known}; its
     * connection is killed; {@code fresh} is created with {@code updates} updates meanwhile; a new
     * connection sends the subscription again with its resume list ({@code known} at #1). Returns
     * what that connection got for {@code fresh} after its {@code TOPIC}, in order.
     */
    private static List<RawWebSocket.Msg> rawResumeAfterNewTopic(String selector, String known, String fresh,
                                                                 int updates) throws Exception {
        try (RawWebSocket first = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            first.subscribe(1, selector);
            first.await("SUBSCRIBED");
            publish(known, 1, 1);
            first.await("UPDATE");
        } // close() aborts the connection
        publish(fresh, 1, updates);
        try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            again.send(out -> WireCodec.writeSubscribe(out, 1, selector, Map.of(known, 1L)));
            again.await("SUBSCRIBED");
            List<RawWebSocket.Msg> got = again.messages;
            int topicAt = java.util.stream.IntStream.range(0, got.size())
                    .filter(i -> got.get(i).type().equals("TOPIC") && got.get(i).text().equals(fresh))
                    .findFirst().orElseThrow(() -> new AssertionError("no TOPIC for " + fresh + " in " + got));
            int alias = got.get(topicAt).a();
            return got.subList(topicAt + 1, got.size()).stream()
                    .filter(m -> (m.type().equals("UPDATE") || m.type().equals("SNAPSHOT")) && m.a() == alias)
                    .toList();
        }
    }

    private static String text(RawWebSocket.Msg m) {
        return new String(m.value(), StandardCharsets.UTF_8);
    }

    @Test
    void rawResumeReplaysATopicCreatedWhileAwayFromItsFirstUpdate() throws Exception {
        List<RawWebSocket.Msg> got = rawResumeAfterNewTopic("resume/raw1/#", "resume/raw1/known",
                "resume/raw1/new", 3);
        assertThat(got).extracting(RawWebSocket.Msg::type, RawWebSocket.Msg::b, RawWebSocket.Msg::flags,
                ResumeTest::text).containsExactly(tuple("UPDATE", 1L, 0, "v1"), tuple("UPDATE", 2L, 0, "v2"),
                tuple("UPDATE", 3L, 0, "v3"));
    }

    @Test
    void rawResumeGetsASnapshotAfterGapForATopicCreatedWhileAwayPastHistory() throws Exception {
        int updates = HISTORY + 3;
        List<RawWebSocket.Msg> got = rawResumeAfterNewTopic("resume/raw2/#", "resume/raw2/known",
                "resume/raw2/new", updates);
        assertThat(got).extracting(RawWebSocket.Msg::type, RawWebSocket.Msg::b, RawWebSocket.Msg::flags,
                ResumeTest::text, RawWebSocket.Msg::text)
                .as("to every matching subscription (id 0)")
                .containsExactly(tuple("SNAPSHOT", (long) updates, UpdateFlags.GAP, "v" + updates, "0"));
    }

    @Test
    void rawResumeIsToldOfTheGapWithoutAValueForATopicCreatedWhileAwayThatKeepsNone() throws Exception {
        List<RawWebSocket.Msg> got = rawResumeAfterNewTopic("resume/nocache/#", "resume/nocache/known",
                "resume/nocache/new", 3);
        assertThat(got).extracting(RawWebSocket.Msg::type, RawWebSocket.Msg::b, RawWebSocket.Msg::flags,
                ResumeTest::text).containsExactly(tuple("SNAPSHOT", 3L, UpdateFlags.GAP | UpdateFlags.NO_VALUE, ""));
    }

    /**
     * The Java subscriber to {@code selector} has 10 updates of {@code known}, is cut off while
     * {@code fresh} is created with {@code updates} updates, comes back and resumes; returns what
     * it got of {@code fresh}, after 2 more live updates.
     */
    private static List<Recorded.Got> resumeAfterNewTopic(String selector, String known, String fresh, int updates)
            throws Exception {
        try (CutOffSubscriber subscriber = new CutOffSubscriber(server)) {
            Recorded r = subscriber.subscribe(selector);
            publish(known, 1, 10);
            Await.until(() -> r.lastSequence(known) == 10, "the first 10 updates");

            subscriber.cut();
            publish(fresh, 1, updates);
            subscriber.letBack();

            Await.until(() -> r.lastSequence(fresh) == updates, "the resume to bring the new topic");
            publish(fresh, updates + 1, updates + 2);
            Await.until(() -> r.lastSequence(fresh) == updates + 2, "live updates after the resume");
            assertThat(r.of(known)).hasSize(10);
            return r.of(fresh);
        }
    }

    @Test
    void topicCreatedWhileAwayReachesTheJavaClientAsUpdatesFromTheFirst() throws Exception {
        List<Recorded.Got> got = resumeAfterNewTopic("resume/java1/#", "resume/java1/known", "resume/java1/new", 3);
        assertThat(got).extracting(Recorded.Got::sequence, Recorded.Got::kind, Recorded.Got::text).containsExactly(
                tuple(1L, UpdateKind.UPDATE, "v1"), tuple(2L, UpdateKind.UPDATE, "v2"), tuple(3L, UpdateKind.UPDATE, "v3"),
                tuple(4L, UpdateKind.UPDATE, "v4"), tuple(5L, UpdateKind.UPDATE, "v5"));
    }

    @Test
    void topicCreatedWhileAwayPastHistoryReachesTheJavaClientAsASnapshotAfterGap() throws Exception {
        int updates = HISTORY + 3;
        List<Recorded.Got> got = resumeAfterNewTopic("resume/java2/#", "resume/java2/known", "resume/java2/new",
                updates);
        assertThat(got).extracting(Recorded.Got::sequence, Recorded.Got::kind, Recorded.Got::text).containsExactly(
                tuple((long) updates, UpdateKind.SNAPSHOT_AFTER_GAP, "v" + updates),
                tuple(updates + 1L, UpdateKind.UPDATE, "v" + (updates + 1)),
                tuple(updates + 2L, UpdateKind.UPDATE, "v" + (updates + 2)));
    }

    /**
     * With a 4 KiB frame limit, the resume list of 30 topics with long paths is cut to about 18; the
     * server replays the ones left out from #1, and the client drops what it had already instead of
     * delivering it twice: each topic's updates reach the listener exactly once each.
     */
    @Test
    void topicsLeftOutOfACutResumeListAreReplayedAndTheJavaClientDropsWhatItHadAlready() throws Exception {
        int topics = 30;
        String prefix = "resume/cut/" + "x".repeat(200) + "/";
        try (RingcastServer small = TestServers.start("limits:\n  maxFrameBytes: 4096\n");
             RingcastClient smallPublisher = RingcastClient.builder().addresses(small.webSocketUrl()).build();
             CutOffSubscriber subscriber = new CutOffSubscriber(small)) {
            smallPublisher.connect().get(10, TimeUnit.SECONDS);
            Recorded r = subscriber.subscribe("resume/cut/#");
            publishToEach(smallPublisher, prefix, topics, 1);
            Await.until(() -> r.updates.size() == topics, "update #1 of every topic");

            subscriber.cut();
            publishToEach(smallPublisher, prefix, topics, 2);
            subscriber.letBack();

            Await.until(() -> r.updates.size() >= 2 * topics, "update #2 of every topic");
            publishToEach(smallPublisher, prefix, topics, 3);
            Await.until(() -> r.updates.size() >= 3 * topics, "update #3 of every topic");
            for (int t = 0; t < topics; t++) {
                assertThat(r.of(prefix + t)).as(prefix + t)
                        .extracting(Recorded.Got::sequence, Recorded.Got::kind)
                        .containsExactly(tuple(1L, UpdateKind.UPDATE), tuple(2L, UpdateKind.UPDATE),
                                tuple(3L, UpdateKind.UPDATE));
            }
        }
    }

    /** Publishes update {@code sequence} ("v" + sequence) to each of {@code topics} topics under {@code prefix}. */
    private static void publishToEach(RingcastClient publisher, String prefix, int topics, long sequence)
            throws Exception {
        for (int t = 0; t < topics; t++) {
            publishAcked(publisher, prefix + t, sequence);
        }
    }

    /** Publishes update {@code sequence} ("v" + sequence) of {@code topic} and checks that it got that sequence. */
    private static void publishAcked(RingcastClient publisher, String topic, long sequence) throws Exception {
        assertThat(publisher.publish(topic, ("v" + sequence).getBytes(StandardCharsets.UTF_8))
                .get(10, TimeUnit.SECONDS)).isEqualTo(sequence);
    }

    /**
     * Three cluster nodes in this process. The subscriber is on a follower and can reach the
     * other nodes only through a proxy, kept shut while its node stops and a topic is created
     * (through the leader, so no election is in the way); it then resumes on another node, which
     * has the same history under the same sequences and replays the topic from #1.
     */
    @Test
    @Timeout(120)
    void topicCreatedWhileAwayIsReplayedFromItsFirstUpdateByTheClusterNodeTheClientFailsOverTo(@TempDir Path data)
            throws Exception {
        StringBuilder members = new StringBuilder("  members:\n");
        for (int node = 1; node <= 3; node++) {
            members.append("    - {name: node-").append(node).append(", host: 127.0.0.1").append(node)
                    .append(", membershipPort: ").append(FreePorts.pick()).append("}\n");
        }
        // each start returns once its node has caught up, which needs the others: all at once
        List<CompletableFuture<RingcastServer>> starting = new ArrayList<>();
        for (int node = 1; node <= 3; node++) {
            String yaml = "cluster:\n  enabled: true\n  nodeName: node-" + node + "\n  commitFsync: false\n"
                    + "  dataDir: \"" + data.resolve("node-" + node) + "\"\n" + members;
            starting.add(CompletableFuture.supplyAsync(() -> startNode(yaml)));
        }
        List<RingcastServer> nodes = new ArrayList<>();
        try {
            for (CompletableFuture<RingcastServer> node : starting) {
                nodes.add(node.get(60, TimeUnit.SECONDS));
            }
            int leader = Await.value(() -> leaderIndex(nodes.get(0)), () -> "a leader named in node-1's /health");
            RingcastServer left = nodes.get((leader + 1) % 3);
            RingcastServer resumedOn = nodes.get((leader + 2) % 3);
            try (CuttableProxy toOther = new CuttableProxy(resumedOn.port());
                 RingcastClient leaderPublisher = RingcastClient.builder()
                         .addresses(nodes.get(leader).webSocketUrl()).build();
                 RingcastClient subscriber = RingcastClient.builder()
                         .addresses(left.webSocketUrl(), toOther.webSocketUrl())
                         .reconnectDelay(Duration.ofMillis(20), Duration.ofMillis(200)).build()) {
                leaderPublisher.connect().get(10, TimeUnit.SECONDS);
                subscriber.connect().get(10, TimeUnit.SECONDS);
                Recorded r = new Recorded();
                subscriber.subscribe("failover/#", r).confirmed().get(10, TimeUnit.SECONDS);
                publishAcked(leaderPublisher, "failover/known", 1);
                Await.until(() -> r.lastSequence("failover/known") == 1, "the known topic's update");

                toOther.refuse(true);
                left.close();
                Await.until(() -> subscriber.state() != ConnectionState.CONNECTED, "the client to lose its node");
                for (long seq = 1; seq <= 3; seq++) {
                    publishAcked(leaderPublisher, "failover/new", seq);
                }
                Await.until(() -> resumedOn.stats().get(PUBLISHES) >= 4, "the other node to apply the new topic");
                toOther.refuse(false);

                Await.until(() -> r.lastSequence("failover/new") == 3, "the resume on the other node");
                assertThat(r.of("failover/new")).extracting(Recorded.Got::sequence, Recorded.Got::kind)
                        .containsExactly(tuple(1L, UpdateKind.UPDATE), tuple(2L, UpdateKind.UPDATE),
                                tuple(3L, UpdateKind.UPDATE));
            }
        } finally {
            nodes.forEach(RingcastServer::close);
        }
    }

    private static RingcastServer startNode(String clusterYaml) {
        try {
            return TestServers.start(clusterYaml);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Which of the three nodes (0-based) the {@code /health} of {@code node} names the Raft leader, or null. */
    private static Integer leaderIndex(RingcastServer node) {
        try {
            String health = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + node.port() + "/health")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"leader\":\"node-(\\d)\"").matcher(health);
            return m.find() ? Integer.parseInt(m.group(1)) - 1 : null;
        } catch (java.io.IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
