package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.ServerCounter.DELTAS_SENT;
import static io.ringcast.server.ServerCounter.PUBLISHES;
import static io.ringcast.server.ServerCounter.SESSIONS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The browser client ({@code /js/ringcast.js}, served by the server) and the demo page, in a real
 * headless Chromium, against real servers, with Java clients on the other side.
 *
 * <p>Page scripts keep what a client received in {@code window.got}: {@code [topic, sequence,
 * kind, text]} per update, in arrival order.
 */
@Timeout(120)
class BrowserClientTest {
    static Chromium chromium;

    /** Connects a client in the page to {@code args[0]}, subscribes {@code args[1]} and records into window.got. */
    private static final String SUBSCRIBE_IN_PAGE = """
            const rc = await import('/js/ringcast.js');
            window.got = [];
            window.states = [];
            window.client = await rc.connect(args[0], { clientName: 'chromium-test',
                minReconnectDelayMs: 20, maxReconnectDelayMs: 200 });
            window.client.on('state', e => window.states.push(e.state));
            const sub = window.client.subscribe(args[1],
                u => window.got.push([u.topic, u.sequence, u.kind, u.text()]));
            return await sub.confirmed;
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

    private static String page(RingcastServer server) {
        return "http://127.0.0.1:" + server.port() + "/";
    }

    private static RingcastClient javaClient(String url) throws Exception {
        RingcastClient client = RingcastClient.builder().addresses(url).clientName("java-side").build();
        client.connect().get(10, TimeUnit.SECONDS);
        return client;
    }

    private static void publishFromJava(RingcastClient publisher, String topic, int from, int to) throws Exception {
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            acks.add(publisher.publish(topic, ("v" + i).getBytes(StandardCharsets.UTF_8)));
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
    }

    @SuppressWarnings("unchecked")
    private static List<List<Object>> got() {
        return (List<List<Object>>) chromium.eval("window.got");
    }

    /** Per topic, the sequences the page received, and what kinds. */
    private static Map<String, List<Long>> sequencesByTopic(List<List<Object>> got) {
        Map<String, List<Long>> byTopic = new HashMap<>();
        for (List<Object> u : got) {
            byTopic.computeIfAbsent((String) u.get(0), t -> new ArrayList<>()).add(((Number) u.get(1)).longValue());
        }
        return byTopic;
    }

    private static List<Long> range(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(i);
        }
        return out;
    }

    // ------------------------------------------------------------------ the demo page

    @Test
    void demoPageShowsALiveBoardOfEveryInstrumentInOrder() throws Exception {
        try (RingcastServer server = TestServers.start("demo:\n  enabled: true\n")) {
            chromium.open(page(server));
            chromium.waitFor("document.body.dataset.state === 'connected'", "the demo page to connect");
            chromium.waitFor("window.ringcastDemo.stats.received > 4000", "4,000 updates on the demo page");
            chromium.waitFor("document.querySelectorAll('#board [data-topic]').length === 500",
                    "a cell for each of the 500 instruments");
            assertThat(chromium.evalLong("window.ringcastDemo.stats.outOfOrder")).as("updates out of order").isZero();
            assertThat(chromium.evalLong("window.ringcastDemo.stats.gaps")).as("gaps").isZero();
            // the benchmark's read-only view (scripts/bench-demo-page.sh): every latency sample after a cursor
            assertThat(chromium.eval("(() => { const s = window.ringcastDemoStats(0); "
                    + "return [s.latencyTotal > 0, s.latencyMs.length + s.latencyMissed === s.latencyTotal, "
                    + "s.latencyMs.every(Number.isFinite), s.received >= s.latencyTotal]; })()"))
                    .as("window.ringcastDemoStats(0): samples, all of them, numbers, no more than updates")
                    .isEqualTo(List.of(true, true, true, true));
            assertThat((String) chromium.eval("document.querySelector('#rate').textContent")).containsPattern("\\d");
            assertThat((String) chromium.eval("document.querySelector('#latency').textContent")).containsPattern("\\d");

            // a sparkline per instrument, drawn from the mids the page received
            chromium.waitFor("[...document.querySelectorAll('#board [data-topic] .spark polyline')]"
                    + ".filter(l => (l.getAttribute('points') || '').trim().split(' ').length >= 3).length === 500",
                    "a sparkline of 3 points or more in every cell");
            // the spread filter panel (spread < 0.0002): the pairs passing, a pair that stopped passing
            // greyed with the time it left (spreads wander over 2 pips of the pairs priced 1 to 10)
            chromium.waitFor("document.querySelectorAll('#tight-list li.pass').length > 100",
                    "the pairs passing the spread filter");
            chromium.waitFor("/^\\d\\d:\\d\\d:\\d\\d$/.test(document.querySelector('#tight-list li.left .when').textContent)",
                    "a pair that stopped passing, greyed, with the time");
            assertThat(chromium.evalLong("window.ringcastDemo.stats.tightUnmatched")).isPositive();
            assertThat((String) chromium.eval("document.querySelector('#tight-status').textContent"))
                    .matches("\\d+ pairs pass · \\d+ left");
            Path shot = chromium.screenshot("demo-page");
            assertThat(Files.size(shot)).isGreaterThan(10_000);

            // throttled to 1 a second per pair: the board again, a quarter of the traffic, held values conflated
            chromium.run("const s = document.querySelector('#max-rate'); s.value = '1'; s.dispatchEvent(new Event('change'));");
            chromium.waitFor("document.querySelector('#subscribe-status').textContent.includes('at most 1/s per pair')"
                    + " && document.querySelectorAll('#board [data-topic]').length === 500", "the throttled board");
            chromium.waitFor("window.ringcastDemo.stats.conflated > 500", "values held back and sent as the newest");
            // the board subscribed again with rewind: each pair's sparkline starts from the history of
            // the 4,000 updates and more the server has by now, as snapshots (oldest first)
            chromium.waitFor("window.ringcastDemo.stats.rewound > 500", "each pair's history rewound");
            Object perSecond = chromium.run("""
                    const s = window.ringcastDemo.stats;
                    const r0 = s.received - s.rewound, t0 = performance.now();
                    await new Promise(r => setTimeout(r, 3000)); // the window the rate is measured over
                    return (s.received - s.rewound - r0) * 1000 / (performance.now() - t0);
                    """);
            assertThat(((Number) perSecond).doubleValue()).as("updates a second on the board, 2,000 unthrottled")
                    .isBetween(100.0, 700.0);
            assertThat(chromium.evalLong("window.ringcastDemo.stats.outOfOrder")).as("updates out of order").isZero();
            assertThat(chromium.evalLong("window.ringcastDemo.stats.gaps")).as("gaps").isZero();
            chromium.screenshot("demo-page-throttled");

            // a bound the filter language refuses: the server's reason in the panel, the board goes on
            chromium.run("document.querySelector('#tight-bound').value = '2x'; document.querySelector('#tight-apply').click();");
            chromium.waitFor("document.querySelector('#tight-status').textContent"
                    + " === \"refused: INVALID_OPTIONS: filter: bad number '2x' at column 10\"", "the server's reason");
            assertThat(chromium.evalLong("document.querySelectorAll('#tight-list li').length")).isZero();
            long received = chromium.evalLong("window.ringcastDemo.stats.received");
            chromium.waitFor("window.ringcastDemo.stats.received > " + (received + 100), "the board going on");
        }
    }

    // ------------------------------------------------------------------ the client in a page

    @Test
    void pageReceivesEveryUpdateInOrderWithoutGap() throws Exception {
        try (RingcastServer server = TestServers.start();
             RingcastClient publisher = javaClient(server.webSocketUrl())) {
            for (int t = 0; t < 10; t++) {
                publishFromJava(publisher, "order/t" + t, 1, 1); // a value to snapshot
            }
            chromium.open(page(server));
            assertThat(chromium.run(SUBSCRIBE_IN_PAGE, server.webSocketUrl(), "order/#")).isEqualTo(10L);
            for (int t = 0; t < 10; t++) {
                publishFromJava(publisher, "order/t" + t, 2, 300);
            }
            chromium.waitFor("window.got.length === 3000", "3,000 updates in the page");

            List<List<Object>> got = got();
            Map<String, List<Long>> byTopic = sequencesByTopic(got);
            assertThat(byTopic).hasSize(10);
            byTopic.forEach((topic, seqs) -> assertThat(seqs).as(topic).isEqualTo(range(1, 300)));
            for (List<Object> u : got) {
                long seq = ((Number) u.get(1)).longValue();
                assertThat(u.get(2)).as("kind of %s #%d", u.get(0), seq).isEqualTo(seq == 1 ? "snapshot" : "update");
                assertThat(u.get(3)).isEqualTo("v" + seq);
            }
            assertThat(chromium.evalLong("window.client.stats.duplicatesDropped")).isZero();
            chromium.run("window.client.close();");
        }
    }

    @Test
    void pagePublishReachesAJavaSubscriberAndAJavaPublishReachesThePage() throws Exception {
        try (RingcastServer server = TestServers.start();
             RingcastClient java = javaClient(server.webSocketUrl())) {
            Recorded javaGot = new Recorded();
            java.subscribe("chat/from-page", javaGot).confirmed().get(10, TimeUnit.SECONDS);
            chromium.open(page(server));
            chromium.run(SUBSCRIBE_IN_PAGE, server.webSocketUrl(), "chat/from-java");

            Object seq = chromium.run("return await window.client.publish('chat/from-page', args[0]);",
                    "hello from Chromium \u2713");
            assertThat(seq).isEqualTo(1L);
            Await.until(() -> javaGot.updates.size() == 1, "the page's publish at the Java subscriber");
            assertThat(javaGot.updates.get(0)).isEqualTo(
                    new Recorded.Got("chat/from-page", 1, UpdateKind.UPDATE, "hello from Chromium \u2713"));

            assertThat(java.publish("chat/from-java", "hello from Java".getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS)).isEqualTo(1L);
            chromium.waitFor("window.got.length === 1", "the Java publish in the page");
            assertThat(got().get(0)).containsExactly("chat/from-java", 1L, "update", "hello from Java");

            Object refused = chromium.run("""
                    try { await window.client.publish('chat//bad', 'x'); return 'accepted'; }
                    catch (e) { return e.code + ': ' + e.message; }
                    """);
            assertThat((String) refused).startsWith("INVALID_PATH").contains("chat//bad");
            chromium.run("window.client.close();");
        }
    }

    /** A server keeping its topics across a graceful restart in {@code state}, with {@code more} config. */
    private static RingcastServer stateful(int port, Path state, String more) throws InterruptedException {
        return TestServers.startOnPort(port, "state:\n  file: \"" + state + "\"\n" + more);
    }

    @Test
    @SuppressWarnings("unchecked")
    void pageResumesWithoutGapAcrossAServerRestartWhenHistoryCoversIt(@TempDir Path dir) throws Exception {
        Path state = dir.resolve("node.state");
        RingcastServer server = stateful(0, state, "");
        int port = server.port();
        try (CuttableProxy proxy = new CuttableProxy(port)) {
            chromium.open(page(server));
            chromium.run(SUBSCRIBE_IN_PAGE, proxy.webSocketUrl(), "resume/#");
            try (RingcastClient publisher = javaClient(server.webSocketUrl())) {
                publishFromJava(publisher, "resume/a", 1, 20);
                chromium.waitFor("window.got.length === 20", "the first 20 updates");
                proxy.refuse(true);
                proxy.cut();
                chromium.waitFor("window.client.state === 'reconnecting'", "the page to notice");
                publishFromJava(publisher, "resume/a", 21, 60); // 40 missed; history holds 64
            }
            server.close();
            server = stateful(port, state, "");
            try (RingcastClient publisher = javaClient(server.webSocketUrl())) {
                publishFromJava(publisher, "resume/a", 61, 70);
            }
            proxy.refuse(false);
            chromium.waitFor("window.got.length === 70", "the resume across the restart");

            List<List<Object>> got = got();
            assertThat(sequencesByTopic(got).get("resume/a")).isEqualTo(range(1, 70));
            assertThat(got).allSatisfy(u -> {
                assertThat(u.get(2)).isEqualTo("update");
                assertThat(u.get(3)).isEqualTo("v" + u.get(1));
            });
            assertThat((List<Object>) chromium.eval("window.states")).containsSubsequence("reconnecting", "connected");
            chromium.run("window.client.close();");
        } finally {
            server.close();
        }
    }

    @Test
    void pageShowsASnapshotAfterGapWhenHistoryDoesNotReachBackAcrossTheRestart(@TempDir Path dir) throws Exception {
        Path state = dir.resolve("node.state");
        String demo = "demo:\n  enabled: true\n  instruments: 20\n  updatesPerSecond: 2000\n";
        RingcastServer server = stateful(0, state, demo);
        int port = server.port();
        try (CuttableProxy proxy = new CuttableProxy(port)) {
            // the demo page, through the proxy too, is where a person sees what happened
            chromium.open(page(server) + "?url=" + proxy.webSocketUrl());
            chromium.waitFor("window.ringcastDemo.stats.received > 100", "the demo page to receive updates");
            chromium.run(SUBSCRIBE_IN_PAGE, proxy.webSocketUrl(), "restart/#");
            try (RingcastClient publisher = javaClient(server.webSocketUrl())) {
                publishFromJava(publisher, "restart/a", 1, 10);
                chromium.waitFor("window.got.length === 10", "the first 10 updates");
                proxy.refuse(true);
                proxy.cut();
                chromium.waitFor("window.client.state === 'reconnecting'", "the page to notice");
                publishFromJava(publisher, "restart/a", 11, 110); // 100 missed; history holds 64
            }
            RingcastServer running = server;
            long before = running.stats().get(PUBLISHES);
            Await.until(() -> running.stats().get(PUBLISHES) > before + 20 * 64 * 2,
                    "the demo instruments to move on past their history");
            server.close();
            server = stateful(port, state, demo);
            proxy.refuse(false);
            chromium.waitFor("window.got.length > 10", "the page to resume");
            try (RingcastClient publisher = javaClient(server.webSocketUrl())) {
                publishFromJava(publisher, "restart/a", 111, 115);
            }
            chromium.waitFor("window.got[window.got.length - 1][1] === 115", "live updates after the gap");

            List<List<Object>> after = got().subList(10, got().size());
            assertThat(after.get(0)).containsExactly("restart/a", 110L, "snapshot-after-gap", "v110");
            assertThat(after.subList(1, after.size())).extracting(u -> u.get(1), u -> u.get(2)).containsExactly(
                    tuple(111L, "update"), tuple(112L, "update"), tuple(113L, "update"), tuple(114L, "update"),
                    tuple(115L, "update"));

            chromium.waitFor("window.ringcastDemo.stats.gaps > 0 && document.body.dataset.state === 'connected'",
                    "the demo page to count the snapshots after a gap");
            assertThat(chromium.evalLong("window.ringcastDemo.stats.reconnects")).isPositive();
            assertThat(chromium.evalLong("window.ringcastDemo.stats.outOfOrder")).isZero();
            chromium.waitFor("document.querySelector('#gaps').textContent === String(window.ringcastDemo.stats.gaps)",
                    "the gap count on screen");
            chromium.screenshot("demo-page-after-gap");
            chromium.run("window.client.close();");
        } finally {
            server.close();
        }
    }

    /**
     * Topics created while the page was cut off: the one whose history still reaches back to #1
     * arrives as updates from #1, the one past history (4 updates kept) as a snapshot after a gap.
     */
    @Test
    void pageGetsTopicsCreatedWhileAwayFromTheirFirstUpdateOrAsASnapshotAfterGap() throws Exception {
        try (RingcastServer server = TestServers.start("history:\n  length: 4\n");
             CuttableProxy proxy = new CuttableProxy(server.port());
             RingcastClient publisher = javaClient(server.webSocketUrl())) {
            chromium.open(page(server));
            chromium.run(SUBSCRIBE_IN_PAGE, proxy.webSocketUrl(), "fresh/#");
            publishFromJava(publisher, "fresh/known", 1, 3);
            chromium.waitFor("window.got.length === 3", "the known topic's updates");
            proxy.refuse(true);
            proxy.cut();
            chromium.waitFor("window.client.state === 'reconnecting'", "the page to notice");
            publishFromJava(publisher, "fresh/replayed", 1, 3);
            publishFromJava(publisher, "fresh/past", 1, 6);
            proxy.refuse(false);
            chromium.waitFor("window.got.some(u => u[0] === 'fresh/replayed' && u[1] === 3)"
                    + " && window.got.some(u => u[0] === 'fresh/past' && u[1] === 6)", "the resume");

            List<List<Object>> got = got();
            assertThat(got).filteredOn(u -> u.get(0).equals("fresh/replayed")).extracting(u -> u.subList(1, 4))
                    .containsExactly(List.of(1L, "update", "v1"), List.of(2L, "update", "v2"),
                            List.of(3L, "update", "v3"));
            assertThat(got).filteredOn(u -> u.get(0).equals("fresh/past")).extracting(u -> u.subList(1, 4))
                    .containsExactly(List.of(6L, "snapshot-after-gap", "v6"));
            assertThat(sequencesByTopic(got).get("fresh/known")).as("known topics as before").isEqualTo(range(1, 3));
            chromium.run("window.client.close();");
        }
    }

    @Test
    void restartedServerWithoutStateMakesANewIncarnationThatThePageGetsFromItsFirstUpdate() throws Exception {
        RingcastServer server = TestServers.start();
        int port = server.port();
        try {
            chromium.open(page(server));
            chromium.run(SUBSCRIBE_IN_PAGE, server.webSocketUrl(), "restart/#");
            try (RingcastClient publisher = javaClient(server.webSocketUrl())) {
                publishFromJava(publisher, "restart/a", 1, 100);
            }
            chromium.waitFor("window.got.length === 100", "the first 100 updates");

            server.close(); // no state.file: the successor starts empty
            server = TestServers.startOnPort(port, "");
            chromium.waitFor("window.states.includes('reconnecting') && window.client.state === 'connected'",
                    "the page to reconnect");
            try (RingcastClient publisher = javaClient(server.webSocketUrl())) {
                publishFromJava(publisher, "restart/a", 1, 10);
            }
            chromium.waitFor("window.got.length > 100 && window.got[window.got.length - 1][1] === 10",
                    "the page to hear of the restarted topic up to #10");
            // another incarnation of the path (docs/protocol.md, "Removing topics"): the page's resume
            // names the old one, so it gets the new topic from its first update, none missed, no gap
            List<List<Object>> after = got().subList(100, got().size());
            assertThat(after).extracting(u -> u.get(1)).isEqualTo(new ArrayList<Object>(range(1, 10)));
            assertThat(after).allSatisfy(u -> assertThat(u.get(2)).isEqualTo("update"));
            chromium.run("window.client.close();");
        } finally {
            server.close();
        }
    }

    /**
     * A frozen tab (what a browser may do to a background tab) runs no timer, so its clients send
     * no PING; the browser still answers the server's WebSocket pings, so the server keeps its
     * sessions for several idle timeouts. Chromium drops a frozen page's WebSockets when it thaws it
     * (close code 1006, seen with and without traffic while frozen): the client reconnects at once
     * and resumes, so what was published meanwhile arrives without a gap.
     */
    @Test
    void frozenTabKeepsItsSessionsOnTheServerAndResumesWithoutGapWhenThawed() throws Exception {
        chromium.inNewTab(() -> {
            try (RingcastServer server = TestServers.start("session:\n  idleTimeoutMs: 1000\n");
                 RingcastClient publisher = javaClient(server.webSocketUrl())) {
                chromium.open(page(server));
                chromium.run(SUBSCRIBE_IN_PAGE, server.webSocketUrl(), "frozen/#");
                publishFromJava(publisher, "frozen/a", 1, 3);
                chromium.waitFor("window.got.length === 3", "the first updates");
                long sessions = server.stats().get(SESSIONS); // the Java publisher, the demo page's and the test's clients
                chromium.frozen(true);
                try {
                    for (int period = 1; period <= 3; period++) {
                        // marks one idle timeout gone by: a peer that answers nothing is closed meanwhile
                        assertThat(ErrorCode.of(WireSocket.awaitIdleTimeoutOfASilentPeer(server.webSocketUrl()).a()))
                                .as("idle period %d", period).isEqualTo(ErrorCode.IDLE_TIMEOUT);
                    }
                    Await.until(() -> server.stats().get(SESSIONS) <= sessions, "the silent peers' sessions to end");
                    assertThat(server.stats().get(SESSIONS)).as("the frozen page's sessions, kept by its pongs")
                            .isEqualTo(sessions);
                    publishFromJava(publisher, "frozen/a", 4, 8); // for the frozen page
                } finally {
                    chromium.frozen(false);
                }
                chromium.waitFor("window.got.length === 8", "the updates published while the tab was frozen");
                List<List<Object>> got = got();
                assertThat(sequencesByTopic(got).get("frozen/a")).isEqualTo(range(1, 8));
                assertThat(got).allSatisfy(u -> assertThat(u.get(2)).isEqualTo("update"));
                chromium.run("window.client.close();");
            }
        });
    }

    @Test
    void deltasAreAppliedInThePage() throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  deltas: true\n");
             RingcastClient publisher = javaClient(server.webSocketUrl())) {
            chromium.open(page(server));
            chromium.run(SUBSCRIBE_IN_PAGE, server.webSocketUrl(), "delta/#");
            List<String> values = new ArrayList<>();
            for (int i = 1; i <= 50; i++) {
                String v = FeatureTogglesTest.record(i);
                values.add(v);
                assertThat(publisher.publish("delta/rec", v.getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS))
                        .isEqualTo(i);
            }
            chromium.waitFor("window.got.length === 50", "50 updates");
            assertThat(got()).extracting(u -> u.get(3)).isEqualTo(new ArrayList<Object>(values));
            assertThat(chromium.evalLong("window.client.stats.deltasApplied")).as("deltas applied").isGreaterThan(40);
            assertThat(server.stats().get(DELTAS_SENT)).isGreaterThan(40);
            chromium.run("window.client.close();");
        }
    }

    @Test
    void sharedDeltaVectorsPassInChromium() throws Exception {
        String vectors = Files.readString(Path.of("..", "testdata", "delta-vectors.json"));
        try (RingcastServer server = TestServers.start()) {
            chromium.open(page(server));
            Object result = chromium.run("""
                    const rc = await import('/js/ringcast.js');
                    const hex = h => new Uint8Array(h.match(/../g) ? h.match(/../g).map(b => parseInt(b, 16)) : []);
                    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
                    const file = JSON.parse(args[0]);
                    const failures = [];
                    for (const v of file.valid) {
                      try {
                        if (!same(rc.applyDelta(hex(v.base), hex(v.delta)), hex(v.target))) failures.push(v.name + ': wrong target');
                      } catch (e) { failures.push(v.name + ': ' + e.message); }
                    }
                    for (const v of file.invalid) {
                      try { rc.applyDelta(hex(v.base), hex(v.delta)); failures.push(v.name + ': accepted'); }
                      catch (e) { if (!/error/.test(e.message)) failures.push(v.name + ': ' + e.message); }
                    }
                    return { checked: file.valid.length + file.invalid.length, failures };
                    """, vectors);
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) result;
            assertThat((List<?>) r.get("failures")).isEmpty();
            assertThat(((Number) r.get("checked")).intValue()).isGreaterThan(10);
        }
    }
}
