package io.ringcast.it;

import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.ServerCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.ringcast.server.ServerCounter.SESSIONS;
import static io.ringcast.server.ServerCounter.TOPICS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limits added for hostile or careless clients: each refuses with its own error code, counts
 * in {@code ringcast_errors{code=...}}, and harms no other session: a bystander subscriber keeps
 * receiving throughout. (Frame size, path, subscription count and handshake timeout: BadInputTest.)
 */
@Timeout(60)
class LimitsTest {

    /** A subscriber of {@code #} that checks, on demand, that it still receives. */
    private static final class Bystander implements AutoCloseable {
        private final RawWebSocket ws;
        private int probes;

        Bystander(RingcastServer server) throws Exception {
            ws = RawWebSocket.connectAndHello(server.webSocketUrl());
            ws.subscribe(1, "bystander/#");
            ws.await("SUBSCRIBED");
        }

        void stillReceives(RawWebSocket publisher, int correlationId) {
            int n = ++probes;
            publisher.publish(correlationId, "bystander/probe", "probe " + n);
            Await.until(() -> ws.all("UPDATE").stream()
                    .anyMatch(m -> ("probe " + n).equals(new String(m.value(), StandardCharsets.UTF_8))),
                    "the bystander to receive probe " + n);
        }

        @Override
        public void close() {
            ws.close();
        }
    }

    private static long errorsCounted(RingcastServer server, ErrorCode code) throws Exception {
        String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        String prefix = "ringcast_errors_total{code=\"" + code.name() + "\"} ";
        return metrics.lines().filter(l -> l.startsWith(prefix))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(prefix.length()))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + prefix + " in /metrics"));
    }

    private static RawWebSocket.Msg errorFor(RawWebSocket ws, int correlationId) {
        return Await.value(() -> ws.all("ERROR").stream().filter(m -> m.b() == correlationId).findFirst().orElse(null),
                () -> "an ERROR for request " + correlationId);
    }

    @Test
    // "try": the third session is closed inside its try block on purpose, to make room for another
    @SuppressWarnings("try")
    void connectionBeyondMaxConnectionsIsToldToTryLaterAndTheOthersCarryOn() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  maxConnections: 3\n");
             Bystander bystander = new Bystander(server);
             RawWebSocket second = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket third = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket fourth = RawWebSocket.connect(server.webSocketUrl())) {
            RawWebSocket.Msg error = fourth.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_CONNECTIONS);
            assertThat(error.text()).contains("limits.maxConnections = 3");
            assertThat(fourth.awaitClose()).isEqualTo(1013);
            bystander.stillReceives(second, 1);

            third.close();
            Await.until(() -> server.stats().get(SESSIONS) == 2, "the third session to end");
            try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                bystander.stillReceives(again, 2);
            }
            assertThat(errorsCounted(server, ErrorCode.TOO_MANY_CONNECTIONS)).isEqualTo(1);
        }
    }

    /**
     * Anonymous sessions are one principal, with at most {@code limits.maxConnectionsPerPrincipal}
     * sessions: one more is refused with {@code TOO_MANY_CONNECTIONS} naming the key, a user who
     * logs in is still welcomed, and a place an anonymous session leaves is taken again. The two
     * anonymous sessions of a witness keep receiving.
     */
    @Test
    // "try": the fourth session is closed inside its try block on purpose, to make room for another
    @SuppressWarnings("try")
    void anonymousSessionsTakeTheirShareOfPlacesAndAUserWhoLogsInIsStillWelcomed() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  maxConnections: 8\n  maxConnectionsPerPrincipal: 4\n"
                + TestServers.OPEN_WITH_ALICE);
             Witness witness = Witness.start(server);
             RawWebSocket third = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket fourth = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket fifth = RawWebSocket.connect(server.webSocketUrl())) {
            fifth.send(out -> WireCodec.writeHello(out, WireCodec.VERSION, "fifth", Credentials.ANONYMOUS, 0));
            RawWebSocket.Msg error = fifth.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_CONNECTIONS);
            assertThat(error.text()).contains("anonymous has 4 sessions open", "limits.maxConnectionsPerPrincipal");
            assertThat(fifth.awaitClose()).isEqualTo(1013);
            assertThat(fifth.all("WELCOME")).isEmpty();

            try (RawWebSocket alice = RawWebSocket.connectAndHello(server.webSocketUrl(),
                    Credentials.password("alice", TestServers.ALICE_PASSWORD), 0)) {
                assertThat(alice.await("WELCOME")).as("alice, beside four anonymous sessions").isNotNull();
            }
            fourth.close();
            Await.until(() -> server.stats().get(SESSIONS) == 3, "the fourth anonymous session to end");
            try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                assertThat(again.await("WELCOME")).as("an anonymous session in the place left").isNotNull();
            }
            witness.stopAndVerifyWithin(100);
        }
    }

    @Test
    void publishThatWouldCreateATopicBeyondMaxTopicsIsRefusedAndExistingTopicsStillWork() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  maxTopics: 5\n");
             Bystander bystander = new Bystander(server);
             RawWebSocket publisher = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            bystander.stillReceives(publisher, 1); // topic 1 of 5: bystander/probe
            for (int t = 2; t <= 5; t++) {
                publisher.publish(t, "topics/t" + t, "v");
            }
            Await.until(() -> publisher.all("PUBLISH_ACK").size() == 5, "five topics");
            publisher.publish(6, "topics/sixth", "v");
            RawWebSocket.Msg error = errorFor(publisher, 6);
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_TOPICS);
            assertThat(error.text()).contains("topics/sixth", "limits.maxTopics = 5");

            publisher.publish(7, "topics/t2", "again"); // an existing topic: accepted
            Await.until(() -> publisher.all("PUBLISH_ACK").stream().anyMatch(m -> m.a() == 7), "the ack of 7");
            bystander.stillReceives(publisher, 8);
            assertThat(server.stats().get(TOPICS)).isEqualTo(5);
            assertThat(errorsCounted(server, ErrorCode.TOO_MANY_TOPICS)).isEqualTo(1);
        }
    }

    /**
     * Anonymous publishers are one principal, creating at most {@code limits.maxTopicsPerPrincipal}
     * topics: one more is refused naming the key, while alice still creates topics up to
     * {@code limits.maxTopics}, and anonymous publishes to existing topics are still accepted. The
     * witness's topics are anonymous ones too.
     */
    @Test
    void anonymousPublishersTakeTheirShareOfTopicsAndAUserStillCreatesTopics() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  maxTopics: 10\n  maxTopicsPerPrincipal: 6\n"
                + TestServers.OPEN_WITH_ALICE);
             Witness witness = Witness.start(server); // its topic: the first anonymous one
             RawWebSocket anonymous = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket alice = RawWebSocket.connectAndHello(server.webSocketUrl(),
                     Credentials.password("alice", TestServers.ALICE_PASSWORD), 0)) {
            for (int t = 2; t <= 6; t++) {
                anonymous.publish(t, "anonymous/t" + t, "v");
            }
            Await.until(() -> anonymous.all("PUBLISH_ACK").size() == 5, "five anonymous topics beside the witness's");
            anonymous.publish(7, "anonymous/t7", "v");
            RawWebSocket.Msg error = errorFor(anonymous, 7);
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_TOPICS);
            assertThat(error.text()).contains("anonymous/t7", "anonymous", "limits.maxTopicsPerPrincipal = 6");

            for (int t = 1; t <= 4; t++) {
                alice.publish(t, "alice/t" + t, "v");
            }
            Await.until(() -> alice.all("PUBLISH_ACK").size() == 4, "alice's four topics, up to limits.maxTopics");
            alice.publish(5, "alice/t5", "v");
            assertThat(errorFor(alice, 5).text()).contains("limits.maxTopics = 10");
            anonymous.publish(8, "anonymous/t2", "again"); // an existing topic: accepted
            Await.until(() -> anonymous.all("PUBLISH_ACK").stream().anyMatch(m -> m.a() == 8), "the ack of 8");
            assertThat(server.stats().get(TOPICS)).isEqualTo(10);
            witness.stopAndVerifyWithin(100);
        }
    }

    /**
     * {@code limits.maxSubscriptions} and {@code limits.maxSubscriptionsPerPrincipal}: each
     * subscription holds heap (about 1 KB with a selector of its own), and before these a few hundred
     * anonymous sessions of 1,024 subscriptions each filled a 256-MB heap. Anonymous sessions take
     * their share and are refused past it, a user who logs in still subscribes up to the node's
     * bound, and what is unsubscribed or closed is given back.
     */
    @Test
    void anonymousSubscribersTakeTheirShareAUserStillSubscribesAndClosingGivesBack() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  maxSubscriptions: 8\n"
                + "  maxSubscriptionsPerPrincipal: 5\n" + TestServers.OPEN_WITH_ALICE);
             Witness witness = Witness.start(server); // one anonymous subscription
             RawWebSocket alice = RawWebSocket.connectAndHello(server.webSocketUrl(),
                     Credentials.password("alice", TestServers.ALICE_PASSWORD), 0)) {
            try (RawWebSocket anonymous = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                for (int id = 1; id <= 4; id++) {
                    anonymous.subscribe(id, "anonymous/" + id + "/#");
                }
                Await.until(() -> anonymous.all("SUBSCRIBED").size() == 4, "four beside the witness's");
                anonymous.subscribe(5, "anonymous/5/#");
                RawWebSocket.Msg error = errorFor(anonymous, 5);
                assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
                assertThat(error.text()).contains("anonymous/5/#", "anonymous", "limits.maxSubscriptionsPerPrincipal");

                for (int id = 1; id <= 3; id++) {
                    alice.subscribe(id, "alice/" + id + "/#");
                }
                Await.until(() -> alice.all("SUBSCRIBED").size() == 3, "alice's three, up to limits.maxSubscriptions");
                alice.subscribe(4, "alice/4/#");
                assertThat(errorFor(alice, 4).text()).contains("alice/4/#", "limits.maxSubscriptions");

                anonymous.send(out -> WireCodec.writeUnsubscribe(out, 1));
                Await.until(() -> server.stats().get(ServerCounter.SUBSCRIPTIONS) == 7, "the unsubscribe given back");
                alice.subscribe(5, "alice/5/#");
                Await.until(() -> alice.all("SUBSCRIBED").size() == 4, "alice's fourth, in the place given back");
            }
            // the anonymous session's three are given back when it closes: a new one subscribes again
            Await.until(() -> server.stats().get(ServerCounter.SUBSCRIPTIONS) == 5, "the closed session's given back");
            try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                again.subscribe(1, "anonymous/again/#");
                again.await("SUBSCRIBED");
            }
            witness.stopAndVerify();
        }
    }

    @Test
    void publishesBeyondTheSessionsRateAreRefusedOneByOneWhileOtherSessionsPublish() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  publishRatePerSession: 50\n");
             Bystander bystander = new Bystander(server);
             RawWebSocket flooder = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket calm = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            long sent = System.nanoTime();
            flooder.send(out -> {
                for (int i = 1; i <= 80; i++) { // one frame: all within the same instant
                    WireCodec.writePublish(out, i, "flood/t", ("v" + i).getBytes(StandardCharsets.UTF_8));
                }
            });
            Await.until(() -> flooder.all("PUBLISH_ACK").size() + flooder.all("ERROR").size() == 80,
                    "an answer to each of 80 publishes");
            double seconds = (System.nanoTime() - sent) / 1e9;
            // one second of burst, plus the little the bucket refilled while the frame was read
            int accepted = flooder.all("PUBLISH_ACK").size();
            assertThat(accepted).as("publishes accepted in %.3f s", seconds)
                    .isBetween(50, 50 + (int) Math.ceil(50 * seconds));
            List<RawWebSocket.Msg> refused = flooder.all("ERROR");
            assertThat(refused).hasSize(80 - accepted).allSatisfy(m -> {
                assertThat(ErrorCode.of(m.a())).isEqualTo(ErrorCode.PUBLISH_RATE_EXCEEDED);
                assertThat(m.text()).contains("limits.publishRatePerSession = 50");
            });
            List<Long> acked = new ArrayList<>();
            flooder.all("PUBLISH_ACK").forEach(m -> acked.add(m.b()));
            assertThat(acked).as("the accepted ones sequenced without holes").isEqualTo(
                    java.util.stream.LongStream.rangeClosed(1, accepted).boxed().toList());
            bystander.stillReceives(calm, 1);
            assertThat(errorsCounted(server, ErrorCode.PUBLISH_RATE_EXCEEDED)).isEqualTo(80 - accepted);
        }
    }

    @Test
    void valueOverMaxValueBytesIsRefusedNamingTheLimit() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  maxValueBytes: 1000\n");
             Bystander bystander = new Bystander(server);
             RawWebSocket publisher = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            publisher.publish(1, "big/ok", "x".repeat(1000));
            publisher.publish(2, "big/over", "x".repeat(1001));
            RawWebSocket.Msg error = errorFor(publisher, 2);
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.VALUE_TOO_LARGE);
            assertThat(error.text()).contains("1001 bytes", "big/over", "limits.maxValueBytes = 1000");
            Await.until(() -> publisher.all("PUBLISH_ACK").stream().anyMatch(m -> m.a() == 1), "the 1000-byte value");
            bystander.stillReceives(publisher, 3);
            assertThat(errorsCounted(server, ErrorCode.VALUE_TOO_LARGE)).isEqualTo(1);
        }
    }
}
