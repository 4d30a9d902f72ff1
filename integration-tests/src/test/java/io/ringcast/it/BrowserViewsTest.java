package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Subscription views ({@code maxRate}, {@code fields}, {@code filter}) through the browser client
 * ({@code /js/ringcast.js}) in a real headless Chromium, against a real server, a Java client
 * publishing.
 *
 * <p>Page scripts keep what each named subscription received in {@code window.got[name]}, in
 * arrival order: {@code [topic, sequence, kind, text, at]} per update ({@code at}: the page's
 * {@code performance.now()}), and {@code [topic, sequence, 'unmatched']} per {@code onUnmatched}.
 */
@Timeout(120)
class BrowserViewsTest {
    static Chromium chromium;

    /** Connects a client in the page to {@code args[0]}. */
    private static final String CONNECT_IN_PAGE = """
            const rc = await import('/js/ringcast.js');
            window.got = {};
            window.errors = {};
            window.subs = {};
            window.client = await rc.connect(args[0], { clientName: 'chromium-views-test' });
            """;

    /**
     * Subscribes {@code args[1]} with the options {@code args[2]} as the subscription named
     * {@code args[0]}; returns what {@code confirmed} resolves to, or {@code ['refused', code, message]}.
     */
    private static final String SUBSCRIBE_IN_PAGE = """
            const [name, selector, options] = args;
            const got = window.got[name] = [];
            const errors = window.errors[name] = [];
            const sub = window.subs[name] = window.client.subscribe(selector,
                u => got.push([u.topic, u.sequence, u.kind, u.text(), performance.now()]),
                Object.assign({}, options, {
                  onUnmatched: (topic, sequence) => got.push([topic, sequence, 'unmatched']),
                  onError: e => errors.push(e.code),
                }));
            try { return await sub.confirmed; } catch (e) { return ['refused', e.code, e.message]; }
            """;

    @BeforeAll
    static void startBrowser() {
        chromium = new Chromium();
    }

    @AfterAll
    static void stopBrowser() {
        if (chromium != null) {
            chromium.close();
        }
    }

    private static RingcastClient javaClient(RingcastServer server) throws Exception {
        RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).clientName("java-side").build();
        client.connect().get(10, TimeUnit.SECONDS);
        return client;
    }

    /** Opens a page of {@code server} with a connected client in it, and returns the Java publisher. */
    private static RingcastClient pageAndPublisher(RingcastServer server) throws Exception {
        chromium.open("http://127.0.0.1:" + server.port() + "/");
        chromium.run(CONNECT_IN_PAGE, server.webSocketUrl());
        return javaClient(server);
    }

    private static long publish(RingcastClient publisher, String topic, String value) throws Exception {
        return publisher.publish(topic, value.getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
    }

    @SuppressWarnings("unchecked")
    private static List<List<Object>> got(String name) {
        return (List<List<Object>>) chromium.eval("window.got['" + name + "']");
    }

    /** What a subscription received, without the arrival times: [topic, sequence, kind(, text)]. */
    private static List<List<Object>> received(String name) {
        return got(name).stream().map(u -> u.subList(0, Math.min(u.size(), 4))).toList();
    }

    @Test
    void fieldsAndFilterGiveProjectedValuesWhilePassingAndUnmatchedWhenAValueStopsPassing() throws Exception {
        try (RingcastServer server = TestServers.start();
             RingcastClient publisher = pageAndPublisher(server)) {
            publish(publisher, "views/EURUSD", "{\"symbol\":\"EURUSD\",\"bid\":1.0840,\"ask\":1.0842,\"spread\":0.0002}");
            publish(publisher, "views/USDJPY", "{\"symbol\":\"USDJPY\",\"bid\":149.90,\"ask\":149.95,\"spread\":0.05}");
            chromium.run(SUBSCRIBE_IN_PAGE, "tight", "views/+",
                    Map.of("fields", List.of("bid", "spread"), "filter", "spread < 0.0005"));

            // a snapshot of the one value that passes, projected byte for byte (1.0840 keeps its zero)
            chromium.waitFor("window.got.tight.length === 1", "the snapshot of the value that passes");
            assertThat(received("tight")).containsExactly(
                    List.of("views/EURUSD", 1L, "snapshot", "{\"bid\":1.0840,\"spread\":0.0002}"));

            publish(publisher, "views/EURUSD", "{\"symbol\":\"EURUSD\",\"bid\":1.0838,\"ask\":1.0845,\"spread\":0.0007}");
            chromium.waitFor("window.got.tight.length === 2", "the value that stops passing");
            publish(publisher, "views/USDJPY", "{\"symbol\":\"USDJPY\",\"bid\":149.91,\"ask\":149.96,\"spread\":0.05}");
            publish(publisher, "views/EURUSD", "{\"symbol\":\"EURUSD\",\"bid\":1.0841,\"ask\":1.0844,\"spread\":0.0003}");
            // passes, but its projection is the one just sent: nothing goes
            publish(publisher, "views/EURUSD", "{\"symbol\":\"EURUSD\",\"bid\":1.0841,\"ask\":1.0845,\"spread\":0.0003}");
            publish(publisher, "views/EURUSD", "{\"symbol\":\"EURUSD\",\"bid\":1.0843,\"ask\":1.0844,\"spread\":0.0001}");
            chromium.waitFor("window.got.tight.some(u => u[1] === 5)", "the last value that passes");

            assertThat(received("tight")).containsExactly(
                    List.of("views/EURUSD", 1L, "snapshot", "{\"bid\":1.0840,\"spread\":0.0002}"),
                    List.of("views/EURUSD", 2L, "unmatched"),
                    List.of("views/EURUSD", 3L, "update", "{\"bid\":1.0841,\"spread\":0.0003}"),
                    List.of("views/EURUSD", 5L, "update", "{\"bid\":1.0843,\"spread\":0.0001}"));
            assertThat((List<?>) chromium.eval("window.errors.tight")).isEmpty();
            assertThat(chromium.evalLong("window.client.stats.viewMessagesDropped")).as("view messages dropped").isZero();
            chromium.run("window.client.close();");
        }
    }

    @Test
    void maxRateSendsFewOfManyQuickValuesAndEndsOnTheNewestFlaggedConflated() throws Exception {
        try (RingcastServer server = TestServers.start();
             RingcastClient publisher = pageAndPublisher(server)) {
            chromium.run(SUBSCRIBE_IN_PAGE, "slow", "rate/#", Map.of("maxRate", 2));
            List<CompletableFuture<Long>> acks = new ArrayList<>();
            for (int i = 1; i <= 200; i++) {
                acks.add(publisher.publish("rate/a", ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
            chromium.waitFor("window.got.slow.some(u => u[1] === 200)", "the newest of 200 values");

            List<List<Object>> got = got("slow");
            assertThat(got).as("200 values at 2 a second: a few, the first at once").hasSizeBetween(2, 10);
            List<Object> last = got.get(got.size() - 1);
            assertThat(last.subList(0, 4)).containsExactly("rate/a", 200L, "conflated", "{\"n\":200}");
            for (int i = 1; i < got.size(); i++) {
                List<Object> before = got.get(i - 1);
                List<Object> after = got.get(i);
                assertThat((Long) after.get(1)).as("sequences rise").isGreaterThan((Long) before.get(1));
                // 500 ms apart on the server; a loaded machine may bunch two up, never to nothing
                assertThat(((Number) after.get(4)).doubleValue() - ((Number) before.get(4)).doubleValue())
                        .as("ms between #%s and #%s", before.get(1), after.get(1)).isGreaterThan(100);
            }
            assertThat(got).extracting(u -> u.get(2)).as("kinds: no gap reported where the view skipped on purpose")
                    .containsOnly("update", "conflated");
            chromium.run("window.client.close();");
        }
    }

    @Test
    void aRewindStartsWithTheLastUpdatesAsSnapshotsOldestFirstThenLiveAndThroughAViewEndsWhereTheViewIs()
            throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  deltas: true\n");
             RingcastClient publisher = pageAndPublisher(server)) {
            for (int i = 1; i <= 5; i++) {
                publish(publisher, "rewind/a", "{\"n\":" + i + ",\"spread\":" + (i % 2 == 0 ? 9 : 1) + ",\"pad\":\""
                        + "p".repeat(80) + "\"}");
            }
            chromium.run(SUBSCRIBE_IN_PAGE, "spark", "rewind/#", Map.of("rewind", 3, "fields", List.of("n")));
            chromium.run(SUBSCRIBE_IN_PAGE, "tight", "rewind/#",
                    Map.of("rewind", 4, "fields", List.of("n"), "filter", "spread < 5"));
            publish(publisher, "rewind/a", "{\"n\":6,\"spread\":1,\"pad\":\"" + "p".repeat(80) + "\"}");
            chromium.waitFor("window.got.spark.length === 4 && window.got.tight.some(u => u[1] === 6)",
                    "both rewinds, then the live value");

            assertThat(received("spark")).containsExactly(
                    List.of("rewind/a", 3L, "snapshot", "{\"n\":3}"),
                    List.of("rewind/a", 4L, "snapshot", "{\"n\":4}"),
                    List.of("rewind/a", 5L, "snapshot", "{\"n\":5}"),
                    List.of("rewind/a", 6L, "update", "{\"n\":6}"));
            assertThat(received("tight")).containsExactly(
                    List.of("rewind/a", 3L, "snapshot", "{\"n\":3}"),
                    List.of("rewind/a", 5L, "snapshot", "{\"n\":5}"),
                    List.of("rewind/a", 6L, "update", "{\"n\":6}"));
            chromium.run("window.client.close();");
        }
    }

    @Test
    void aViewedSubscriptionResumesAfterACutWithCompressionAndDeltasOnEndingOnTheNewestWithoutDuplicates()
            throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  deltas: true\n  compression: true\n");
             CuttableProxy proxy = new CuttableProxy(server.port());
             RingcastClient publisher = javaClient(server)) {
            chromium.open("http://127.0.0.1:" + server.port() + "/");
            chromium.run("""
                    const rc = await import('/js/ringcast.js');
                    window.got = {}; window.errors = {}; window.subs = {};
                    window.client = await rc.connect(args[0], { clientName: 'chromium-views-resume',
                        minReconnectDelayMs: 20, maxReconnectDelayMs: 200 });
                    """, proxy.webSocketUrl());
            String pad = "p".repeat(200); // compressible, and deltas pay for the plain stream
            publish(publisher, "resume/a", "{\"bid\":1,\"spread\":1,\"pad\":\"" + pad + "\"}");
            publish(publisher, "resume/b", "{\"bid\":1,\"spread\":1,\"pad\":\"" + pad + "\"}");
            chromium.run(SUBSCRIBE_IN_PAGE, "tight", "resume/#", Map.of("fields", List.of("bid"), "filter", "spread < 5"));
            publish(publisher, "resume/a", "{\"bid\":2,\"spread\":1,\"pad\":\"" + pad + "\"}");
            chromium.waitFor("window.got.tight.some(u => u[1] === 2)", "a live value before the cut");

            proxy.refuse(true);
            proxy.cut();
            chromium.waitFor("window.client.state !== 'connected'", "the page to notice the cut");
            publish(publisher, "resume/a", "{\"bid\":3,\"spread\":1,\"pad\":\"" + pad + "\"}");
            publish(publisher, "resume/a", "{\"bid\":4,\"spread\":1,\"pad\":\"" + pad + "\"}");
            publish(publisher, "resume/b", "{\"bid\":2,\"spread\":9,\"pad\":\"" + pad + "\"}"); // stops passing
            proxy.refuse(false);
            chromium.waitFor("window.got.tight.some(u => u[1] === 4) && window.got.tight.some(u => u[2] === 'unmatched')",
                    "the newest of a and b's unmatched after the resume");
            publish(publisher, "resume/a", "{\"bid\":5,\"spread\":1,\"pad\":\"" + pad + "\"}");
            chromium.waitFor("window.got.tight.some(u => u[1] === 5)", "live again");

            assertThat(received("tight")).containsExactly(
                    List.of("resume/a", 1L, "snapshot", "{\"bid\":1}"),
                    List.of("resume/b", 1L, "snapshot", "{\"bid\":1}"),
                    List.of("resume/a", 2L, "update", "{\"bid\":2}"),
                    List.of("resume/a", 4L, "snapshot", "{\"bid\":4}"),
                    List.of("resume/b", 2L, "unmatched"),
                    List.of("resume/a", 5L, "update", "{\"bid\":5}"));
            assertThat((List<?>) chromium.eval("window.errors.tight")).isEmpty();
            chromium.run("window.client.close();");
        }
    }

    @Test
    void aViewOfAPermissionLimitedRoleHoldsOnlyTheTopicsItMayRead() throws Exception {
        try (RingcastServer server = TestServers.start("""
                security:
                  anonymousRoles: ["desk"]
                  roles:
                    - name: "desk"
                      subscribe: ["open/#"]
                      publish: ["open/#", "closed/#"]
                """);
             RingcastClient publisher = pageAndPublisher(server)) {
            publish(publisher, "closed/x", "{\"bid\":1}");
            assertThat(chromium.run(SUBSCRIBE_IN_PAGE, "all", "#", Map.of("fields", List.of("bid"), "filter", "bid > 0")))
                    .as("matched: none it may read yet").isEqualTo(0L);
            publish(publisher, "closed/y", "{\"bid\":2}");
            publish(publisher, "open/z", "{\"bid\":3,\"ask\":4}");
            chromium.waitFor("window.got.all.length === 1", "the readable topic");
            publish(publisher, "closed/x", "{\"bid\":5}");
            publish(publisher, "open/z", "{\"bid\":6,\"ask\":4}");
            chromium.waitFor("window.got.all.length === 2", "the readable topic's next value");
            assertThat(received("all")).containsExactly(
                    List.of("open/z", 1L, "update", "{\"bid\":3}"),
                    List.of("open/z", 2L, "update", "{\"bid\":6}"));
            chromium.run("window.client.close();");
        }
    }

    @Test
    void badFilterRejectsItsSubscriptionWithInvalidOptionsWhileThePagesOtherSubscriptionKeepsReceiving() throws Exception {
        try (RingcastServer server = TestServers.start();
             RingcastClient publisher = pageAndPublisher(server)) {
            assertThat(chromium.run(SUBSCRIBE_IN_PAGE, "plain", "quotes/#", Map.of())).isEqualTo(0L);
            publish(publisher, "quotes/a", "{\"spread\":0.0001}");
            chromium.waitFor("window.got.plain.length === 1", "the first value on the plain subscription");

            Object refused = chromium.run(SUBSCRIBE_IN_PAGE, "bad", "quotes/#", Map.of("filter", "spread 0.0005"));
            assertThat(refused).isEqualTo(List.of("refused", "INVALID_OPTIONS",
                    "INVALID_OPTIONS: filter: expected a comparison operator after 'spread' at column 8"));
            assertThat(chromium.eval("window.errors.bad")).as("onError").isEqualTo(List.of("INVALID_OPTIONS"));

            publish(publisher, "quotes/a", "{\"spread\":0.0002}");
            chromium.waitFor("window.got.plain.length === 2", "the next value on the plain subscription");
            assertThat(received("plain")).containsExactly(
                    List.of("quotes/a", 1L, "update", "{\"spread\":0.0001}"),
                    List.of("quotes/a", 2L, "update", "{\"spread\":0.0002}"));
            assertThat(got("bad")).isEmpty();
            assertThat(chromium.eval("window.client.state")).isEqualTo("connected");
            chromium.run("window.client.close();");
        }
    }
}
