package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec validation, naming, round robin over servers, and the small parsers. No sockets. */
class LoadSpecTest {
    static LoadSpec spec(int topics, int publishers) {
        return new LoadSpec(List.of("ws://a:1/ws", "ws://b:2/ws", "ws://c:3/ws"), false, topics, 200, 10_000,
                publishers, 100, "#", 30_000, 5_000, 2, "nio", Padding.ZEROS, List.of());
    }

    @Test
    void topicPathsArePaddedToTheWidestIndex() {
        assertThat(spec(1000, 4).topicPath(7)).isEqualTo("bench/t0007");
        assertThat(spec(100_000, 4).topicPath(7)).isEqualTo("bench/t00007");
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
                Padding.ZEROS, List.of())).hasMessageStartingWith("--payload-bytes");
        assertThatThrownBy(() -> new LoadSpec(List.of("ws://a:1/ws"), false, 10, 200, 1, 1, 1, "#", 1000, 0, 1, "nio",
                Padding.ZEROS, List.of(0L))).hasMessageStartingWith("--server-pids");
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
    void processCpuReadsUserAndSystemTicksPastACommandNameWithSpacesAndParentheses() {
        String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 40 0 5 6 7";
        assertThat(ProcessCpu.ticksOf(stat)).isEqualTo(1234 + 56);
        assertThat(ProcessCpu.cpuTimeNs(List.of(ProcessHandle.current().pid()))).isPositive();
        assertThat(ProcessCpu.cpuTimeNs(List.of(ProcessHandle.current().pid(), Long.MAX_VALUE))).isEqualTo(-1);
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
