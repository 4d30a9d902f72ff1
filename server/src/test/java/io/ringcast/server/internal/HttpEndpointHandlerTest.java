package io.ringcast.server.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.server.internal.SocketlessConnection.HttpAnswer;
import io.ringcast.protocol.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plain HTTP side of a connection, through the node's whole pipeline on an embedded channel:
 * {@code /health} (JSON of the live counters), {@code /metrics} (Prometheus text), the static files
 * with their media types and revalidation, and the answers to unknown paths and other methods.
 */
class HttpEndpointHandlerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final SocketlessConnection connection = SocketlessConnection.open("");

    @AfterEach
    void close() {
        connection.close();
    }

    private HttpAnswer get(String path) {
        return connection.request("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = HttpEndpointHandler.class.getClassLoader().getResourceAsStream(name)) {
            assertThat(in).as(name + " on the class path").isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    void healthIsJsonOfTheLiveCounters() throws IOException {
        connection.counters.clientPings.add(3);
        connection.counters.originRefusals.increment();

        HttpAnswer answer = get("/health");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(answer.header("content-type")).isEqualTo("application/json");
        assertThat(answer.header("content-length")).isEqualTo(
                String.valueOf(answer.body().getBytes(StandardCharsets.UTF_8).length));
        JsonNode health = JSON.readTree(answer.body());
        assertThat(health.get("status").asText()).isEqualTo("UP");
        assertThat(health.get("clientPings").asLong()).isEqualTo(3);
        assertThat(health.get("originRefusals").asLong()).isEqualTo(1);
        assertThat(health.get("sessions").asInt()).isZero();
        assertThat(health.get("inboundRingRemaining").asLong()).as("the inbound ring of 64").isEqualTo(64);
        assertThat(health.get("demo").asBoolean()).isFalse();
        assertThat(health.get("uptimeMs").asLong()).isNotNegative();
        assertThat(health.get("transport").asText()).as("auto, resolved")
                .isEqualTo(Transport.AUTO.resolve("transport").configName());
        assertThat(health.has("cluster")).as("a single node").isFalse();
    }

    @Test
    void metricsAreThePrometheusTextFormatOfTheSameCounters() {
        connection.counters.clientPings.add(5);

        HttpAnswer answer = get("/metrics?name[]=ignored");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(answer.header("content-type")).startsWith("text/plain; version=0.0.4");
        assertThat(answer.body()).contains("# TYPE ringcast_sessions gauge").contains("ringcast_sessions 0")
                .containsPattern("(?m)^ringcast_client_pings_total 5(\\.0)?$");
    }

    @Test
    void demoPageIsServedAtTheRootAsHtmlWithAnETagAndNoCache() throws IOException {
        HttpAnswer answer = get("/");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(answer.header("content-type")).isEqualTo("text/html; charset=utf-8");
        assertThat(answer.header("cache-control")).isEqualTo("no-cache");
        assertThat(answer.header("etag")).matches("\"[0-9a-f]+-\\d+\"");
        assertThat(answer.body()).isEqualTo(new String(resource("web/index.html"), StandardCharsets.UTF_8));
    }

    @Test
    void eachStaticFileHasTheMediaTypeOfItsExtension() {
        assertThat(get("/js/ringcast.js").header("content-type")).isEqualTo("text/javascript; charset=utf-8");
        assertThat(get("/js/ringcast.d.ts").header("content-type")).isEqualTo("text/plain; charset=utf-8");
        assertThat(get("/demo.css").header("content-type")).isEqualTo("text/css; charset=utf-8");
        assertThat(get("/status").header("content-type")).as("/status is status.html")
                .isEqualTo("text/html; charset=utf-8");
    }

    @Test
    void requestWithTheCurrentETagIsAnsweredNotModifiedWithoutABody() {
        String etag = get("/js/ringcast.js").header("etag");

        HttpAnswer answer = connection.request("GET /js/ringcast.js HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: "
                + etag + "\r\n\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 304 Not Modified");
        assertThat(answer.header("etag")).isEqualTo(etag);
        assertThat(answer.body()).isEmpty();

        HttpAnswer stale = connection.request("GET /js/ringcast.js HTTP/1.1\r\nHost: localhost\r\n"
                + "If-None-Match: \"0-0\"\r\n\r\n");
        assertThat(stale.statusLine()).isEqualTo("HTTP/1.1 200 OK");
    }

    @Test
    void unknownPathIsNotFoundAndTheAnswerSaysWhereThingsAre() {
        HttpAnswer answer = get("/nothing/here");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 404 Not Found");
        assertThat(answer.header("content-type")).isEqualTo("text/plain; charset=utf-8");
        assertThat(answer.body()).startsWith("not found: /nothing/here\n").contains("/ws", "/health", "/metrics");
    }

    @Test
    void pathsThatCouldEscapeTheWebDirectoryAreNotFound() {
        assertThat(get("/../logback.xml").statusLine()).isEqualTo("HTTP/1.1 404 Not Found");
        assertThat(get("/js/../index.html").statusLine()).isEqualTo("HTTP/1.1 404 Not Found");
        assertThat(get("/.hidden.js").statusLine()).isEqualTo("HTTP/1.1 404 Not Found");
        assertThat(get("/io/ringcast/server/config/defaults.yaml").statusLine()).as("no media type for yaml")
                .isEqualTo("HTTP/1.1 404 Not Found");
    }

    @Test
    void otherMethodsOnKnownPathsAreNotAllowed() {
        for (String request : new String[]{
                "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                "DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                "PUT /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"}) {
            HttpAnswer answer = connection.request(request);
            assertThat(answer.statusLine()).as(request).isEqualTo("HTTP/1.1 405 Method Not Allowed");
            assertThat(answer.body()).isEqualTo("use GET\n");
            assertThat(answer.header("allow")).as("required with 405 (RFC 9110 15.5.6)").isEqualTo("GET");
        }
        assertThat(connection.channel.isOpen()).as("keep-alive after each").isTrue();
    }

    @Test
    void headIsAnsweredWithTheHeadersOfNotAllowedAndNoBody() {
        HttpAnswer answer = connection.request("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n");

        assertThat(answer.statusLine()).isEqualTo("HTTP/1.1 405 Method Not Allowed");
        assertThat(answer.header("content-length")).isEqualTo("8");
        assertThat(answer.header("allow")).isEqualTo("GET");
        assertThat(answer.body()).as("a HEAD response has no body").isEmpty();
    }

    @Test
    void keepAliveRequestsShareTheConnectionAndConnectionCloseEndsIt() {
        assertThat(get("/health").header("connection")).isNull();
        assertThat(get("/health").statusLine()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(connection.channel.isOpen()).isTrue();

        HttpAnswer last = connection.request("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

        assertThat(last.header("connection")).isEqualTo("close");
        assertThat(connection.channel.isOpen()).isFalse();
    }

    @Test
    void http10RequestWithoutKeepAliveIsAnsweredThenClosed() {
        HttpAnswer answer = connection.request("GET /health HTTP/1.0\r\n\r\n");

        assertThat(answer.statusLine()).endsWith("200 OK");
        assertThat(connection.channel.isOpen()).isFalse();
    }
}
