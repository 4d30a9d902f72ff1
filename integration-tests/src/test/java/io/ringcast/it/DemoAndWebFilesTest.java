package io.ringcast.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** What the server serves over plain HTTP for browsers, and the demo publisher behind the page. */
@Timeout(60)
class DemoAndWebFilesTest {
    static RingcastServer server;
    static final HttpClient http = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start("demo:\n  enabled: true\n  instruments: 50\n  updatesPerSecond: 500\n");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesTheDemoPageAndTheBrowserClient() throws Exception {
        HttpResponse<String> page = get("/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
        assertThat(page.body()).contains("<script type=\"module\"");

        HttpResponse<String> client = get("/js/ringcast.js");
        assertThat(client.statusCode()).isEqualTo(200);
        assertThat(client.headers().firstValue("content-type")).hasValue("text/javascript; charset=utf-8");
        assertThat(client.body()).contains("export async function connect");
        assertThat(get("/js/ringcast.d.ts").body()).contains("connect(");
    }

    @Test
    void unchangedFilesAreRevalidatedWithTheirEtag() throws Exception {
        HttpResponse<String> first = get("/js/ringcast.js");
        String etag = first.headers().firstValue("etag").orElseThrow();
        assertThat(first.headers().firstValue("cache-control")).hasValue("no-cache");
        HttpResponse<String> again = get("/js/ringcast.js", "If-None-Match", etag);
        assertThat(again.statusCode()).isEqualTo(304);
        assertThat(again.body()).isEmpty();
    }

    @Test
    void pathsOutsideTheWebFilesAreNotFound() throws Exception {
        for (String path : new String[] {"/nothing.js", "/js/../../pom.xml", "/.hidden.js", "/js/%2e%2e/x.js",
                "/io/ringcast/server/config/defaults.yaml", "/logback.xml"}) {
            HttpResponse<String> r = get(path);
            assertThat(r.statusCode()).as(path).isEqualTo(404);
            assertThat(r.body()).as(path).contains("/js/ringcast.js");
        }
    }

    @Test
    void demoPublisherTicksEveryInstrumentWithAQuoteAndItsTimestamp() throws Exception {
        try (RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
            client.connect().get(10, TimeUnit.SECONDS);
            Recorded got = new Recorded();
            client.subscribe("demo/fx/#", got).confirmed().get(10, TimeUnit.SECONDS);
            Set<String> ticked = new HashSet<>();
            Await.until(() -> {
                got.updates.stream().filter(u -> u.kind() == UpdateKind.UPDATE).forEach(u -> ticked.add(u.topic()));
                return ticked.size() == 50;
            }, "an update of each of the 50 instruments");
            long now = System.currentTimeMillis();
            for (Recorded.Got u : got.updates) {
                assertThat(u.topic()).matches("demo/fx/[A-Z]{6}");
                JsonNode quote = JSON.readTree(u.text());
                assertThat(quote.get("bid").asDouble()).as(u.text()).isPositive()
                        .isLessThan(quote.get("ask").asDouble());
                assertThat(quote.get("ts").asLong()).isBetween(now - 60_000, now);
            }
            assertThat(got.errors).isEmpty();
        }
        JsonNode health = JSON.readTree(get("/health").body());
        assertThat(health.get("demo").asBoolean()).isTrue();
        assertThat(health.get("topics").asLong()).isEqualTo(50);
    }
}
