package io.ringcast.server.internal;

import io.netty.buffer.ByteBufUtil;
import io.ringcast.server.internal.SocketlessConnection.HttpAnswer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static io.ringcast.server.internal.SocketlessConnection.ACCEPT;
import static io.ringcast.server.internal.SocketlessConnection.UPGRADE;
import static io.ringcast.server.internal.SocketlessConnection.clientFrame;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebSocket upgrade through the node's pipeline on an embedded channel:
 * {@link WebSocketUpgradeHandler} at {@code /ws}, permessage-deflate as
 * {@link SharedDeflateHandshaker} negotiates it (always {@code server_no_context_takeover}, no
 * offer that limits the server's window), and close statuses that may not be sent on the wire
 * answered with 1002.
 */
class WebSocketUpgradeTest {
    private static final int CLOSE = 0x8;
    private SocketlessConnection connection;

    @AfterEach
    void close() {
        if (connection != null) {
            connection.close();
        }
    }

    private HttpAnswer upgrade(String config, String extraHeaders) {
        connection = SocketlessConnection.open(config);
        return connection.request(UPGRADE + extraHeaders + "\r\n");
    }

    private static byte[] closeFrame(int status) {
        return clientFrame(CLOSE, ByteBuffer.allocate(2).putShort((short) status).array());
    }

    /** The status code of the close frame the server wrote, which must be all it wrote (one close each way). */
    private int closeStatusWritten() {
        byte[] written = connection.writtenBytes();
        assertThat(written.length).as("a close frame").isGreaterThanOrEqualTo(4);
        assertThat(written[0] & 0xFF).as("FIN + close").isEqualTo(0x80 | CLOSE);
        assertThat(written.length).as("one short unmasked frame and nothing after it: %s",
                ByteBufUtil.hexDump(written)).isEqualTo(2 + written[1]);
        return ((written[2] & 0xFF) << 8) | (written[3] & 0xFF);
    }

    @Test
    void upgradeAtWsSwitchesProtocolsAndOpensASession() {
        HttpAnswer answer = upgrade("", "");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 101 Switching Protocols");
        assertThat(answer.headers()).containsEntry("upgrade", "websocket");
        assertThat(answer.header("sec-websocket-accept")).isEqualTo(ACCEPT.substring(ACCEPT.indexOf(' ') + 1));
        assertThat(connection.counters.sessions()).isEqualTo(1);
        assertThat(connection.channel.pipeline().get(HttpPhaseDeadline.class)).as("the HTTP phase is over").isNull();
    }

    @Test
    void deflateOfferIsIgnoredWhileCompressionIsOffEverywhere() {
        HttpAnswer answer = upgrade("", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 101 Switching Protocols");
        assertThat(answer.header("sec-websocket-extensions")).isNull();
    }

    @Test
    void deflateIsAcceptedWithoutServerContextTakeoverThoughTheClientDidNotAsk() {
        HttpAnswer answer = upgrade("features: {compression: true}",
                "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 101 Switching Protocols");
        assertThat(answer.header("sec-websocket-extensions")).startsWith("permessage-deflate")
                .contains("server_no_context_takeover");
    }

    @Test
    void compressionOnInOneOverrideIsEnoughToNegotiateIt() {
        HttpAnswer answer = upgrade("""
                features:
                  overrides:
                    - selector: "fx/#"
                      compression: true
                """, "Sec-WebSocket-Extensions: permessage-deflate\r\n");

        assertThat(answer.header("sec-websocket-extensions")).startsWith("permessage-deflate");
    }

    @Test
    void offerLimitingTheServersWindowIsDeclinedAndTheSessionGetsPlainFrames() {
        HttpAnswer answer = upgrade("features: {compression: true}",
                "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 101 Switching Protocols");
        assertThat(answer.header("sec-websocket-extensions")).isNull();
    }

    @Test
    void otherExtensionsAreNotNegotiated() {
        HttpAnswer answer = upgrade("features: {compression: true}",
                "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n");

        assertThat(answer.header("sec-websocket-extensions")).isNull();
    }

    @Test
    void upgradeElsewhereThanWsIsPlainHttp() {
        connection = SocketlessConnection.open("");

        HttpAnswer answer = connection.request(UPGRADE.replace("GET /ws ", "GET /socket ") + "\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 404 Not Found");
        assertThat(connection.counters.sessions()).isZero();
    }

    @Test
    void closeStatusThatMayNotBeSentIsAnsweredWithProtocolError() {
        upgrade("", "");
        connection.send(closeFrame(5000));

        assertThat(closeStatusWritten()).isEqualTo(1002);
        assertThat(connection.channel.isOpen()).isFalse();
    }

    @Test
    void closeStatusForApplicationsIsEchoed() {
        upgrade("", "");
        connection.send(closeFrame(4000));

        assertThat(closeStatusWritten()).isEqualTo(4000);
    }

    @Test
    void closeStatusesAllowedOnTheWireFollowRfc6455AndTheIanaRegistry() {
        for (int allowed : new int[]{-1, 1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999}) {
            assertThat(WebSocketUpgradeHandler.allowedOnTheWire(allowed)).as("%d", allowed).isTrue();
        }
        for (int refused : new int[]{0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535}) {
            assertThat(WebSocketUpgradeHandler.allowedOnTheWire(refused)).as("%d", refused).isFalse();
        }
    }

    @Test
    void closeWithoutStatusIsEchoedWithoutStatus() {
        upgrade("", "");
        connection.send(clientFrame(CLOSE, new byte[0]));

        byte[] frame = connection.writtenBytes();
        assertThat(new String(frame, StandardCharsets.ISO_8859_1)).as("close frame, no payload")
                .isEqualTo(new String(new byte[]{(byte) 0x88, 0}, StandardCharsets.ISO_8859_1));
    }
}
