package io.ringcast.it;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.math.BigDecimal;
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
    /** Numbers as the text writes them, trailing zeros too, so that {@code ask - bid} can be checked to the digit. */
    static final ObjectReader EXACT_JSON = JSON.reader().with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .without(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES);

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
                JsonNode quote = EXACT_JSON.readTree(u.text());
                BigDecimal bid = quote.get("bid").decimalValue();
                BigDecimal ask = quote.get("ask").decimalValue();
                BigDecimal spread = quote.get("spread").decimalValue();
                assertThat(bid).as(u.text()).isPositive().isLessThan(ask);
                assertThat(ask.subtract(bid)).as("spread of %s", u.text()).isEqualByComparingTo(spread);
                // written with the quote's decimals, whose last is a tenth of a pip: 0.5 to 3 pips
                assertThat(spread.unscaledValue().intValueExact()).as("spread of %s in tenths of a pip", u.text())
                        .isBetween(5, 30);
                assertThat(quote.get("ts").asLong()).isBetween(now - 60_000, now);
            }
            assertThat(got.errors).isEmpty();
        }
        JsonNode health = JSON.readTree(get("/health").body());
        assertThat(health.get("demo").asBoolean()).isTrue();
        assertThat(health.get("topics").asLong()).isEqualTo(50);
    }

    /**
     * Spreads wander from 0.5 to 3 pips, so {@code spread < 0.0002} (2 pips of a pair priced from 1
     * to 10) passes such pairs some of the time: one of them stops passing while the test watches;
     * cheaper pairs always pass, dearer ones never.
     */
    @Test
    void demoSpreadsWanderSoAFilterOnThemPassesSomePairsSomeOfTheTime() throws Exception {
        try (RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
            client.connect().get(10, TimeUnit.SECONDS);
            Recorded got = new Recorded();
            client.subscribe("demo/fx/#", SubscribeOptions.builder().filter("spread < 0.0002").build(), got)
                    .confirmed().get(10, TimeUnit.SECONDS);
            Await.until(() -> !got.unmatched.isEmpty(), "a pair whose spread widens past 2 pips");
            for (Recorded.Got u : got.updates) {
                assertThat(bidOf(u)).as("%s passed: %s", u.topic(), u.text()).isLessThan(10);
            }
            for (Recorded.Unmatched u : got.unmatched) {
                assertThat(got.of(u.topic())).as("what passed of %s before it stopped", u.topic()).isNotEmpty()
                        .allSatisfy(passed -> assertThat(bidOf(passed)).as(passed.text()).isBetween(1.0, 10.0));
            }
            assertThat(got.errors).isEmpty();
        }
    }

    private static double bidOf(Recorded.Got quote) throws IOException {
        return JSON.readTree(quote.text()).get("bid").asDouble();
    }
}
