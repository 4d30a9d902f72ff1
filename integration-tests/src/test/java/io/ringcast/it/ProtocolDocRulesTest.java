package io.ringcast.it;

import at.favre.lib.crypto.bcrypt.BCrypt;
import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The rules {@code docs/protocol.md} states where an implementer working from it alone found it
 * ambiguous: what may come before {@code WELCOME}, {@code HELLO}'s optional tail and appended
 * fields, a refused {@code SUBSCRIBE}, what correlation id 0 means, and what {@code matchedTopics}
 * counts. A raw peer, a real server.
 */
@Timeout(60)
class ProtocolDocRulesTest {
    private static final String PASSWORD = "a password for the protocol's rules";
    static RingcastServer server;

    @BeforeAll
    static void start() throws Exception {
        String hash = BCrypt.withDefaults().hashToString(10, PASSWORD.toCharArray());
        server = TestServers.start("""
                features:
                  overrides:
                    - selector: "count/nocache/#"
                      lastValueCache: false
                security:
                %s  principals:
                    - name: "alice"
                      passwordHash: "%s"
                      roles: ["everything"]
                """.formatted(TestServers.OPEN_TO_ANONYMOUS, hash));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static void assertFatal(RawWebSocket peer, ErrorCode code) throws Exception {
        RawWebSocket.Msg error = peer.await("ERROR");
        assertThat(ErrorCode.of(error.a())).as("error code, reason: %s", error.text()).isEqualTo(code);
        assertThat(error.b()).as("a fatal error's correlation id").isZero();
        assertThat(peer.awaitClose()).as("WebSocket close code").isEqualTo(code.closeCode());
    }

    // ------------------------------------------------------------------ before WELCOME

    @Test
    void messagesBehindAnAnonymousHelloInItsFrameAreServed() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connect(server.webSocketUrl())) {
            peer.send(out -> {
                WireCodec.writeHello(out, 1, "eager");
                WireCodec.writeSubscribe(out, 1, "eager/#", Map.of());
                WireCodec.writePublish(out, 1 << 30, "eager/t", "v".getBytes());
            });
            peer.await("PUBLISH_ACK");
            assertThat(peer.messages).extracting(RawWebSocket.Msg::type)
                    .containsExactly("WELCOME", "SUBSCRIBED", "TOPIC", "UPDATE", "PUBLISH_ACK");
        }
    }

    @Test
    void messageBehindAPasswordHelloBeingCheckedEndsTheSessionWithHandshakeRequired() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connect(server.webSocketUrl())) {
            peer.send(out -> {
                WireCodec.writeHello(out, 1, "eager", Credentials.password("alice", PASSWORD));
                WireCodec.writeSubscribe(out, 1, "eager/#", Map.of());
            });
            assertFatal(peer, ErrorCode.HANDSHAKE_REQUIRED);
            assertThat(peer.all("WELCOME")).isEmpty();
        }
    }

    // ------------------------------------------------------------------ HELLO's tail

    @Test
    void helloWithFieldsAppendedAfterItsConnectionNumberIsWelcomed() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connect(server.webSocketUrl())) {
            peer.send(out -> helloWithTail(out, new byte[] {(byte) 0xDE, (byte) 0xAD, (byte) 0xBE}));
            assertThat(peer.await("WELCOME").a()).isEqualTo(1);
            peer.send(out -> WireCodec.writePing(out, 5));
            assertThat(peer.await("PONG").b()).isEqualTo(5);
        }
    }

    @Test
    void helloWhosePublisherIdIsCutShortIsMalformed() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connect(server.webSocketUrl())) {
            peer.send(out -> {
                WireCodec.writeHello(out, 1, "short", Credentials.ANONYMOUS);
                out.writeByte(Credentials.NONE);
                out.writeBytes(new byte[] {1, 2, 3}); // 3 of the publisher id's 8 bytes
                patchBodyLength(out);
            });
            assertFatal(peer, ErrorCode.MALFORMED_FRAME);
        }
    }

    @Test
    void helloWhoseConnectionNumberIsCutShortIsMalformed() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connect(server.webSocketUrl())) {
            peer.send(out -> {
                WireCodec.writeHello(out, 1, "short", Credentials.ANONYMOUS, 42);
                out.writeBytes(new byte[] {0, 0, 7}); // 3 of the connection number's 4 bytes
                patchBodyLength(out);
            });
            assertFatal(peer, ErrorCode.MALFORMED_FRAME);
        }
    }

    /** An anonymous {@code HELLO} with publisher id 42 and connection 7, then {@code tail}: fields of a later revision. */
    private static void helloWithTail(ByteBuf out, byte[] tail) {
        WireCodec.writeHello(out, 1, "newer", Credentials.ANONYMOUS, 42, 7);
        out.writeBytes(tail);
        patchBodyLength(out);
    }

    /** The body length of the one message in {@code out}, made to cover what was appended. */
    private static void patchBodyLength(ByteBuf out) {
        out.setInt(out.readerIndex() + 1, out.readableBytes() - WireCodec.HEADER_BYTES);
    }

    // ------------------------------------------------------------------ refusals and correlation ids

    @Test
    void refusedSubscribeGetsAnErrorInsteadOfSubscribedAndItsIdIsFreeAgain() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            peer.subscribe(9, "refused/#/x");
            peer.subscribe(10, "refused/later/#"); // answered in order after any reply to 9
            assertThat(peer.await("SUBSCRIBED").a()).isEqualTo(10);
            RawWebSocket.Msg error = peer.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.INVALID_SELECTOR);
            assertThat(error.b()).as("the refused subscription's id").isEqualTo(9);
            assertThat(peer.all("SUBSCRIBED")).extracting(RawWebSocket.Msg::a).containsExactly(10);

            peer.subscribe(9, "refused/again/#");
            Await.until(() -> peer.all("SUBSCRIBED").size() == 2, "the id refused before, subscribed now");
            assertThat(peer.all("SUBSCRIBED")).extracting(RawWebSocket.Msg::a).containsExactly(10, 9);
            assertThat(peer.all("ERROR")).hasSize(1);
        }
    }

    @Test
    void correlationIdZeroIsAnsweredLikeAnyOtherAndNotFatal() throws Exception {
        try (RawWebSocket peer = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            peer.subscribe(0, "zero/#");
            peer.publish(0, "zero//bad", "x");
            Await.until(() -> peer.all("ERROR").size() == 2, "two refusals");
            assertThat(peer.all("ERROR")).extracting(m -> ErrorCode.of(m.a()), RawWebSocket.Msg::b)
                    .containsExactlyInAnyOrder(tuple(ErrorCode.DUPLICATE_SUBSCRIPTION_ID, 0L),
                            tuple(ErrorCode.INVALID_PATH, 0L));

            peer.publish(0, "zero/fine", "y");
            assertThat(peer.await("PUBLISH_ACK").a()).as("the ack's correlation id").isZero();
            assertThat(peer.closeCode).isNotDone();
        }
    }

    // ------------------------------------------------------------------ SUBSCRIBED

    @Test
    void matchedTopicsCountsEveryMatchingTopicWhetherOrNotTheReplyCarriedIt() throws Exception {
        try (RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            // the SUBSCRIBE below resumes (its list is not empty), so a topic its list leaves out is
            // resumed from 0: replayed from #1, or told as a gap
            pub.publish(1, "count/valued", "a");          // left out, history holds #1: UPDATE #1
            pub.publish(2, "count/nocache/event", "b");   // left out, keeps nothing: SNAPSHOT GAP NO_VALUE
            pub.publish(3, "count/seen", "c");            // resumed at its current sequence: nothing
            Await.until(() -> pub.all("PUBLISH_ACK").size() == 3, "three acks");

            sub.send(out -> WireCodec.writeSubscribe(out, 4, "count/#",
                    Map.of("count/seen", 1L, "count/not/yet", 7L))); // the second names no topic the server has
            RawWebSocket.Msg subscribed = sub.await("SUBSCRIBED");
            assertThat(subscribed.b()).as("matchedTopics").isEqualTo(3);
            assertThat(sub.all("UPDATE")).extracting(RawWebSocket.Msg::b).as("count/valued replayed").containsExactly(1L);
            assertThat(sub.all("SNAPSHOT")).extracting(RawWebSocket.Msg::text, RawWebSocket.Msg::flags)
                    .as("count/nocache/event's gap: subscription id 0, GAP and NO_VALUE")
                    .containsExactly(tuple("0", UpdateFlags.GAP | UpdateFlags.NO_VALUE));
            assertThat(sub.all("TOPIC")).extracting(RawWebSocket.Msg::text)
                    .containsExactlyInAnyOrder("count/valued", "count/nocache/event", "count/seen");
        }
    }
}
