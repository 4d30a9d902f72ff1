package io.ringcast.it;

import at.favre.lib.crypto.bcrypt.BCrypt;
import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /api/publish} and {@code /api/publish/batch} on a real server over real sockets: each
 * kind of credential, the refusals (no or wrong credentials, no permission, bad bodies), a batch
 * applied in order, a request sent again with {@code "retry"} applied once, the value's bytes kept
 * as sent; a WebSocket subscriber receives what was published, and a witness keeps receiving
 * through the refusals.
 */
@Timeout(60)
class HttpPublishTest {
    static final String HS256_SECRET = "an HS256 secret of at least 32 bytes, for tests";
    static final String PASSWORD = "correct horse battery staple";
    static final ObjectMapper JSON = new ObjectMapper();
    static RingcastServer server;
    static RingcastClient subscriber;
    static final Recorded got = new Recorded();
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        String hash = BCrypt.withDefaults().hashToString(10, PASSWORD.toCharArray());
        server = TestServers.start("""
                security:
                  anonymousRoles: ["demo"]
                  roles:
                    - name: "demo"
                      subscribe: ["demo/#", "witness/#"]
                      publish: ["demo/#", "witness/#"]
                    - name: "trader"
                      subscribe: ["fx/#"]
                      publish: ["fx/#"]
                    - name: "admin"
                      subscribe: ["#"]
                      publish: ["#"]
                  principals:
                    - name: "alice"
                      passwordHash: "%s"
                      roles: ["trader"]
                    - name: "root"
                      passwordHash: "%s"
                      roles: ["admin"]
                  jwtHs256Secret: "%s"
                """.formatted(hash, hash, HS256_SECRET));
        subscriber = RingcastClient.builder().addresses(server.webSocketUrl()).password("root", PASSWORD).build();
        subscriber.connect().get(10, TimeUnit.SECONDS);
        subscriber.subscribe("#", got).confirmed().get(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        subscriber.close();
        server.close();
    }

    private static HttpResponse<String> post(String path, String authorization, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + path))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String basic(String name, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((name + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static String bearer(String... roles) {
        return "Bearer " + JWT.create().withSubject("backend").withExpiresAt(Instant.now().plusSeconds(600))
                .withArrayClaim("roles", roles).sign(Algorithm.HMAC256(HS256_SECRET));
    }

    private static JsonNode json(HttpResponse<String> r) throws IOException {
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        return JSON.readTree(r.body());
    }

    private static void delivered(String topic, long sequence, String text) {
        Await.until(() -> got.of(topic).stream().anyMatch(g -> g.sequence() == sequence),
                "the subscriber to receive " + topic + " #" + sequence);
        assertThat(got.of(topic).stream().filter(g -> g.sequence() == sequence).findFirst().orElseThrow().text())
                .isEqualTo(text);
    }

    @Test
    void eachKindOfCredentialPublishesAndTheSubscriberGetsTheValueAsSent() throws Exception {
        String value = "{\"bid\": 1.10 , \"ask\":1.1002e0, \"note\": \"caf\\u00e9\"}";
        for (String authorization : List.of(bearer("trader"), basic("alice", PASSWORD))) {
            HttpResponse<String> r = post("/api/publish", authorization, "{\"topic\": \"fx/EURUSD\", \"value\": " + value + "}");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            long seq = json(r).path("sequence").asLong();
            assertThat(seq).isPositive();
            assertThat(json(r).path("topic").asText()).isEqualTo("fx/EURUSD");
            delivered("fx/EURUSD", seq, value); // the bytes as sent, spaces and number spelling kept
        }
        HttpResponse<String> anonymous = post("/api/publish", null, "{\"topic\": \"demo/plain\", \"text\": \"hello\"}");
        assertThat(anonymous.statusCode()).as(anonymous.body()).isEqualTo(200);
        delivered("demo/plain", json(anonymous).path("sequence").asLong(), "hello");
        HttpResponse<String> binary = post("/api/publish", null, "{\"topic\": \"demo/bin\", \"base64\": \"aGk=\"}");
        delivered("demo/bin", json(binary).path("sequence").asLong(), "hi");
    }

    @Test
    void withoutValidCredentialsOrPermissionThePublishIsRefusedAsTheProtocolSays() throws Exception {
        try (Witness witness = Witness.start(server)) {
            HttpResponse<String> wrong = post("/api/publish", basic("alice", "not-it"), "{\"topic\": \"fx/x\", \"value\": 1}");
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(wrong.headers().firstValue("www-authenticate")).hasValueSatisfying(v -> assertThat(v).contains("Bearer", "Basic"));
            assertThat(json(wrong).path("error").path("code").asText()).isEqualTo("AUTHENTICATION_FAILED");
            assertThat(wrong.body()).contains("unknown principal or wrong password").doesNotContain("not-it");

            HttpResponse<String> forged = post("/api/publish", "Bearer not.a.jwt", "{\"topic\": \"fx/x\", \"value\": 1}");
            assertThat(forged.statusCode()).isEqualTo(401);
            assertThat(forged.body()).contains("token is not a JWT");

            HttpResponse<String> scheme = post("/api/publish", "Digest abc", "{\"topic\": \"fx/x\", \"value\": 1}");
            assertThat(scheme.statusCode()).isEqualTo(401);
            assertThat(scheme.body()).contains("Bearer <JWT>", "Basic");

            HttpResponse<String> anonymous = post("/api/publish", null, "{\"topic\": \"fx/x\", \"value\": 1}");
            assertThat(anonymous.statusCode()).isEqualTo(403);
            assertThat(json(anonymous).path("error").path("code").asText()).isEqualTo("PERMISSION_DENIED");
            assertThat(json(anonymous).path("error").path("text").asText()).contains("fx/x", "may not publish");

            HttpResponse<String> trader = post("/api/publish", bearer("trader"), "{\"topic\": \"demo/x\", \"value\": 1}");
            assertThat(trader.statusCode()).isEqualTo(403);
            witness.stopAndVerify();
        }
        assertThat(got.of("fx/x")).as("nothing refused was applied").isEmpty();
    }

    @Test
    void badBodiesAndMethodsAreRefusedNamingWhatIsWrong() throws Exception {
        record Case(String body, String says) {
        }
        for (Case c : List.of(
                new Case("not json", "not JSON"),
                new Case("[1, 2]", "must be a JSON object"),
                new Case("{\"topic\": \"demo/a\"}", "has no value"),
                new Case("{\"value\": 1}", "has no \"topic\""),
                new Case("{\"topic\": \"demo/a\", \"value\": 1, \"text\": \"x\"}", "both \"value\" and \"text\""),
                new Case("{\"topic\": \"demo/a\", \"value\": 1, \"colour\": 1}", "unknown field \"colour\""),
                new Case("{\"topic\": \"demo/a\", \"base64\": \"***\"}", "\"base64\" is not base64"),
                new Case("{\"topic\": \"demo/a\", \"value\": 1, \"publisherId\": 5}", "has no \"correlationId\""),
                new Case("{\"topic\": \"demo/a\", \"value\": 1} {}", "text after the JSON object"),
                new Case("{\"topic\": 7, \"value\": 1}", "\"topic\" must be a string"))) {
            HttpResponse<String> r = post("/api/publish", null, c.body());
            assertThat(r.statusCode()).as(c.body()).isEqualTo(400);
            assertThat(json(r).path("error").path("text").asText()).as(c.body()).contains(c.says());
        }
        HttpResponse<String> batch = post("/api/publish/batch", null, "{\"publishes\": []}");
        assertThat(batch.statusCode()).isEqualTo(400);
        assertThat(batch.body()).contains("non-empty array");
        HttpResponse<String> invalidPath = post("/api/publish", null, "{\"topic\": \"demo//a\", \"value\": 1}");
        assertThat(invalidPath.statusCode()).isEqualTo(400);
        assertThat(json(invalidPath).path("error").path("code").asText()).isEqualTo("INVALID_PATH");
        HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + server.port()
                + "/api/publish")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(get.headers().firstValue("allow")).hasValue("POST");
    }

    @Test
    void aBatchIsAppliedInOrderAndAnsweredPerPublish() throws Exception {
        StringBuilder body = new StringBuilder("{\"publishes\": [");
        int n = 300;
        for (int i = 0; i < n; i++) {
            body.append(i == 0 ? "" : ",").append("{\"topic\": \"fx/batch/t").append(i % 3).append("\", \"text\": \"v")
                    .append(i).append("\"}");
        }
        body.append(", {\"topic\": \"secret/no\", \"text\": \"x\"}]}"); // the last one refused: the rest stand
        HttpResponse<String> r = post("/api/publish/batch", bearer("trader"), body.toString());
        JsonNode answer = json(r);
        assertThat(r.statusCode()).as("the first refusal's status").isEqualTo(403);
        assertThat(answer.path("acked").asInt()).isEqualTo(n);
        JsonNode results = answer.path("results");
        assertThat(results.size()).isEqualTo(n + 1);
        assertThat(results.get(n).path("error").path("code").asText()).isEqualTo("PERMISSION_DENIED");
        for (int t = 0; t < 3; t++) {
            String topic = "fx/batch/t" + t;
            List<Long> sequences = new ArrayList<>();
            for (int i = t; i < n; i += 3) {
                assertThat(results.get(i).path("topic").asText()).isEqualTo(topic);
                sequences.add(results.get(i).path("sequence").asLong());
            }
            assertThat(sequences).as("in the order sent").isSorted().doesNotHaveDuplicates();
            long last = sequences.get(sequences.size() - 1);
            Await.until(() -> got.lastSequence(topic) == last, topic + " #" + last);
            List<String> texts = got.of(topic).stream().map(Recorded.Got::text).toList();
            List<String> sent = new ArrayList<>();
            for (int i = t; i < n; i += 3) {
                sent.add("v" + i);
            }
            assertThat(texts).isEqualTo(sent);
        }
    }

    @Test
    void aRequestSentAgainWithRetryIsAppliedOnce() throws Exception {
        String first = "{\"publisherId\": 4242, \"publishes\": [{\"topic\": \"fx/once/a\", \"text\": \"one\", \"correlationId\": 1},"
                + " {\"topic\": \"fx/once/b\", \"text\": \"two\", \"correlationId\": 2}]}";
        HttpResponse<String> r1 = post("/api/publish/batch", bearer("trader"), first);
        assertThat(r1.statusCode()).as(r1.body()).isEqualTo(200);
        String again = first.replace("\"publisherId\": 4242,", "\"publisherId\": 4242, \"retry\": true,");
        HttpResponse<String> r2 = post("/api/publish/batch", bearer("trader"), again);
        assertThat(r2.statusCode()).as(r2.body()).isEqualTo(200);
        assertThat(json(r2).path("results")).as("the same sequences: applied once").isEqualTo(json(r1).path("results"));
        // a new publish of the same publisher goes on from there
        HttpResponse<String> r3 = post("/api/publish", bearer("trader"),
                "{\"publisherId\": 4242, \"topic\": \"fx/once/a\", \"text\": \"three\", \"correlationId\": 3}");
        long third = json(r3).path("sequence").asLong();
        assertThat(third).isEqualTo(json(r1).path("results").get(0).path("sequence").asLong() + 1);
        Await.until(() -> got.lastSequence("fx/once/a") == third, "fx/once/a's third publish");
        assertThat(got.of("fx/once/a").stream().map(Recorded.Got::text).toList()).containsExactly("one", "three");
        assertThat(got.of("fx/once/b").stream().map(Recorded.Got::text).toList()).containsExactly("two");
        // the same correlation id for another topic is a conflict, not applied
        HttpResponse<String> conflict = post("/api/publish", bearer("trader"),
                "{\"publisherId\": 4242, \"retry\": true, \"topic\": \"fx/once/c\", \"text\": \"x\", \"correlationId\": 3}");
        assertThat(conflict.statusCode()).isEqualTo(409);
        assertThat(json(conflict).path("error").path("code").asText()).isEqualTo("REPUBLISH_CONFLICT");
    }

    /** Two requests written back to back on one connection, before the first is answered: answered in order. */
    @Test
    void pipelinedRequestsOnOneConnectionAreAnsweredInOrder() throws Exception {
        String publish = "{\"topic\": \"demo/pipelined\", \"text\": \"p\"}";
        String request = "POST /api/publish HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + publish.length() + "\r\n\r\n" + publish;
        String health = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";
        try (Socket socket = new Socket("localhost", server.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write((request + health + request).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder seen = new StringBuilder();
            byte[] buf = new byte[8192];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (countOf(seen, "HTTP/1.1 200") < 3 && System.nanoTime() < deadline) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                seen.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
            }
            String all = seen.toString();
            int firstAck = all.indexOf("\"sequence\":");
            int healthAt = all.indexOf("\"status\":\"UP\"");
            int secondAck = all.indexOf("\"sequence\":", firstAck + 1);
            assertThat(firstAck).as(all).isNotNegative();
            assertThat(healthAt).as(all).isGreaterThan(firstAck);
            assertThat(secondAck).as(all).isGreaterThan(healthAt);
        }
    }

    private static int countOf(CharSequence s, String what) {
        int n = 0;
        for (int i = s.toString().indexOf(what); i >= 0; i = s.toString().indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
