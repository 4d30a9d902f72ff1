package io.ringcast.it;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import io.ringcast.client.ConnectionListener;
import io.ringcast.client.PublishOutcomeUnknownException;
import io.ringcast.client.RingcastClient;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.ThreadLocalRandom;

import static io.ringcast.server.ServerCounter.PUBLISHER_LEDGERS;
import static io.ringcast.server.ServerCounter.PUBLISHER_LEDGERS_FORGOTTEN;
import static io.ringcast.server.ServerCounter.SESSIONS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code REPUBLISH} is applied at most once and answered honestly: recognised by (principal,
 * publisher id, correlation id, topic); the ledger of an authenticated publisher outlives a flood
 * of anonymous ones; a publish whose ledger is gone gets {@code PUBLISH_OUTCOME_UNKNOWN} and is not
 * applied again. Each abuse runs beside a {@link Witness}.
 */
@Timeout(180)
class RepublishLedgersTest {
    private static final String SECRET = "an HS256 secret of at least 32 bytes, for tests";
    private static final String SECURITY = "security:\n" + TestServers.OPEN_TO_ANONYMOUS
            + "  jwtHs256Secret: \"" + SECRET + "\"\n";
    private static final int C = 1 << 30;

    @TempDir
    Path dir;

    private static Credentials token(String subject) {
        return Credentials.token(JWT.create().withSubject(subject).withExpiresAt(Instant.now().plusSeconds(600))
                .withArrayClaim("roles", new String[] {"everything"}).sign(Algorithm.HMAC256(SECRET)));
    }

    /** Anonymous publishers with fresh ids, each publishing once; checks the ledgers held after each. */
    private static void floodOfAnonymousPublishers(RingcastServer server, int publishers, int perPrincipalBound)
            throws Exception {
        long firstId = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE / 2);
        long mostHeld = 0;
        for (int i = 0; i < publishers; i++) {
            try (WireSocket s = new WireSocket(server.webSocketUrl(), null, 0)) {
                s.hello(firstId + i);
                s.send(out -> WireCodec.writePublish(out, C, "flood/t", "x".getBytes(StandardCharsets.UTF_8)));
                s.awaitMessage("PUBLISH_ACK");
            }
            long held = server.stats().get(PUBLISHER_LEDGERS);
            mostHeld = Math.max(mostHeld, held);
            // anonymous ones within their principal's bound, plus the other principals' (one per open session at most)
            assertThat(held).as("ledgers held after %d anonymous publishers", i + 1)
                    .isLessThanOrEqualTo(perPrincipalBound + server.stats().get(SESSIONS) + 1);
        }
        assertThat(mostHeld).isGreaterThan(0);
    }

    /** Publishes a marker to {@code topic} and waits for {@code sub} to see it: every update before it is in. */
    private static List<RawWebSocket.Msg> updatesUpToAMarker(RingcastServer server, RawWebSocket sub, String topic)
            throws Exception {
        try (RawWebSocket marker = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            marker.publish(7, topic, "marker");
            long seq = marker.await("PUBLISH_ACK").b();
            // the marker's own topic and sequence: other topics' updates have small sequences too
            Await.until(() -> sub.all("TOPIC").stream().filter(t -> t.text().equals(topic))
                    .anyMatch(t -> sub.all("UPDATE").stream().anyMatch(m -> m.a() == t.a() && m.b() == seq)),
                    "the marker #" + seq + " of " + topic);
        }
        return sub.all("UPDATE");
    }

    private static List<String> values(List<RawWebSocket.Msg> updates) {
        return updates.stream().map(m -> new String(m.value(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void authenticatedPublishersLedgerOutlivesAFloodOfAnonymousPublishersAndItsRepublishIsAppliedOnce() throws Exception {
        try (RingcastServer server = TestServers.start(SECURITY
                + "limits:\n  publisherLedgers: 1024\n  publisherLedgersPerPrincipal: 1024\n");
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "victim/t");
            sub.await("SUBSCRIBED");
            long publisherId = 0x5eed_1234L;
            try (Witness witness = Witness.start(server)) {
                try (RawWebSocket victim = RawWebSocket.connectAndHello(server.webSocketUrl(), token("victim"), publisherId)) {
                    victim.publish(C, "victim/t", "once");
                    assertThat(victim.await("PUBLISH_ACK").b()).isEqualTo(1);
                }
                // more than the node remembers in all: past the total, the principal holding the most loses
                floodOfAnonymousPublishers(server, 1_100, 1024);
                try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl(), token("victim"), publisherId)) {
                    again.republish(C, "victim/t", "once");
                    RawWebSocket.Msg ack = again.await("PUBLISH_ACK");
                    assertThat(ack.a()).isEqualTo(C);
                    assertThat(ack.b()).as("the sequence its first send got").isEqualTo(1);
                    assertThat(again.all("ERROR")).isEmpty();
                }
                assertThat(values(updatesUpToAMarker(server, sub, "victim/t"))).as("applied once")
                        .containsExactly("once", "marker");
                assertThat(server.stats().get(PUBLISHER_LEDGERS_FORGOTTEN)).as("the flood's own ledgers went").isPositive();
                witness.stopAndVerify();
            }
        }
    }

    @Test
    void anonymousPublisherWhoseLedgerWasForgottenGetsOutcomeUnknownAndItsPublishIsNotAppliedTwice() throws Exception {
        try (RingcastServer server = TestServers.start("limits:\n  publisherLedgers: 64\n  publisherLedgersPerPrincipal: 16\n");
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "victim/t");
            sub.await("SUBSCRIBED");
            long publisherId = 0x5eed_5678L;
            try (Witness witness = Witness.start(server)) {
                try (RawWebSocket victim = RawWebSocket.connectAndHello(server.webSocketUrl(), publisherId)) {
                    victim.publish(C, "victim/t", "once");
                    assertThat(victim.await("PUBLISH_ACK").b()).isEqualTo(1);
                }
                floodOfAnonymousPublishers(server, 40, 16);
                try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl(), publisherId)) {
                    again.republish(C, "victim/t", "once");
                    RawWebSocket.Msg error = again.await("ERROR");
                    assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.PUBLISH_OUTCOME_UNKNOWN);
                    assertThat(error.b()).isEqualTo(C);
                    assertThat(error.text()).contains("'victim/t'", "limits.publisherLedgersPerPrincipal = 16",
                            "not applied again");
                    // sent once more (its answer lost too): the same answer, still not applied
                    again.republish(C, "victim/t", "once");
                    Await.until(() -> again.all("ERROR").size() == 2, "a second answer");
                    assertThat(ErrorCode.of(again.all("ERROR").get(1).a())).isEqualTo(ErrorCode.PUBLISH_OUTCOME_UNKNOWN);
                    assertThat(again.all("PUBLISH_ACK")).isEmpty();
                }
                assertThat(values(updatesUpToAMarker(server, sub, "victim/t"))).as("applied once")
                        .containsExactly("once", "marker");
                witness.stopAndVerify();
            }
        }
    }

    @Test
    void publisherIdSharedByTwoPrincipalsKeepsTheirPublishesApartAndARepublishToAnotherTopicIsRefused()
            throws Exception {
        long sharedId = 0x5ba4_ed1dL;
        try (RingcastServer server = TestServers.start(SECURITY);
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "#");
            sub.await("SUBSCRIBED");
            try (Witness witness = Witness.start(server)) {
                try (RawWebSocket alice = RawWebSocket.connectAndHello(server.webSocketUrl(), token("alice"), sharedId);
                     RawWebSocket bob = RawWebSocket.connectAndHello(server.webSocketUrl(), token("bob"), sharedId)) {
                    alice.publish(C - 2, "alice/t", "a1");
                    alice.publish(C - 1, "alice/t", "a2");
                    alice.publish(C, "alice/t", "a3");
                    Await.until(() -> alice.all("PUBLISH_ACK").size() == 3, "alice's three acks");
                    bob.publish(C, "bob/t", "b1");
                    assertThat(bob.await("PUBLISH_ACK").b()).isEqualTo(1);
                }
                try (RawWebSocket alice = RawWebSocket.connectAndHello(server.webSocketUrl(), token("alice"), sharedId);
                     RawWebSocket bob = RawWebSocket.connectAndHello(server.webSocketUrl(), token("bob"), sharedId)) {
                    alice.republish(C, "alice/t", "a3");
                    assertThat(alice.await("PUBLISH_ACK").b()).as("alice's own sequence").isEqualTo(3);
                    bob.republish(C, "bob/t", "b1");
                    assertThat(bob.await("PUBLISH_ACK").b()).as("bob's own sequence").isEqualTo(1);
                    bob.republish(C, "third/t", "b1");
                    RawWebSocket.Msg error = bob.await("ERROR");
                    assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.REPUBLISH_CONFLICT);
                    assertThat(error.text()).contains("first published to 'bob/t'", "'third/t'", "not applied");
                    assertThat(alice.all("ERROR")).isEmpty();
                }
                List<RawWebSocket.Msg> updates = updatesUpToAMarker(server, sub, "third/t");
                assertThat(values(updates).stream().filter(v -> !v.startsWith("w")).toList())
                        .as("each applied once, nothing on the third topic but the marker")
                        .containsExactly("a1", "a2", "a3", "b1", "marker");
                witness.stopAndVerify();
            }
        }
    }

    @Test
    void serverRestartedFromItsStateAnswersARepublishOfAPublishAppliedBeforeWithOutcomeUnknown() throws Exception {
        String config = "state:\n  file: \"" + dir.resolve("node.state") + "\"\n";
        long publisherId = 0x5eed_9abcL;
        int port;
        try (RingcastServer first = TestServers.start(config);
             RawWebSocket publisher = RawWebSocket.connectAndHello(first.webSocketUrl(), publisherId)) {
            port = first.port();
            publisher.publish(C, "restart/t", "once");
            assertThat(publisher.await("PUBLISH_ACK").b()).isEqualTo(1);
        }
        try (RingcastServer restarted = TestServers.startOnPort(port, config);
             RawWebSocket sub = RawWebSocket.connectAndHello(restarted.webSocketUrl())) {
            sub.subscribe(1, "restart/t");
            sub.await("SUBSCRIBED");
            try (Witness witness = Witness.start(restarted);
                 RawWebSocket again = RawWebSocket.connectAndHello(restarted.webSocketUrl(), publisherId)) {
                again.republish(C, "restart/t", "once");
                RawWebSocket.Msg error = again.await("ERROR");
                assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.PUBLISH_OUTCOME_UNKNOWN);
                assertThat(error.b()).isEqualTo(C);
                assertThat(again.all("PUBLISH_ACK")).isEmpty();
                List<RawWebSocket.Msg> updates = updatesUpToAMarker(restarted, sub, "restart/t");
                assertThat(updates).as("only the marker, numbered after the restored publish")
                        .extracting(RawWebSocket.Msg::b).containsExactly(2L);
                witness.stopAndVerify();
            }
        }
    }

    /**
     * Over {@code limits.publishRatePerSession}, a publish sent again still gets its honest answer:
     * the sequence it got the first time (it was applied: "rate exceeded" would tell the client it
     * was not), and only one never applied is refused as over the rate.
     */
    @Test
    void republishOverThePublishRateIsStillAnsweredFromTheLedger() throws Exception {
        long publisherId = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        try (RingcastServer server = TestServers.start("limits:\n  publishRatePerSession: 10\n");
             Witness witness = Witness.start(server, 200); // 5 a second: under the rate it is held to too
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "rate/t");
            sub.await("SUBSCRIBED");
            try (RawWebSocket first = RawWebSocket.connectAndHello(server.webSocketUrl(), publisherId)) {
                first.publish(C, "rate/t", "once");
                assertThat(first.await("PUBLISH_ACK").b()).isEqualTo(1);
            }
            try (RawWebSocket again = RawWebSocket.connectAndHello(server.webSocketUrl(), publisherId)) {
                // in one frame: 300 publishes spend the second of burst (10), then the two sent again are over
                // the rate; the bucket would take 29 s to refill, so a slow machine cannot make room for them
                again.send(out -> {
                    for (int i = 0; i < 300; i++) {
                        WireCodec.writePublish(out, C + 10 + i, "rate/filler", new byte[] {1});
                    }
                    WireCodec.writeRepublish(out, C, "rate/t", "once".getBytes(StandardCharsets.UTF_8));
                    WireCodec.writeRepublish(out, C + 1, "rate/t", "never sent before".getBytes(StandardCharsets.UTF_8));
                });
                RawWebSocket.Msg acked = Await.value(() -> again.all("PUBLISH_ACK").stream().filter(m -> m.a() == C)
                        .findFirst().orElse(null), () -> "the answer to publish C sent again: " + again.all("ERROR"));
                assertThat(acked.b()).as("the sequence publish C got the first time").isEqualTo(1);
                RawWebSocket.Msg refused = Await.value(() -> again.all("ERROR").stream().filter(m -> m.b() == C + 1)
                        .findFirst().orElse(null), () -> "the answer to publish C + 1; acks for it: " + again.all("PUBLISH_ACK")
                        .stream().filter(m -> m.a() == C + 1).toList() + ", errors: " + again.all("ERROR").size());
                assertThat(ErrorCode.of(refused.a())).isEqualTo(ErrorCode.PUBLISH_RATE_EXCEEDED);
                assertThat(refused.text()).contains("limits.publishRatePerSession", "not applied");
                assertThat(again.all("ERROR")).as("publishes over the rate, C + 1 among them")
                        .allMatch(m -> ErrorCode.of(m.a()) == ErrorCode.PUBLISH_RATE_EXCEEDED).hasSizeGreaterThan(1);
            }
            assertThat(updatesUpToAMarker(server, sub, "rate/t")).extracting(m -> new String(m.value(), StandardCharsets.UTF_8))
                    .containsExactly("once", "marker");
            witness.stopAndVerify();
        }
    }

    /**
     * The Java client's side: a burst cut mid-flight (as in ClientBehaviourTest), then the server
     * restarts from its state file, without its memory of publishers; the publishes the client sends again fail with
     * {@link PublishOutcomeUnknownException}, the ones that waited behind the 1,024-publish window
     * are applied once, numbered after nothing applied twice.
     */
    @Test
    void javaClientFailsPublishesSentAgainToARestartedServerWithPublishOutcomeUnknown(@TempDir Path dir)
            throws Exception {
        int count = 3_000;
        String state = "state:\n  file: \"" + dir.resolve("node.state") + "\"\n";
        RingcastServer first = TestServers.start(state);
        int port = first.port();
        try (CuttableProxy proxy = new CuttableProxy(port)) {
            AtomicBoolean cutOnce = new AtomicBoolean();
            CountDownLatch cut = new CountDownLatch(1);
            ConnectionListener cutAtOnce = new ConnectionListener() {
                @Override
                public void onConnected(String address, String sessionId) {
                    if (cutOnce.compareAndSet(false, true)) {
                        proxy.refuse(true);
                        proxy.cut(); // on the client's loop: nothing acked yet, the window sent
                    }
                }

                @Override
                public void onDisconnected(String address, io.ringcast.client.RingcastException reason, int closeCode) {
                    cut.countDown();
                }
            };
            try (RingcastClient client = RingcastClient.builder().addresses(proxy.webSocketUrl())
                    .reconnectDelay(Duration.ofMillis(10), Duration.ofMillis(100)).connectionListener(cutAtOnce).build()) {
                List<CompletableFuture<Long>> burst = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    burst.add(client.publish("burst/t", ("v" + i).getBytes(StandardCharsets.UTF_8)));
                }
                client.connect();
                assertThat(cut.await(10, TimeUnit.SECONDS)).as("the cut").isTrue();
                first.close();
                try (RingcastServer restarted = TestServers.startOnPort(port, state)) {
                    Witness witness = Witness.start(restarted);
                    proxy.refuse(false);
                    int unknown = 0;
                    long acked = 0;
                    long before = -1; // the topic's sequence before the first acked here (restored, if any got through)
                    for (int i = 0; i < count; i++) {
                        try {
                            long seq = burst.get(i).get(30, TimeUnit.SECONDS);
                            acked++;
                            if (before < 0) {
                                before = seq - 1;
                            }
                            assertThat(seq).as("sequence of publish %d on the restarted server", i)
                                    .isEqualTo(before + acked);
                        } catch (java.util.concurrent.ExecutionException e) {
                            assertThat(e.getCause()).isInstanceOf(PublishOutcomeUnknownException.class);
                            assertThat(acked).as("only publishes sent before the cut are unknown").isZero();
                            unknown++;
                        }
                    }
                    assertThat(unknown).as("publishes sent before the cut, within the window")
                            .isBetween(1, 1024);
                    assertThat(client.publish("burst/t", "after".getBytes(StandardCharsets.UTF_8))
                            .get(10, TimeUnit.SECONDS)).as("the next publish").isEqualTo(before + acked + 1);
                    witness.stopAndVerify();
                    witness.close();
                }
            }
        } finally {
            first.close();
        }
    }
}
