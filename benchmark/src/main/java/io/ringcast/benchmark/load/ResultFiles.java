package io.ringcast.benchmark.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * Writes the results of a run or a sweep into the {@code --out} directory, named after the
 * scenario: {@code NAME.json}, {@code NAME.hgrm} (HdrHistogram percentile distribution, in
 * milliseconds) and {@code NAME-latency.png}; a sweep adds {@code TOPOLOGY-sweep.json} and
 * {@code TOPOLOGY-sweep.png}. Stateless.
 */
final class ResultFiles {
    /** {@code .hgrm} values are in nanoseconds; this scales them to milliseconds. */
    private static final double NS_PER_MS = 1e6;
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ResultFiles() {
    }

    /** Writes one run's files; returns their paths. */
    static List<Path> writeRun(Path dir, LoadRun.Outcome run) throws IOException {
        Files.createDirectories(dir);
        String name = run.result().scenario();
        List<Path> written = new ArrayList<>();
        written.add(writeJson(dir.resolve(name + ".json"), run.result()));
        written.add(writeHgrm(dir.resolve(name + ".hgrm"), run.histogram()));
        written.add(LatencyCharts.percentiles(dir.resolve(name + "-latency.png"), "End-to-end latency, " + name,
                List.of(name), List.of(run.histogram())));
        return written;
    }

    /** Writes a sweep's files, each step's {@code .hgrm} included; returns their paths. */
    static List<Path> writeSweep(Path dir, RateSweep.Outcome sweep) throws IOException {
        Files.createDirectories(dir);
        String name = sweep.result().scenario();
        List<Path> written = new ArrayList<>();
        written.add(writeJson(dir.resolve(name + "-sweep.json"), sweep.result()));
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < sweep.histograms().size(); i++) {
            SweepResult.Step step = sweep.result().steps().get(i);
            written.add(writeHgrm(dir.resolve(step.result().scenario() + ".hgrm"), sweep.histograms().get(i)));
            labels.add(step.offeredRate() + "/s" + (step.clean() ? "" : " (not clean)"));
        }
        written.add(LatencyCharts.sweep(dir.resolve(name + "-sweep.png"), sweep.result()));
        written.add(LatencyCharts.percentiles(dir.resolve(name + "-sweep-latency.png"),
                "End-to-end latency by offered rate, " + name, labels, sweep.histograms()));
        return written;
    }

    static Path writeJson(Path file, Object value) throws IOException {
        JSON.writeValue(file.toFile(), value);
        return file;
    }

    static Path writeHgrm(Path file, Histogram histogram) throws IOException {
        try (OutputStream os = Files.newOutputStream(file);
             PrintStream ps = new PrintStream(os, false, StandardCharsets.UTF_8)) {
            histogram.outputPercentileDistribution(ps, NS_PER_MS);
        }
        return file;
    }
}
