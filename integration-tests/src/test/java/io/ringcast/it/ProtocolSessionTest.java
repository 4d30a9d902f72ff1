package io.ringcast.it;

import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static io.ringcast.server.ServerCounter.REPUBLISHES_RECOGNISED;
import static org.assertj.core.api.Assertions.assertThat;

/** The protocol's happy paths, byte for byte, with a raw WebSocket peer. */
@Timeout(60)
class ProtocolSessionTest {
    static RingcastServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void helloIsAnsweredWithWelcomeStatingLimits() throws Exception {
        try (RawWebSocket raw = RawWebSocket.connect(server.webSocketUrl())) {
            raw.send(out -> WireCodec.writeHello(out, 1, "t"));
            RawWebSocket.Msg welcome = raw.await("WELCOME");
            assertThat(welcome.a()).isEqualTo(1);
            assertThat(welcome.b()).isEqualTo(1 << 20);
            assertThat(welcome.text()).startsWith("s-");
        }
    }

    @Test
    void publishIsAckedWithTopicSequenceAndFirstPublishCreatesTopic() throws Exception {
        try (RawWebSocket raw = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            raw.publish(7, "session/created/one", "v1");
            raw.publish(8, "session/created/one", "v2");
            Await.until(() -> raw.all("PUBLISH_ACK").size() == 2, "two acks");
            assertThat(raw.all("PUBLISH_ACK")).extracting(RawWebSocket.Msg::a, RawWebSocket.Msg::b)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(7, 1L), org.assertj.core.groups.Tuple.tuple(8, 2L));
        }
    }

    @Test
    void publishSentAgainOnANewConnectionIsAppliedOnceAndAckedWithItsFirstSequence() throws Exception {
        long publisher = 0x1234_5678_9abcL;
        try (RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "again/t");
            sub.await("SUBSCRIBED");
            try (RawWebSocket first = RawWebSocket.connectAndHello(server.webSocketUrl(), publisher)) {
                first.publish(5, "again/t", "five");
                assertThat(first.await("PUBLISH_ACK").b()).isEqualTo(1);
            }
            // the client lost that connection before reading the ack, and sends it again
            try (RawWebSocket second = RawWebSocket.connectAndHello(server.webSocketUrl(), publisher)) {
                second.republish(5, "again/t", "five");
                second.republish(6, "again/t", "six"); // never arrived the first time: applied now
                Await.until(() -> second.all("PUBLISH_ACK").size() == 2, "two acks");
                assertThat(second.all("PUBLISH_ACK")).extracting(RawWebSocket.Msg::a, RawWebSocket.Msg::b)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple(5, 1L), org.assertj.core.groups.Tuple.tuple(6, 2L));
            }
            // a publisher this server never had a ledger for, while it forgot none and did not start from a
            // state file: nothing of it was ever applied here, so it is applied now (after a restart from
            // state or a forgotten ledger: PUBLISH_OUTCOME_UNKNOWN, RepublishLedgersTest); a client with no
            // publisher id makes a plain publish of it
            try (RawWebSocket other = RawWebSocket.connectAndHello(server.webSocketUrl(), publisher + 1);
                 RawWebSocket anonymous = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                other.republish(5, "again/t", "other");
                assertThat(other.await("PUBLISH_ACK").b()).isEqualTo(3);
                anonymous.republish(5, "again/t", "plain");
                assertThat(anonymous.await("PUBLISH_ACK").b()).isEqualTo(4);
            }
            Await.until(() -> sub.all("UPDATE").size() == 4, "four updates");
            assertThat(sub.all("UPDATE")).extracting(m -> new String(m.value(), StandardCharsets.UTF_8))
                    .containsExactly("five", "six", "other", "plain");
            assertThat(server.stats().get(REPUBLISHES_RECOGNISED)).isEqualTo(1);
        }
    }

    @Test
    void newSubscriberGetsLastValueAsSnapshotThenUpdates() throws Exception {
        try (RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            pub.publish(1, "snap/a", "first");
            pub.publish(2, "snap/a", "second");
            Await.until(() -> pub.all("PUBLISH_ACK").size() == 2, "acks");
            sub.subscribe(5, "snap/#");
            RawWebSocket.Msg subscribed = sub.await("SUBSCRIBED");
            assertThat(subscribed.a()).isEqualTo(5);
            assertThat(subscribed.b()).isEqualTo(1);
            RawWebSocket.Msg topic = sub.await("TOPIC");
            assertThat(topic.text()).isEqualTo("snap/a");
            RawWebSocket.Msg snapshot = sub.await("SNAPSHOT");
            assertThat(snapshot.a()).isEqualTo(topic.a());
            assertThat(snapshot.b()).isEqualTo(2);
            assertThat(snapshot.flags() & UpdateFlags.GAP).isZero();
            assertThat(snapshot.text()).isEqualTo("5");
            assertThat(new String(snapshot.value(), StandardCharsets.UTF_8)).isEqualTo("second");

            pub.publish(3, "snap/a", "third");
            RawWebSocket.Msg update = sub.await("UPDATE");
            assertThat(update.b()).isEqualTo(3);
            assertThat(new String(update.value(), StandardCharsets.UTF_8)).isEqualTo("third");
        }
    }

    @Test
    void pingIsAnsweredWithPong() throws Exception {
        try (RawWebSocket raw = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            raw.send(out -> WireCodec.writePing(out, 42));
            assertThat(raw.await("PONG").b()).isEqualTo(42);
        }
    }

    @Test
    void severalMessagesInOneFrameAreAllHandled() throws Exception {
        try (RawWebSocket raw = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            raw.send(out -> {
                WireCodec.writeSubscribe(out, 1, "batch/#", Map.of());
                for (int i = 1; i <= 50; i++) {
                    WireCodec.writePublish(out, i, "batch/t" + (i % 5), ("v" + i).getBytes());
                }
                WireCodec.writePing(out, 9);
            });
            Await.until(() -> raw.all("PUBLISH_ACK").size() == 50 && raw.all("UPDATE").size() == 50, "50 acks and updates");
            assertThat(raw.await("PONG").b()).isEqualTo(9);
        }
    }
}
