package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --report-interval}: a row per interval whose deliveries add up to the run's measured
 * deliveries, and the run's own figures unchanged by it. Never asserts a speed.
 */
class IntervalReportTest {
    @Test
    @Timeout(60)
    void intervalsCoverTheMeasuredWindowAndAddUpToTheRun(@TempDir Path out) throws Exception {
        LoadGeneratorTest.Run r = LoadGeneratorTest.run("--embedded", "--subscribers", "5", "--topics", "20",
                "--publishers", "2", "--rate", "1000", "--duration", "2s", "--warmup", "500ms",
                "--report-interval", "500ms", "--out", out.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();

        String name = "1n-2p-5s-20t-200B-1000ps";
        JsonNode result = LoadGeneratorTest.JSON.readTree(out.resolve(name + ".json").toFile());
        LoadGeneratorTest.assertCleanRun(result);
        List<String> lines = Files.readAllLines(out.resolve(name + "-intervals.csv"), StandardCharsets.UTF_8);
        assertThat(lines.get(0)).isEqualTo(IntervalReporter.CSV_HEADER);
        List<String[]> rows = lines.subList(1, lines.size()).stream().map(l -> l.split(",")).toList();
        // ticks at 0.5, 1.0 and 1.5 s, then the last interval up to the end of the drain
        assertThat(rows).hasSize(4);
        assertThat(rows.get(0)[1]).isEqualTo("0.500");
        assertThat(Double.parseDouble(rows.get(3)[1])).isGreaterThanOrEqualTo(2.0);
        long deliveries = rows.stream().mapToLong(f -> Long.parseLong(f[3])).sum();
        assertThat(deliveries).isEqualTo(result.get("deliveries").get("measured").asLong())
                .isEqualTo(result.get("latencyMs").get("count").asLong());
        for (String[] f : rows) {
            assertThat(Long.parseLong(f[0])).as("epochMs").isPositive();
            // a slow machine may deliver nothing in an interval: then it has no percentiles
            assertThat(Double.parseDouble(f[7]) > 0).as("p99Ms when deliveries").isEqualTo(Long.parseLong(f[3]) > 0);
        }
        assertThat(r.out()).contains("  interval ").contains(name + "-intervals.csv");
    }

    @Test
    void notWithASweepAndNotTooShort() {
        LoadGeneratorTest.Run sweep = LoadGeneratorTest.run("--embedded", "--sweep", "--report-interval", "10s");
        assertThat(sweep.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(sweep.err()).contains("--report-interval applies to single runs");
        LoadGeneratorTest.Run tiny = LoadGeneratorTest.run("--embedded", "--report-interval", "10ms");
        assertThat(tiny.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(tiny.err()).contains("at least 100ms");
    }
}
