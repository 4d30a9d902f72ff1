package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.SubscribeOptions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec validation, naming, round robin over servers, and the small parsers. No sockets. */
class LoadSpecTest {
    static LoadSpec spec(int topics, int publishers) {
        return new LoadSpec(List.of("ws://a:1/ws", "ws://b:2/ws", "ws://c:3/ws"), false, topics, 200, 10_000,
                publishers, 100, "#", 30_000, 5_000, 2, "nio", Padding.ZEROS, List.of(), SubscriberClient.LEAN);
    }

    @Test
    void topicPathsArePaddedToTheWidestIndex() {
        assertThat(spec(1000, 4).topicPath(7)).isEqualTo("bench/t0007");
        assertThat(spec(100_000, 4).topicPath(7)).isEqualTo("bench/t00007");
    }

    @Test
    void topicIndicesAreReadBackFromThePathsAndNothingElse() {
        LoadSpec s = spec(1000, 4);
        for (int t : new int[] {0, 7, 42, 999}) {
            assertThat(s.topicIndex(s.topicPath(t))).isEqualTo(t);
        }
        assertThat(spec(100_000, 4).topicIndex("bench/t00007")).isEqualTo(7);
        for (String notOurs : new String[] {"bench/t1000", "bench/t007", "bench/t00007", "bench/t", "bench/x0007",
                "demo/t0007", "bench/t00a7", "bench/t-007", "bench/t99999999999"}) {
            assertThat(s.topicIndex(notOurs)).as(notOurs).isEqualTo(-1);
        }
    }

    @Test
    void leanSubscribersRefuseTls() {
        assertThatThrownBy(() -> new LoadSpec(List.of("wss://a:1/ws"), false, 10, 200, 1, 1, 1, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(), SubscriberClient.LEAN)).hasMessageStartingWith("--subscriber-client")
                .hasMessageContaining("--subscriber-client java");
        assertThat(new LoadSpec(List.of("wss://a:1/ws"), false, 10, 200, 1, 1, 1, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(), SubscriberClient.JAVA).servers()).containsExactly("wss://a:1/ws");
    }

    @Test
    void clientsStartAtTheirOwnServerRoundRobin() {
        assertThat(spec(10, 1).addressesFor(4)).containsExactly("ws://b:2/ws", "ws://c:3/ws", "ws://a:1/ws");
    }

    @Test
    void scenarioIsNamedByTopology() {
        assertThat(spec(1000, 4).scenario()).isEqualTo("3n-4p-100s-1000t-200B-10000ps");
    }

    @Test
    void errorsNameTheFlag() {
        assertThatThrownBy(() -> spec(2, 4)).hasMessageStartingWith("--publishers");
        assertThatThrownBy(() -> new LoadSpec(List.of("ws://a:1/ws"), false, 10, 10, 1, 1, 1, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(), SubscriberClient.LEAN)).hasMessageStartingWith("--payload-bytes");
        assertThatThrownBy(() -> new LoadSpec(List.of("ws://a:1/ws"), false, 10, 200, 1, 1, 1, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(0L), SubscriberClient.LEAN)).hasMessageStartingWith("--server-pids");
    }

    static LoadSpec json(int payloadBytes, int jsonFields, int viewShapes) {
        return new LoadSpec(List.of("ws://a:1/ws"), false, 1000, payloadBytes, 1000, 1, 1000, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(), SubscriberClient.LEAN, ValueFormat.JSON, jsonFields, viewShapes);
    }

    @Test
    void subscribersAreSpreadRoundRobinOverTheViewShapes() {
        LoadSpec s = json(200, 10, 10);
        assertThat(s.subscribeOptions(0)).isEqualTo(JsonPayload.viewShape(0));
        assertThat(s.subscribeOptions(7)).isEqualTo(JsonPayload.viewShape(7));
        assertThat(s.subscribeOptions(13)).isEqualTo(JsonPayload.viewShape(3));
        assertThat(json(200, 10, 0).subscribeOptions(13)).isEqualTo(SubscribeOptions.NONE);
        assertThat(spec(10, 1).subscribeOptions(3)).isEqualTo(SubscribeOptions.NONE);
    }

    @Test
    void jsonValuesAndViewsNameTheScenario() {
        assertThat(json(200, 10, 10).scenario()).isEqualTo("1n-1p-1000s-1000t-200B-json-10v-1000ps");
        assertThat(json(200, 10, 0).topology()).isEqualTo("1n-1p-1000s-1000t-200B-json");
        assertThat(json(200, 10, 10).withRate(200).viewShapes()).isEqualTo(10);
    }

    @Test
    void viewErrorsNameTheFlagAndWhatToDo() {
        assertThatThrownBy(() -> new LoadSpec(List.of("ws://a:1/ws"), false, 10, 200, 1, 1, 1, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(), SubscriberClient.LEAN, ValueFormat.BINARY, 10, 2))
                .hasMessageStartingWith("--view-shapes").hasMessageContaining("--value-format json");
        assertThatThrownBy(() -> json(400, 10, 11)).hasMessageStartingWith("--view-shapes")
                .hasMessageContaining("--json-fields (10)");
        assertThatThrownBy(() -> json(200, 10, -1)).hasMessageStartingWith("--view-shapes");
        assertThatThrownBy(() -> json(190, 10, 0)).hasMessageStartingWith("--payload-bytes")
                .hasMessageContaining(JsonPayload.minBytes(10) + " bytes");
        assertThatThrownBy(() -> json(2000, 0, 0)).hasMessageStartingWith("--json-fields");
        assertThatThrownBy(() -> json(2000, 101, 0)).hasMessageStartingWith("--json-fields");
        assertThat(json(JsonPayload.minBytes(10), 10, 10).viewShapes()).isEqualTo(10);
    }

    @Test
    void eachRunEncodesItsOwnFormat() {
        byte[] json = json(200, 10, 0).encodeValue(42, 0, 5, 3, 7);
        assertThat(json).hasSize(200);
        ValueHeader h = new ValueHeader(ValueFormat.JSON);
        assertThat(h.read(json)).isTrue();
        assertThat(h.topicIndex).isEqualTo(5);
        byte[] binary = spec(10, 1).encodeValue(42, 0, 5, 3, 7);
        assertThat(binary).hasSize(200);
        assertThat(PayloadCodec.counter(binary)).isEqualTo(3);
    }

    @Test
    void payloadHeaderRoundTrips() {
        byte[] v = PayloadCodec.encode(200, Padding.ZEROS, 42, 3, 999, 123_456_789_012L, -5L);
        assertThat(v).hasSize(200);
        assertThat(PayloadCodec.isFromRun(v, 42)).isTrue();
        assertThat(PayloadCodec.isFromRun(v, 43)).isFalse();
        assertThat(PayloadCodec.publisherId(v)).isEqualTo(3);
        assertThat(PayloadCodec.topicIndex(v)).isEqualTo(999);
        assertThat(PayloadCodec.counter(v)).isEqualTo(123_456_789_012L);
        assertThat(PayloadCodec.intendedSendNs(v)).isEqualTo(-5L);
    }

    @Test
    void payloadHeaderReadsInPlaceFromABufferAsFromAnArray() {
        byte[] v = PayloadCodec.encode(64, Padding.TEXT, 42, 3, 999, 123_456_789_012L, -5L);
        // the value at index 11 of a larger buffer, as in a frame after the UPDATE's own header
        ByteBuf frame = Unpooled.buffer(100).writeZero(11).writeBytes(v).writeZero(7);
        try {
            assertThat(PayloadCodec.isFromRun(frame, 11, v.length, 42)).isTrue();
            assertThat(PayloadCodec.isFromRun(frame, 11, v.length, 43)).isFalse();
            assertThat(PayloadCodec.isFromRun(frame, 11, PayloadCodec.HEADER_BYTES - 1, 42)).isFalse();
            assertThat(PayloadCodec.publisherId(frame, 11)).isEqualTo(PayloadCodec.publisherId(v)).isEqualTo(3);
            assertThat(PayloadCodec.topicIndex(frame, 11)).isEqualTo(PayloadCodec.topicIndex(v)).isEqualTo(999);
            assertThat(PayloadCodec.counter(frame, 11)).isEqualTo(PayloadCodec.counter(v));
            assertThat(PayloadCodec.intendedSendNs(frame, 11)).isEqualTo(PayloadCodec.intendedSendNs(v));
            assertThat(frame.readerIndex()).as("read in place, indices untouched").isZero();
        } finally {
            frame.release();
        }
    }

    @Test
    void processCpuReadsUserAndSystemTicksPastACommandNameWithSpacesAndParentheses() {
        String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 40 0 5 6 7";
        assertThat(ProcessCpu.ticksOf(stat)).isEqualTo(1234 + 56);
        assertThat(ProcessCpu.cpuTimeNs(List.of(ProcessHandle.current().pid()))).isPositive();
        assertThat(ProcessCpu.cpuTimeNs(List.of(ProcessHandle.current().pid(), Long.MAX_VALUE))).isEqualTo(-1);
    }

    @Test
    void processMemoryIsThePeakResidentSetOfProcStatus() {
        String status = "Name:\tjava\nVmPeak:\t 9000000 kB\nVmHWM:\t  523456 kB\nVmRSS:\t  400000 kB\n";
        assertThat(ProcessCpu.peakRssKbOf(status)).isEqualTo(523_456);
        assertThat(ProcessCpu.peakRssBytes(List.of(ProcessHandle.current().pid()))).isGreaterThan(10L << 20);
        assertThat(ProcessCpu.peakRssBytes(List.of(ProcessHandle.current().pid(), Long.MAX_VALUE))).isEqualTo(-1);
        assertThat(ProcessCpu.kbOf(status, "VmRSS:")).isEqualTo(400_000);
        assertThat(ProcessCpu.rssBytes(List.of(ProcessHandle.current().pid()))).isGreaterThan(10L << 20);
        assertThat(ProcessCpu.rssBytes(List.of(ProcessHandle.current().pid(), Long.MAX_VALUE))).isEqualTo(-1);
    }

    static LoadSpec jetStream(List<String> servers, boolean embedded, String selector, int viewShapes) {
        return new LoadSpec(servers, embedded, 100, 200, 1000, 5, 100, selector, 1000, 0, 1, "nio", Padding.ZEROS,
                List.of(), SubscriberClient.LEAN, viewShapes > 0 ? ValueFormat.JSON : ValueFormat.BINARY,
                LoadSpec.DEFAULT_JSON_FIELDS, viewShapes, Target.JETSTREAM);
    }

    @Test
    void aJetStreamRunTakesNatsUrlsEveryTopicAndNoViewsAndSaysSoInItsName() {
        List<String> nats = List.of("nats://127.0.0.1:4221", "nats://127.0.0.1:4222");
        LoadSpec spec = jetStream(nats, false, "#", 0);
        assertThat(spec.scenario()).isEqualTo("2n-5p-100s-100t-200B-jetstream-1000ps");
        assertThat(spec.addressesFor(1)).containsExactly("nats://127.0.0.1:4222", "nats://127.0.0.1:4221");
        assertThat(spec.withRate(200).target()).isEqualTo(Target.JETSTREAM);
        assertThatThrownBy(() -> jetStream(List.of("ws://a:1/ws"), false, "#", 0)).hasMessageContaining("nats://");
        assertThatThrownBy(() -> jetStream(nats, true, "#", 0)).hasMessageContaining("--embedded");
        assertThatThrownBy(() -> jetStream(nats, false, "bench/t0001", 0)).hasMessageContaining("--selector");
        assertThatThrownBy(() -> jetStream(nats, false, "#", 2)).hasMessageContaining("--view-shapes");
        assertThat(spec(10, 1).target()).isEqualTo(Target.RINGCAST);
    }

    @Test
    void durationsReadShortAndIsoForms() {
        DurationConverter c = new DurationConverter();
        assertThat(c.convert("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(c.convert("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.convert("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(c.convert("PT1S")).isEqualTo(Duration.ofSeconds(1));
        assertThatThrownBy(() -> c.convert("soon")).hasMessageContaining("not a duration");
    }
}
