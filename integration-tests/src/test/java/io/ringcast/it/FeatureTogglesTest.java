package io.ringcast.it;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import io.ringcast.testkit.FailOnLeakExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.ServerCounter.COMPRESSED_FRAMES;
import static io.ringcast.server.ServerCounter.CONFLATED_UPDATES;
import static io.ringcast.server.ServerCounter.DELTA_BYTES_SAVED;
import static io.ringcast.server.ServerCounter.DELTAS_SENT;
import static io.ringcast.server.ServerCounter.SLOW_CONSUMER_DISCONNECTS;
import static io.ringcast.server.ServerCounter.VALUES_CACHED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each of the four toggles, seen where it matters: on the wire (raw peers that show flags, value
 * sizes, negotiated extensions and compressed frames) and in what a real Java subscriber receives.
 */
@Timeout(120)
class FeatureTogglesTest {
    /** A 200-byte price record; {@link #record(int)} changes two fields of it, as a market data tick does. */
    static final String RECORD = "{\"symbol\":\"EURUSD\",\"bid\":1.08412,\"ask\":1.08415,\"bidSize\":1000000,"
            + "\"askSize\":2500000,\"venue\":\"LMAX\",\"ts\":1763800000123,\"seq\":00042,\"status\":\"OPEN\","
            + "\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}";

    static String record(int i) {
        return RECORD.replace("1.08412", String.format("1.%05d", 8412 + i)).replace("00042", String.format("%05d", i));
    }

    // ------------------------------------------------------------------ last-value cache

    @Test
    void withTheCacheOnANewSubscriberGetsTheValueAtOnce() throws Exception {
        try (RingcastServer server = TestServers.start("");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            pub.publish(1, "state/a", "v1");
            pub.await("PUBLISH_ACK");
            try (RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                sub.subscribe(1, "state/#");
                sub.await("SUBSCRIBED");
                assertThat(sub.all("SNAPSHOT")).extracting(m -> new String(m.value(), StandardCharsets.UTF_8))
                        .containsExactly("v1");
            }
            assertThat(server.stats().get(VALUES_CACHED)).isEqualTo(1);
        }
    }

    @Test
    void withTheCacheOffANewSubscriberGetsNoSnapshotOnlyLaterUpdates() throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  lastValueCache: false\n");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            pub.publish(1, "events/a", "before");
            pub.await("PUBLISH_ACK");
            try (RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                sub.subscribe(1, "events/#");
                assertThat(sub.await("SUBSCRIBED").b()).as("matched topics").isEqualTo(1);
                pub.publish(2, "events/a", "after");
                RawWebSocket.Msg update = sub.await("UPDATE");

                assertThat(new String(update.value(), StandardCharsets.UTF_8)).isEqualTo("after");
                assertThat(update.b()).isEqualTo(2);
                assertThat(sub.all("SNAPSHOT")).isEmpty();
            }
            assertThat(server.stats().get(VALUES_CACHED)).isZero();
        }
    }

    @Test
    void withTheCacheOffAResumeThatMissedUpdatesIsToldOfTheGapWithoutAValue() throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  lastValueCache: false\n");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            for (int i = 1; i <= 3; i++) {
                pub.publish(i, "events/a", "e" + i);
            }
            Await.until(() -> pub.all("PUBLISH_ACK").size() == 3, "3 acks");
            try (RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                sub.send(out -> WireCodec.writeSubscribe(out, 1, "events/#", Map.of("events/a", 1L)));
                RawWebSocket.Msg gap = sub.await("SNAPSHOT");

                assertThat(gap.flags()).isEqualTo(UpdateFlags.GAP | UpdateFlags.NO_VALUE);
                assertThat(gap.b()).as("the topic's sequence").isEqualTo(3);
                assertThat(gap.value()).isEmpty();
                assertThat(gap.text()).as("to every matching subscription").isEqualTo("0");
            }
            // and the Java client hands it to the listener as such, with nothing pretended
            try (RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
                client.connect().get(10, TimeUnit.SECONDS);
                Recorded got = new Recorded();
                client.subscribe("events/#", got).confirmed().get(10, TimeUnit.SECONDS);
                pub.publish(9, "events/a", "e4");
                Await.until(() -> got.lastSequence("events/a") == 4, "e4");
                assertThat(got.of("events/a")).extracting(Recorded.Got::kind, Recorded.Got::text)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple(UpdateKind.UPDATE, "e4"));
            }
        }
    }

    // ------------------------------------------------------------------ deltas

    @Test
    void deltasShrinkASmallChangeOfA200ByteValueAndTheClientSeesFullValues() throws Exception {
        int updates = 50;
        int[] bytesPerUpdate = new int[2];
        for (boolean deltas : new boolean[]{false, true}) {
            try (RingcastServer server = TestServers.start("features:\n  deltas: " + deltas + "\n");
                 RawWebSocket wire = RawWebSocket.connectAndHello(server.webSocketUrl());
                 RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build();
                 RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
                wire.subscribe(1, "fx/#");
                wire.await("SUBSCRIBED");
                client.connect().get(10, TimeUnit.SECONDS);
                publisher.connect().get(10, TimeUnit.SECONDS);
                Recorded got = new Recorded();
                client.subscribe("fx/#", got).confirmed().get(10, TimeUnit.SECONDS);
                assertThat(record(0).length()).isEqualTo(200);

                for (int i = 0; i < updates; i++) {
                    publisher.publish("fx/EURUSD", record(i).getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
                }
                Await.until(() -> wire.all("UPDATE").size() == updates, updates + " updates on the wire");
                Await.until(() -> got.of("fx/EURUSD").size() == updates, updates + " updates to the client");

                List<RawWebSocket.Msg> wireUpdates = wire.all("UPDATE");
                bytesPerUpdate[deltas ? 1 : 0] = wireUpdates.stream().skip(1).mapToInt(m -> m.value().length).sum()
                        / (updates - 1);
                assertThat(wireUpdates.get(0).flags()).as("the first value has no base").isZero();
                for (RawWebSocket.Msg m : wireUpdates.subList(1, updates)) {
                    assertThat(m.flags()).isEqualTo(deltas ? UpdateFlags.DELTA : 0);
                }
                for (int i = 0; i < updates; i++) {
                    assertThat(got.of("fx/EURUSD").get(i).text()).as("value %d the client delivers", i)
                            .isEqualTo(record(i));
                }
                if (deltas) {
                    assertThat(server.stats().get(DELTAS_SENT)).isEqualTo(updates - 1);
                    assertThat(server.stats().get(DELTA_BYTES_SAVED)).isPositive();
                }
            }
        }
        assertThat(bytesPerUpdate[0]).as("value bytes per update without deltas").isEqualTo(200);
        assertThat(bytesPerUpdate[1]).as("value bytes per update with deltas").isLessThan(40);
    }

    @Test
    void theMetricsEndpointShowsWhatEachToggleDid() throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  deltas: true\n");
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "#");
            sub.await("SUBSCRIBED");
            pub.publish(1, "fx/EURUSD", record(1));
            pub.publish(2, "fx/EURUSD", record(2));
            Await.until(() -> sub.all("UPDATE").size() == 2, "2 updates");
            Await.until(() -> server.stats().get(DELTAS_SENT) == 1, "the delta counted");

            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(server.webSocketUrl().replace("ws://", "http://").replace("/ws", "/metrics"))).build(),
                    HttpResponse.BodyHandlers.ofString());

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
            assertThat(r.body()).contains("ringcast_deltas_sent_total 1.0", "ringcast_values_cached 1.0",
                    "ringcast_delta_saved_bytes_total", "ringcast_compressed_frames_total 0.0",
                    "ringcast_conflated_updates_total 0.0", "ringcast_config_reloads_total{result=\"refused\"} 0.0",
                    "ringcast_delivered_bytes_total");
        }
    }

    @Test
    void anOverrideTurnsDeltasOnForItsSubtreeOnly() throws Exception {
        String yaml = "features:\n  deltas: false\n  overrides:\n    - selector: \"fx/#\"\n      deltas: true\n";
        try (RingcastServer server = TestServers.start(yaml);
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl());
             RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            sub.subscribe(1, "#");
            sub.await("SUBSCRIBED");
            for (int i = 0; i < 5; i++) {
                pub.publish(2 * i + 1, "fx/EURUSD", record(i));
                pub.publish(2 * i + 2, "eq/AAPL", record(i));
            }
            Await.until(() -> sub.all("UPDATE").size() == 10, "10 updates");

            Map<Integer, String> pathByAlias = new java.util.HashMap<>();
            sub.all("TOPIC").forEach(t -> pathByAlias.put(t.a(), t.text()));
            for (RawWebSocket.Msg u : sub.all("UPDATE")) {
                String path = pathByAlias.get(u.a());
                boolean first = u.b() == 1;
                assertThat(u.flags()).as("%s #%d", path, u.b())
                        .isEqualTo(path.equals("fx/EURUSD") && !first ? UpdateFlags.DELTA : 0);
            }
        }
    }

    // ------------------------------------------------------------------ compression

    @Test
    void compressionIsNegotiatedWhenOnAndCompressesLargeFramesOnly() throws Exception {
        String offer = "permessage-deflate; client_max_window_bits";
        try (RingcastServer server = TestServers.start("features:\n  compression: true\n  compressionMinBytes: 256\n");
             WireSocket sub = new WireSocket(server.webSocketUrl(), offer, 0);
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            assertThat(sub.negotiatedExtensions()).startsWith("permessage-deflate").contains("server_no_context_takeover");
            sub.hello();
            sub.send(out -> WireCodec.writeSubscribe(out, 1, "t/#", Map.of()));
            sub.awaitMessage("SUBSCRIBED");

            String large = record(1).repeat(10); // 2,000 bytes of text
            pub.publish(1, "t/large", large);
            WireSocket.Frame largeFrame = sub.readFrame();
            pub.publish(2, "t/small", "tiny");
            WireSocket.Frame smallFrame = sub.readFrame();

            assertThat(largeFrame.compressed()).isTrue();
            assertThat(largeFrame.payloadBytes()).as("compressed size of a 2,000-byte value").isLessThan(500);
            assertThat(smallFrame.compressed()).as("below compressionMinBytes").isFalse();
            List<RawWebSocket.Msg> updates = sub.awaitMessages("UPDATE", 2);
            assertThat(new String(updates.get(0).value(), StandardCharsets.UTF_8)).isEqualTo(large);
            assertThat(new String(updates.get(1).value(), StandardCharsets.UTF_8)).isEqualTo("tiny");
            assertThat(server.stats().get(COMPRESSED_FRAMES)).isEqualTo(1);

            // the Java client offers it and gets the same values through Netty's decoder
            try (RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
                client.connect().get(10, TimeUnit.SECONDS);
                Recorded got = new Recorded();
                client.subscribe("t/#", got).confirmed().get(10, TimeUnit.SECONDS);
                pub.publish(3, "t/large", large + "!");
                Await.until(() -> got.lastSequence("t/large") == 2, "the second large value");
                assertThat(got.of("t/large")).extracting(Recorded.Got::text).containsExactly(large, large + "!");
                assertThat(server.stats().get(COMPRESSED_FRAMES)).as("snapshot reply and update, compressed")
                        .isGreaterThanOrEqualTo(3);
            }
        }
    }

    @Test
    void compressionIsNeverNegotiatedWhenOff() throws Exception {
        try (RingcastServer server = TestServers.start("");
             WireSocket sub = new WireSocket(server.webSocketUrl(), "permessage-deflate", 0);
             RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
            assertThat(sub.negotiatedExtensions()).isNull();
            sub.hello();
            sub.send(out -> WireCodec.writeSubscribe(out, 1, "t/#", Map.of()));
            sub.awaitMessage("SUBSCRIBED");
            pub.publish(1, "t/large", record(1).repeat(10));

            WireSocket.Frame frame = sub.readFrame();

            assertThat(frame.compressed()).isFalse();
            assertThat(frame.payloadBytes()).isGreaterThan(2000);
        }
    }

    @Test
    void anOfferThatLimitsTheServerWindowIsDeclined() throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  compression: true\n");
             WireSocket sub = new WireSocket(server.webSocketUrl(), "permessage-deflate; server_max_window_bits=10", 0)) {
            assertThat(sub.negotiatedExtensions()).isNull();
            sub.hello();
        }
    }

    // ------------------------------------------------------------------ conflation

    /**
     * A subscriber whose listener blocks stops reading; the publisher goes on. With conflation the
     * server holds at most the newest value per topic for it instead of a backlog: once it reads
     * again it gets fewer values, each topic's newest flagged CONFLATED, in order, and always the
     * publisher's last value.
     */
    @ParameterizedTest
    @ValueSource(strings = {"on-backpressure", "always"})
    void aSlowConflatedSubscriberGetsFewerNewestValuesEndingWithTheLast(String policy) throws Exception {
        int topics = 10;
        int perTopic = 200;
        String yaml = "features:\n  conflation: " + policy + "\n  conflationBacklogBytes: 65536\n";
        try (RingcastServer server = TestServers.start(yaml)) {
            SlowRun run = slowSubscriberRun(server, topics, perTopic);

            int received = run.got.updates.size();
            assertThat(received).as("values the slow subscriber received of " + topics * perTopic)
                    .isLessThan(topics * perTopic);
            assertThat(run.got.updates).extracting(Recorded.Got::kind).contains(UpdateKind.CONFLATED);
            for (int t = 0; t < topics; t++) {
                List<Recorded.Got> values = run.got.of("c/t" + t);
                assertThat(values.get(values.size() - 1).text()).isEqualTo("t" + t + "-" + perTopic);
                assertThat(values).extracting(Recorded.Got::sequence).isSorted().doesNotHaveDuplicates();
            }
            assertThat(server.stats().get(CONFLATED_UPDATES)).isPositive();
            assertThat(server.stats().get(SLOW_CONSUMER_DISCONNECTS)).isZero();
        }
    }

    @Test
    void withoutConflationTheSlowSubscriberGetsEveryValueInOrder() throws Exception {
        int topics = 10;
        int perTopic = 200;
        try (RingcastServer server = TestServers.start("limits:\n  outboundQueueBytes: 268435456\n")) {
            SlowRun run = slowSubscriberRun(server, topics, perTopic);

            for (int t = 0; t < topics; t++) {
                List<Recorded.Got> values = run.got.of("c/t" + t);
                assertThat(values).hasSize(perTopic);
                assertThat(values).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
                assertThat(values.get(perTopic - 1).text()).isEqualTo("t" + t + "-" + perTopic);
            }
            assertThat(server.stats().get(CONFLATED_UPDATES)).isZero();
        }
    }

    record SlowRun(Recorded got) {
    }

    /**
     * Subscribes a client whose listener blocks on the first value, publishes {@code perTopic}
     * 8 KiB values to each of {@code topics} topics (far more than socket buffers hold), then lets
     * the subscriber read and waits until it has every topic's last value.
     */
    private static SlowRun slowSubscriberRun(RingcastServer server, int topics, int perTopic) throws Exception {
        // leak detection samples here (advanced: 1 buffer in 128, with access records): paranoid
        // tracking of tens of MB of 8 KiB frames makes these tests several times slower
        SlowRun[] run = new SlowRun[1];
        FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.ADVANCED,
                () -> run[0] = slowSubscriberRunSampled(server, topics, perTopic));
        return run[0];
    }

    private static SlowRun slowSubscriberRunSampled(RingcastServer server, int topics, int perTopic) throws Exception {
        CountDownLatch unblock = new CountDownLatch(1);
        Recorded got = new Recorded();
        EventLoopGroup slowLoop = new NioEventLoopGroup(1);
        RingcastClient slow = RingcastClient.builder().addresses(server.webSocketUrl()).eventLoopGroup(slowLoop).build();
        RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build();
        try (slow; publisher) {
            slow.connect().get(10, TimeUnit.SECONDS);
            publisher.connect().get(10, TimeUnit.SECONDS);
            slow.subscribe("c/#", u -> {
                got.onUpdate(u);
                try {
                    unblock.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }).confirmed().get(10, TimeUnit.SECONDS);
            String pad = "x".repeat(8 * 1024);
            int roundsPerWait = 10;
            for (int i = 1; i <= perTopic; i += roundsPerWait) {
                CompletableFuture<?>[] acks = new CompletableFuture<?>[topics * roundsPerWait];
                int n = 0;
                for (int r = i; r < i + roundsPerWait; r++) {
                    for (int t = 0; t < topics; t++) {
                        // the value ends with its own name so a test can check which one arrived last
                        acks[n++] = publisher.publish("c/t" + t, (pad + "t" + t + "-" + r).getBytes(StandardCharsets.UTF_8));
                    }
                }
                CompletableFuture.allOf(acks).get(30, TimeUnit.SECONDS);
            }
            unblock.countDown();
            for (int t = 0; t < topics; t++) {
                String topic = "c/t" + t;
                Await.until(() -> got.lastSequence(topic) == perTopic, "the last value of " + topic);
            }
            // strip the padding for readable assertions
            Recorded stripped = new Recorded();
            for (Recorded.Got g : got.updates) {
                stripped.updates.add(new Recorded.Got(g.topic(), g.sequence(), g.kind(), g.text().substring(pad.length())));
            }
            return new SlowRun(stripped);
        } finally {
            slowLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
