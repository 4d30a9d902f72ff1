package io.ringcast.benchmark.jmh;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import java.util.Collection;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs both fan-out benchmarks once, in this JVM (so with {@code -ea} and paranoid leak detection),
 * at a tiny size, so that they cannot rot. It asserts that every update reached every subscriber
 * (each benchmark's iteration teardown also fails the run on a missing or extra delivery), and the
 * leak extension fails the class if a frame was not released. It never asserts a speed.
 */
@Timeout(120)
class FanOutBenchmarkSmokeTest {
    private static final int SUBSCRIBERS = 10;
    private static final int UPDATES = 1_000;

    @Test
    void everyUpdateReachesEverySubscriberInOursAndInTheBaseline() throws Exception {
        Options options = new OptionsBuilder()
                .include("^" + FanOutBenchmark.class.getName() + "\\.")
                .include("^" + QueueFanOutBenchmark.class.getName() + "\\.")
                .param("subscribers", String.valueOf(SUBSCRIBERS))
                .param("updates", String.valueOf(UPDATES))
                .param("topics", "100")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1)
                .shouldFailOnError(true)
                .build();

        Collection<RunResult> results = new Runner(options).run();

        assertThat(results).extracting(r -> r.getParams().getBenchmark()).containsExactlyInAnyOrder(
                FanOutBenchmark.class.getName() + ".fanOut", QueueFanOutBenchmark.class.getName() + ".fanOut");
        for (RunResult r : results) {
            assertThat(r.getSecondaryResults().get("deliveries").getScore())
                    .as("deliveries of %s", r.getParams().getBenchmark())
                    .isEqualTo((double) SUBSCRIBERS * UPDATES);
        }
    }
}
