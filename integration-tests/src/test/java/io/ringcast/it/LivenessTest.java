package io.ringcast.it;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server's side of liveness, as a background browser tab meets it: a tab's timers (and so its
 * {@code PING}s) may run once a minute, but its WebSocket stack answers the server's WebSocket
 * pings at once. The server pings a session silent for half of {@code session.idleTimeoutMs} and
 * counts the pong as traffic; only a peer that answers nothing is timed out.
 */
@Timeout(60)
class LivenessTest {
    static RingcastServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start("session:\n  idleTimeoutMs: 1000\n");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void sessionThatOnlyAnswersWebSocketPingsIsKeptOpen() throws Exception {
        try (WireSocket quiet = new WireSocket(server.webSocketUrl(), null, 0)) {
            quiet.hello();
            // three pings answered span three half-timeouts: 1.5 s of silence from the client's code
            quiet.awaitMessages("WEBSOCKET_PING", 3);
            quiet.send(b -> WireCodec.writePublish(b, 7, "liveness/quiet", "still here".getBytes(StandardCharsets.UTF_8)));
            assertThat(quiet.awaitMessage("PUBLISH_ACK").a()).isEqualTo(7);
            assertThat(quiet.messages).extracting(RawWebSocket.Msg::type).doesNotContain("ERROR", "CLOSE");
        }
    }

    @Test
    void sessionThatAnswersNothingIsClosedWithIdleTimeout() throws Exception {
        try (WireSocket dead = new WireSocket(server.webSocketUrl(), null, 0)) {
            dead.answerPings = false;
            dead.hello();
            RawWebSocket.Msg error = dead.awaitMessage("ERROR");
            assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.IDLE_TIMEOUT);
            assertThat(error.text()).contains("session.idleTimeoutMs = 1000", "pong");
            assertThat(dead.awaitMessage("CLOSE").a()).isEqualTo(1001);
            assertThat(dead.messages).extracting(RawWebSocket.Msg::type)
                    .as("asked once before giving up").containsSubsequence("WEBSOCKET_PING", "ERROR");
        }
    }
}
