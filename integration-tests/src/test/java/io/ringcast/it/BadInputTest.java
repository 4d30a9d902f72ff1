package io.ringcast.it;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each kind of bad input gets its documented error and close code, and a witness session on the
 * same server, receiving a steady stream throughout, misses nothing.
 */
@Timeout(60)
class BadInputTest {
    static final int MAX_FRAME_BYTES = 65536;
    static final AtomicInteger RUNS = new AtomicInteger();
    static RingcastServer server;

    RawWebSocket witness;
    RawWebSocket publisher;
    String witnessTopic;
    int published;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start("limits:\n  maxFrameBytes: " + MAX_FRAME_BYTES + "\n  handshakeTimeoutMs: 2000\n"
                + "  maxPathBytes: 128\n  maxPathDepth: 4\n  maxSubscriptionsPerSession: 3\n");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @BeforeEach
    void witnessStream(TestInfo info) throws Exception {
        // a repetition gets a topic of its own, whose sequences start at 1
        witnessTopic = "witness/" + info.getTestMethod().orElseThrow().getName() + "/" + RUNS.incrementAndGet();
        witness = RawWebSocket.connectAndHello(server.webSocketUrl());
        witness.subscribe(1, witnessTopic);
        witness.await("SUBSCRIBED");
        publisher = RawWebSocket.connectAndHello(server.webSocketUrl());
        publishWitness(20);
    }

    @AfterEach
    void witnessMissedNothing() {
        publishWitness(20);
        Await.until(() -> witness.all("UPDATE").size() == published, "witness gets all " + published + " updates");
        List<RawWebSocket.Msg> updates = witness.all("UPDATE");
        for (int i = 0; i < updates.size(); i++) {
            assertThat(updates.get(i).b()).as("sequence of update %d", i).isEqualTo(i + 1);
        }
        assertThat(witness.closeCode).isNotDone();
        witness.close();
        publisher.close();
    }

    private void publishWitness(int n) {
        for (int i = 0; i < n; i++) {
            publisher.publish(++published, witnessTopic, "w" + published);
        }
    }

    private static void assertFatal(RawWebSocket bad, ErrorCode code, int closeCode) throws Exception {
        RawWebSocket.Msg error = bad.await("ERROR");
        assertThat(ErrorCode.of(error.a())).as("error code, reason: %s", error.text()).isEqualTo(code);
        assertThat(bad.awaitClose()).as("WebSocket close code").isEqualTo(closeCode);
        assertThat(code.closeCode()).isEqualTo(closeCode);
    }

    private RawWebSocket badPeer(Consumer<RawWebSocket> misbehave) throws Exception {
        RawWebSocket bad = RawWebSocket.connectAndHello(server.webSocketUrl());
        misbehave.accept(bad);
        return bad;
    }

    @Test
    void nonProtocolBinaryFrameIsMalformed() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.sendBytes(new byte[]{0x01, 0x00}))) {
            assertFatal(bad, ErrorCode.MALFORMED_FRAME, 1002);
            assertThat(bad.await("ERROR").text()).contains("truncated message header");
        }
    }

    @Test
    void textFrameIsRefusedAsUnsupportedData() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.sendText("{\"subscribe\":\"#\"}"))) {
            assertFatal(bad, ErrorCode.TEXT_FRAME_NOT_SUPPORTED, 1003);
        }
    }

    @Test
    void unknownMessageTypeIsRefused() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.sendBytes(new byte[]{0x7f, 0, 0, 0, 0}))) {
            assertFatal(bad, ErrorCode.UNKNOWN_MESSAGE_TYPE, 1002);
            assertThat(bad.await("ERROR").text()).contains("0x7f");
        }
    }

    @Test
    void serverToClientTypeFromClientIsRefused() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.send(out -> WireCodec.writePong(out, 1)))) {
            assertFatal(bad, ErrorCode.UNKNOWN_MESSAGE_TYPE, 1002);
            assertThat(bad.await("ERROR").text()).contains("PONG");
        }
    }

    @Test
    void truncatedMessageIsMalformed() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.send(out -> {
            out.writeByte(MessageType.PUBLISH);
            out.writeInt(100); // claims 100 bytes of body, sends 6
            out.writeInt(1);
            out.writeShort(9);
        }))) {
            assertFatal(bad, ErrorCode.MALFORMED_FRAME, 1002);
            assertThat(bad.await("ERROR").text()).contains("truncated PUBLISH");
        }
    }

    @Test
    void truncatedFieldInsideBodyIsMalformed() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.send(out -> {
            out.writeByte(MessageType.SUBSCRIBE);
            out.writeInt(3); // a subscription id needs 4
            out.writeMedium(1);
        }))) {
            assertFatal(bad, ErrorCode.MALFORMED_FRAME, 1002);
            assertThat(bad.await("ERROR").text()).contains("subscriptionId");
        }
    }

    @Test
    void frameOverTheSizeLimitIsRefusedAsTooBig() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.sendMayBeCutOff(out ->
                WireCodec.writePublish(out, 1, "big/one", new byte[MAX_FRAME_BYTES + 1])))) {
            assertFatal(bad, ErrorCode.FRAME_TOO_LARGE, 1009);
            assertThat(bad.await("ERROR").text()).contains("limits.maxFrameBytes");
        }
    }

    /**
     * Far more than the limit: most of the frame is still unsent when the server refuses it, so a
     * server that closed at once with that input unread would reset the connection and could
     * destroy its own ERROR before the peer read it.
     */
    @RepeatedTest(10)
    void frameFarOverTheSizeLimitStillGetsItsError() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.sendMayBeCutOff(out ->
                WireCodec.writePublish(out, 1, "big/many", new byte[MAX_FRAME_BYTES * 32])))) {
            assertFatal(bad, ErrorCode.FRAME_TOO_LARGE, 1009);
        }
    }

    /** RFC 6455 7.4.2: a status outside the ranges allowed on the wire fails the connection with 1002. */
    @Test
    void closeWithAStatusNotAllowedOnTheWireIsAnsweredWithProtocolError() throws Exception {
        for (int status : new int[] {5000, 65535}) {
            assertThat(closeAnswer(status)).as("close answering a close with status %d", status).isEqualTo(1002);
        }
    }

    @Test
    void closeWithAnAllowedStatusIsEchoed() throws Exception {
        for (int status : new int[] {1000, 4000}) {
            assertThat(closeAnswer(status)).as("close answering a close with status %d", status).isEqualTo(status);
        }
    }

    private static int closeAnswer(int status) throws Exception {
        try (WireSocket peer = new WireSocket(server.webSocketUrl(), null, 0)) {
            peer.hello();
            peer.sendClose(status);
            return peer.awaitMessage("CLOSE").a();
        }
    }

    @Test
    void invalidPathIsRefusedAndSessionStaysUsable() throws Exception {
        try (RawWebSocket peer = badPeer(b -> b.publish(11, "fx//EURUSD", "x"))) {
            RawWebSocket.Msg error = peer.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.INVALID_PATH);
            assertThat(error.b()).as("correlation id").isEqualTo(11);
            assertThat(error.text()).contains("fx//EURUSD").contains("empty segment");
            peer.publish(12, "fx/EURUSD/ok", "y");
            assertThat(peer.await("PUBLISH_ACK").a()).isEqualTo(12);
            assertThat(peer.closeCode).isNotDone();
        }
    }

    @Test
    void pathOverTheLengthOrDepthLimitIsRefusedNamingTheLimit() throws Exception {
        String tooLong = "long/" + "x".repeat(124);
        try (RawWebSocket peer = badPeer(b -> {
            b.publish(21, tooLong, "x");
            b.publish(22, "a/b/c/d/e", "x");
        })) {
            Await.until(() -> peer.all("ERROR").size() == 2, "two refusals");
            RawWebSocket.Msg length = peer.all("ERROR").stream().filter(m -> m.b() == 21).findFirst().orElseThrow();
            assertThat(ErrorCode.of(length.a())).isEqualTo(ErrorCode.INVALID_PATH);
            assertThat(length.text()).contains("129 bytes, more than the limit of 128");
            RawWebSocket.Msg depth = peer.all("ERROR").stream().filter(m -> m.b() == 22).findFirst().orElseThrow();
            assertThat(depth.text()).contains("5 segments, more than the limit of 4");
            peer.publish(23, "a/b/c/d", "ok");
            Await.until(() -> peer.all("PUBLISH_ACK").stream().anyMatch(m -> m.a() == 23), "a path within the limits");
        }
    }

    @Test
    void subscriptionBeyondTheSessionLimitIsRefusedAndTheOthersStay() throws Exception {
        try (RawWebSocket peer = badPeer(b -> {
            for (int id = 1; id <= 4; id++) {
                b.subscribe(id, "many/s" + id);
            }
        })) {
            RawWebSocket.Msg error = peer.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
            assertThat(error.b()).as("subscription id").isEqualTo(4);
            assertThat(error.text()).contains("limits.maxSubscriptionsPerSession");
            Await.until(() -> peer.all("SUBSCRIBED").size() == 3, "the three within the limit");
            peer.send(out -> WireCodec.writeUnsubscribe(out, 1));
            peer.subscribe(5, "many/s5"); // room again after an unsubscribe
            Await.until(() -> peer.all("SUBSCRIBED").size() == 4, "the subscription after the unsubscribe");
        }
    }

    @Test
    void wildcardInPublishPathIsRefused() throws Exception {
        try (RawWebSocket peer = badPeer(b -> b.publish(3, "fx/+/bid", "x"))) {
            RawWebSocket.Msg error = peer.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.INVALID_PATH);
            assertThat(error.text()).contains("wildcard");
        }
    }

    @Test
    void invalidSelectorIsRefusedAndSessionStaysUsable() throws Exception {
        try (RawWebSocket peer = badPeer(b -> b.subscribe(4, "fx/#/bid"))) {
            RawWebSocket.Msg error = peer.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.INVALID_SELECTOR);
            assertThat(error.b()).as("subscription id").isEqualTo(4);
            assertThat(error.text()).contains("fx/#/bid").contains("'#' must be the last segment");
            peer.subscribe(4, "fx/#");
            assertThat(peer.await("SUBSCRIBED").a()).isEqualTo(4);
        }
    }

    @Test
    void duplicateSubscriptionIdIsRefused() throws Exception {
        try (RawWebSocket peer = badPeer(b -> {
            b.subscribe(6, "dup/#");
            b.subscribe(6, "dup/other");
        })) {
            RawWebSocket.Msg error = peer.await("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.DUPLICATE_SUBSCRIPTION_ID);
            assertThat(error.b()).as("subscription id").isEqualTo(6);
            // the refusal is answered on reading; the first subscription's reply comes from the sequencer
            assertThat(peer.await("SUBSCRIBED").a()).isEqualTo(6);
            peer.send(out -> WireCodec.writePing(out, 77));
            peer.await("PONG");
            assertThat(peer.all("SUBSCRIBED")).hasSize(1);
        }
    }

    @Test
    void publishBeforeHandshakeIsRefused() throws Exception {
        try (RawWebSocket bad = RawWebSocket.connect(server.webSocketUrl())) {
            bad.publish(1, "early/bird", "x");
            assertFatal(bad, ErrorCode.HANDSHAKE_REQUIRED, 1008);
            assertThat(bad.await("ERROR").text()).contains("PUBLISH before HELLO");
        }
    }

    @Test
    void wrongProtocolVersionIsRefused() throws Exception {
        try (RawWebSocket bad = RawWebSocket.connect(server.webSocketUrl())) {
            bad.send(out -> WireCodec.writeHello(out, 99, "future"));
            assertFatal(bad, ErrorCode.UNSUPPORTED_VERSION, 1002);
            assertThat(bad.await("ERROR").text()).contains("99").contains("version 1");
        }
    }

    @Test
    void silentConnectionIsClosedAfterHandshakeTimeout() throws Exception {
        try (RawWebSocket bad = RawWebSocket.connect(server.webSocketUrl())) {
            assertFatal(bad, ErrorCode.HANDSHAKE_TIMEOUT, 1008);
        }
    }

    @Test
    void hugeResumeCountIsMalformedWithoutAllocating() throws Exception {
        try (RawWebSocket bad = badPeer(b -> b.send(out -> {
            int start = out.writerIndex();
            out.writeByte(MessageType.SUBSCRIBE);
            out.writeInt(0);
            out.writeInt(1);
            WireCodec.writeString(out, "#");
            out.writeInt(Integer.MAX_VALUE);
            out.setInt(start + 1, out.writerIndex() - start - 5);
        }))) {
            assertFatal(bad, ErrorCode.MALFORMED_FRAME, 1002);
            assertThat(bad.await("ERROR").text()).contains("resumeCount");
        }
    }

}
