package io.ringcast.it;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Topics that go away (docs/protocol.md, "Removing topics"), on a real server over real sockets:
 * removed by a session's {@code REMOVE} or by {@code POST /api/remove}, or expired by
 * {@code expireAfterMs}; subscribers told, and a later publish starting a new incarnation that a
 * resume cannot confuse with the old one.
 */
@Timeout(60)
class TopicRemovalTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aSubscriberIsToldOfTheRemovalAndTheNextPublishStartsANewIncarnationFromSequenceOne() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "t/#");
            sub.await("SUBSCRIBED");
            for (int i = 1; i <= 3; i++) {
                pub.publish(i, "t/a", "v" + i);
            }
            pub.publish(4, "t/b", "kept");
            awaitCount(sub, "UPDATE", 4);
            RawWebSocket.Msg first = sub.await("TOPIC");

            pub.remove(5, "t/a");
            assertThat(awaitCount(pub, "REMOVED", 1).get(0).b()).as("topics removed").isEqualTo(1);
            RawWebSocket.Msg removed = sub.await("TOPIC_REMOVED");
            assertThat(removed.a()).as("alias").isEqualTo(first.a());
            assertThat(removed.b()).as("last sequence").isEqualTo(3);
            assertThat(server.stats().get(io.ringcast.server.ServerCounter.TOPICS)).isEqualTo(1);

            pub.publish(6, "t/a", "again");
            List<RawWebSocket.Msg> updates = awaitCount(sub, "UPDATE", 5);
            RawWebSocket.Msg again = updates.get(4);
            assertThat(again.b()).as("the new incarnation's first sequence").isEqualTo(1);
            RawWebSocket.Msg definition = sub.all("TOPIC").stream().filter(t -> t.a() == again.a()).findFirst()
                    .orElseThrow();
            assertThat(definition.text()).isEqualTo("t/a");
            assertThat(definition.a()).as("a new alias").isNotEqualTo(first.a());
            assertThat(definition.flags()).as("a new incarnation").isNotEqualTo(first.flags()).isNotZero();
        }
    }

    @Test
    void aRemovalOfASubtreeRemovesEveryTopicUnderItAndNothingElse() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            for (int i = 0; i < 100; i++) {
                pub.publish(i, "tmp/" + i + "/x", "v");
            }
            pub.publish(100, "keep/x", "v");
            awaitCount(pub, "PUBLISH_ACK", 101);
            pub.remove(200, "tmp/#");
            assertThat(awaitCount(pub, "REMOVED", 1).get(0).b()).isEqualTo(100);
            assertThat(server.stats().get(io.ringcast.server.ServerCounter.TOPICS)).isEqualTo(1);
            pub.remove(201, "nothing/#");
            assertThat(awaitCount(pub, "REMOVED", 2).get(1).b()).as("a selector that matches nothing").isZero();
        }
    }

    @Test
    void aRemovalTheRolesCannotGrantIsRefusedAndABadSelectorNamed() throws Exception {
        String security = "security:\n  anonymousRoles: [\"reader\"]\n  roles:\n    - name: \"reader\"\n"
                + "      subscribe: [\"#\"]\n      publish: [\"mine/#\"]\n";
        try (RingcastServer server = TestServers.start(security);
             RawWebSocket s = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            s.remove(7, "theirs/#");
            RawWebSocket.Msg refused = s.await("ERROR");
            assertThat(ErrorCode.of(refused.a())).isEqualTo(ErrorCode.PERMISSION_DENIED);
            assertThat(refused.b()).as("correlation id").isEqualTo(7);
            assertThat(refused.text()).contains("theirs/#");
            s.remove(8, "a/#/b");
            RawWebSocket.Msg bad = awaitCount(s, "ERROR", 2).get(1);
            assertThat(ErrorCode.of(bad.a())).isEqualTo(ErrorCode.INVALID_SELECTOR);
            assertThat(bad.b()).isEqualTo(8);
        }
    }

    @Test
    void aSubscriberThroughAViewIsToldToo() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            pub.publish(1, "v/a", "{\"p\": 1}");
            awaitCount(pub, "PUBLISH_ACK", 1);
            sub.send(out -> WireCodec.writeSubscribe(out, 1, "v/#", Map.of(),
                    SubscribeOptions.builder().fields("p").build()));
            sub.await("SUBSCRIBED");
            pub.remove(2, "v/a");
            RawWebSocket.Msg removed = sub.await("TOPIC_REMOVED");
            assertThat(removed.a()).isEqualTo(sub.await("TOPIC").a());
            assertThat(removed.b()).isEqualTo(1);
        }
    }

    /**
     * A client away while its topic was removed and made again resumes with the old incarnation:
     * it gets the new one from its first update, not from the sequence it had of the old (which
     * the new one passed).
     */
    @Test
    void aResumeOfAnOldIncarnationGetsTheNewOneFromItsFirstUpdate() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            int oldIncarnation;
            try (RawWebSocket before = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                before.subscribe(1, "r/#");
                before.await("SUBSCRIBED");
                pub.publish(1, "r/a", "old1");
                pub.publish(2, "r/a", "old2");
                awaitCount(before, "UPDATE", 2);
                oldIncarnation = before.await("TOPIC").flags();
            }
            pub.remove(3, "r/a");
            awaitCount(pub, "REMOVED", 1);
            for (int i = 1; i <= 4; i++) {
                pub.publish(10 + i, "r/a", "new" + i);
            }
            awaitCount(pub, "PUBLISH_ACK", 6);

            try (RawWebSocket back = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                back.send(out -> WireCodec.writeSubscribe(out, 1, "r/#", Map.of("r/a", 2L),
                        SubscribeOptions.NONE.withIncarnations(new int[] {oldIncarnation})));
                back.await("SUBSCRIBED");
                assertThat(back.all("UPDATE").stream().map(m -> new String(m.value(), StandardCharsets.UTF_8))
                        .collect(Collectors.toList())).as("the new incarnation replayed from 1")
                        .containsExactly("new1", "new2", "new3", "new4");
                assertThat(back.await("TOPIC").flags()).as("its incarnation").isNotEqualTo(oldIncarnation);
            }
            // without the incarnation the same position is taken for one of the new topic: 3 and 4 only
            try (RawWebSocket byNumber = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                byNumber.send(out -> WireCodec.writeSubscribe(out, 1, "r/#", Map.of("r/a", 2L)));
                byNumber.await("SUBSCRIBED");
                assertThat(byNumber.all("UPDATE")).extracting(RawWebSocket.Msg::b).containsExactly(3L, 4L);
            }
        }
    }

    @Test
    void aTopicNotPublishedForItsExpireAfterMsIsRemovedAndOneKeptBusyStays() throws Exception {
        String features = "features:\n  overrides:\n    - selector: \"tmp/#\"\n      expireAfterMs: 300\n";
        try (RingcastServer server = TestServers.start(features);
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "#");
            sub.await("SUBSCRIBED");
            pub.publish(1, "tmp/idle", "v");
            pub.publish(2, "keep/x", "v");
            awaitCount(pub, "PUBLISH_ACK", 2);
            long start = System.nanoTime();
            int n = 3;
            // tmp/busy is published every 50 ms, well within its 300 ms, until tmp/idle has expired
            while (sub.all("TOPIC_REMOVED").isEmpty()) {
                pub.publish(n++, "tmp/busy", "v");
                Thread.sleep(50); // the publisher's pace, not a wait for an outcome
                assertThat(System.nanoTime() - start).as("tmp/idle expired within 10 s")
                        .isLessThan(Duration.ofSeconds(10).toNanos());
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not before its time")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(250));
            RawWebSocket.Msg removed = sub.await("TOPIC_REMOVED");
            String path = sub.all("TOPIC").stream().filter(t -> t.a() == removed.a()).findFirst().orElseThrow().text();
            assertThat(path).isEqualTo("tmp/idle");
            assertThat(server.stats().get(io.ringcast.server.ServerCounter.TOPICS)).as("keep/x and tmp/busy").isEqualTo(2);
            Await.until(() -> sub.all("TOPIC_REMOVED").size() == 2, "tmp/busy expired once its publisher stopped");
            assertThat(server.stats().get(io.ringcast.server.ServerCounter.TOPICS)).isEqualTo(1);
        }
    }

    @Test
    void anHttpRemovalAnswersWithTheCountAndNamesABadBody() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            pub.publish(1, "h/a", "v");
            pub.publish(2, "h/b", "v");
            awaitCount(pub, "PUBLISH_ACK", 2);
            HttpResponse<String> ok = post(server, "{\"selector\": \"h/#\"}");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("{\"selector\":\"h/#\",\"removed\":2}");
            HttpResponse<String> bad = post(server, "{\"topic\": \"h/a\"}");
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("unknown field \\\"topic\\\"");
            HttpResponse<String> badSelector = post(server, "{\"selector\": \"h/#/x\"}");
            assertThat(badSelector.statusCode()).isEqualTo(400);
            assertThat(badSelector.body()).contains("INVALID_SELECTOR");
        }
    }

    @Test
    void aNodeWhoseTopicsMostlyWentAsksOnceToGiveItsHeapBack() throws Exception {
        int topics = 12_000; // over HeapGiveBack's 10,000
        try (RingcastServer server = TestServers.start("");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            for (int i = 1; i <= topics; i++) {
                pub.publish(i, "g/" + i, "v");
            }
            awaitCount(pub, "PUBLISH_ACK", topics);
            pub.publish(topics + 1, "kept/x", "v");
            awaitCount(pub, "PUBLISH_ACK", topics + 1);
            assertThat(server.stats().get(io.ringcast.server.ServerCounter.HEAP_GIVE_BACKS)).isZero();
            assertThat(post(server, "{\"selector\": \"g/#\"}").body()).contains("\"removed\":" + topics);
            Await.until(() -> server.stats().get(io.ringcast.server.ServerCounter.HEAP_GIVE_BACKS) == 1,
                    "a full collection asked for once the topics went");
            assertThat(server.stats().get(io.ringcast.server.ServerCounter.TOPICS)).isEqualTo(1);
        }
    }

    private static HttpResponse<String> post(RingcastServer server, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/api/remove"))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Waits until the socket has {@code n} messages of {@code type}, and returns them. */
    private static List<RawWebSocket.Msg> awaitCount(RawWebSocket s, String type, int n) {
        return Await.value(() -> {
            List<RawWebSocket.Msg> all = s.all(type);
            return all.size() >= n ? all : null;
        }, () -> n + " " + type + " messages; got " + s.all(type).size() + " of " + s.messages.size() + " messages");
    }
}
