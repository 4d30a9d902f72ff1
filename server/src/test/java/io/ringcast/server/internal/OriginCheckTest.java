package io.ringcast.server.internal;

import io.ringcast.server.internal.SocketlessConnection.HttpAnswer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.ringcast.server.internal.SocketlessConnection.UPGRADE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code security.allowedOrigins} ({@link OriginCheck}) in the node's pipeline: a WebSocket upgrade
 * from a listed origin (in any case) or with no origin passes, one from any other origin gets 403
 * and a close before any Ringcast message, and plain HTTP requests are not checked.
 */
class OriginCheckTest {
    private static final String ALLOWED = """
            security:
              allowedOrigins: ["https://app.example.com", "http://localhost:3000"]
            """;
    private SocketlessConnection connection;

    @AfterEach
    void close() {
        connection.close();
    }

    private HttpAnswer upgradeFrom(String config, String origin) {
        connection = SocketlessConnection.open(config);
        return connection.request(UPGRADE + (origin == null ? "" : "Origin: " + origin + "\r\n") + "\r\n");
    }

    @Test
    void listedOriginMayUpgrade() {
        assertThat(upgradeFrom(ALLOWED, "https://app.example.com").statusLine())
                .isEqualTo("HTTP/1.1 101 Switching Protocols");
    }

    @Test
    void originsCompareWithoutCase() {
        assertThat(upgradeFrom(ALLOWED, "HTTPS://App.Example.COM").statusLine())
                .isEqualTo("HTTP/1.1 101 Switching Protocols");
    }

    @Test
    void portIsPartOfTheOrigin() {
        assertThat(upgradeFrom(ALLOWED, "http://localhost:3000").statusLine()).endsWith("101 Switching Protocols");
        connection.close();
        assertThat(upgradeFrom(ALLOWED, "http://localhost:3001").statusLine()).endsWith("403 Forbidden");
    }

    @Test
    void otherOriginIsRefusedWith403AndClosedAndCounted() {
        HttpAnswer answer = upgradeFrom(ALLOWED, "https://evil.example.net");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 403 Forbidden");
        assertThat(answer.body()).isEqualTo("origin https://evil.example.net is not allowed (security.allowedOrigins)\n");
        assertThat(answer.header("content-length")).isEqualTo(String.valueOf(answer.body().length()));
        assertThat(connection.channel.isOpen()).isFalse();
        assertThat(connection.counters.originRefusals()).isEqualTo(1);
        assertThat(connection.counters.sessions()).isZero();
    }

    @Test
    void similarLookingOriginsAreOtherOrigins() {
        for (String origin : new String[]{"https://app.example.com.evil.net", "http://app.example.com",
                "https://app.example.com/", "null"}) {
            assertThat(upgradeFrom(ALLOWED, origin).statusLine()).as(origin).endsWith("403 Forbidden");
            connection.close();
        }
        connection = SocketlessConnection.open("");
    }

    @Test
    void queryDoesNotHideTheUpgradePath() {
        connection = SocketlessConnection.open(ALLOWED);

        HttpAnswer answer = connection.request(UPGRADE.replace("GET /ws ", "GET /ws?token=x ")
                + "Origin: https://evil.example.net\r\n\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 403 Forbidden");
    }

    @Test
    void programWithoutOriginMayUpgrade() {
        assertThat(upgradeFrom(ALLOWED, null).statusLine()).isEqualTo("HTTP/1.1 101 Switching Protocols");
    }

    @Test
    void plainHttpFromAnyOriginIsAnswered() {
        connection = SocketlessConnection.open(ALLOWED);

        HttpAnswer answer = connection.request("GET /health HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example.net\r\n\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(connection.counters.originRefusals()).isZero();
    }

    @Test
    void withNoOriginsListedEveryOriginMayUpgrade() {
        assertThat(upgradeFrom("", "https://anywhere.example.org").statusLine())
                .isEqualTo("HTTP/1.1 101 Switching Protocols");
        assertThat(connection.channel.pipeline().get(OriginCheck.class)).as("no origin check installed").isNull();
    }
}
