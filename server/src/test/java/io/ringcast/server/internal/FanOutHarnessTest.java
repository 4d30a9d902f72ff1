package io.ringcast.server.internal;

import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.Features;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The benchmark's fan-out core ({@link FanOutHarness}): every update reaches every subscriber once,
 * whatever the toggles the benchmark runs with, and closing it releases every buffer (the test JVM
 * runs Netty's leak detection paranoid, and a leak fails this class).
 */
@Timeout(60)
class FanOutHarnessTest {

    @Test
    void everyUpdateReachesEverySubscriberAndEveryBufferIsReleased() throws Exception {
        int subscribers = 50;
        int topics = 20;
        try (FanOutHarness h = new FanOutHarness(subscribers, 2, topics, 200, 1024)) {
            long before = h.delivered();
            assertThat(before).isEqualTo((long) topics * subscribers + subscribers);
            int updates = 5_000; // several times the ring: the sequencer waits for the readers
            for (int i = 0; i < updates; i++) {
                h.publish(i % topics, i % 64 == 63 || i == updates - 1);
            }
            h.awaitDelivered(before + (long) updates * subscribers);
            assertThat(h.delivered()).isEqualTo(before + (long) updates * subscribers);
        }
    }

    /** The toggle sets FanOutBenchmark runs, with subscribers that negotiated compression or not. */
    static Stream<Arguments> benchmarkedFeatures() {
        return Stream.of(
                Arguments.of("cache off", features(false, false, false, Conflation.OFF), false),
                Arguments.of("deltas", features(true, true, false, Conflation.OFF), false),
                Arguments.of("compression, compressed sessions", features(true, false, true, Conflation.OFF), true),
                Arguments.of("compression, plain sessions", features(true, false, true, Conflation.OFF), false),
                Arguments.of("all on, compressed sessions", features(true, true, true, Conflation.ON_BACKPRESSURE), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("benchmarkedFeatures")
    void publishDeliversEveryTopicToEverySubscriberWhateverTheToggles(String name, Features features,
                                                                     boolean compressedSessions) throws Exception {
        int subscribers = 12;
        int topics = 7;
        int readers = 3;
        try (FanOutHarness h = new FanOutHarness(subscribers, readers, topics, 300, 256, features, compressedSessions)) {
            assertThat(h.delivered()).as("topic creations and subscribe replies")
                    .isEqualTo((long) topics * subscribers + subscribers);
            long before = h.delivered();
            int rounds = 100; // each a batch over every topic; 700 updates pass a 256-slot ring
            for (int r = 0; r < rounds; r++) {
                for (int t = 0; t < topics; t++) {
                    h.publish(t, t == topics - 1);
                }
            }
            long expected = before + (long) rounds * topics * subscribers;
            h.awaitDelivered(expected);
            assertThat(h.delivered()).isEqualTo(expected);
        }
    }

    @Test
    void closingTwiceIsSafe() throws Exception {
        FanOutHarness h = new FanOutHarness(2, 1, 2, 16, 64);
        h.close();

        assertThatCode(h::close).doesNotThrowAnyException();
    }

    private static Features features(boolean cache, boolean deltas, boolean compression, Conflation conflation) {
        return new Features(cache, deltas, compression, conflation, 0, 262144, List.of());
    }
}
