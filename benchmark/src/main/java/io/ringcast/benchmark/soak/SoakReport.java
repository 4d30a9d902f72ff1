package io.ringcast.benchmark.soak;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -cp ringcast-bench.jar io.ringcast.benchmark.soak.SoakReport --dir DIR}: the analysis
 * step of {@code scripts/soak.sh}. Reads what the script left in {@code DIR}:
 * <ul>
 *   <li>{@code gc.log}: the server's {@code -Xlog:gc:file=...:timemillis} ({@link GcLog});</li>
 *   <li>{@code rss.csv}: {@code epochMs,rssKiB}, the server's {@code VmRSS} every few seconds;</li>
 *   <li>{@code generator/}: the load generator's run JSON and its {@code NAME-intervals.csv}
 *       ({@code --report-interval}).</li>
 * </ul>
 * and writes {@code soak-samples.csv} ({@link SoakSeries}), {@code soak.png} ({@link SoakChart}) and
 * {@code soak-summary.md}, which it also prints. Exit codes: 0 PASS, 1 FAIL ({@link SoakVerdict}:
 * growth, loss, or a generator that did not exit 0), 3 when the inputs are missing or unreadable.
 */
@Command(name = "soak-report", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Merges a soak run's GC log, RSS samples and load-generator intervals into samples, a chart "
                + "and a PASS/FAIL summary (see docs/operations.md)")
public final class SoakReport implements Callable<Integer> {
    static final int EXIT_FAIL = 1;
    static final int EXIT_NO_INPUT = 3;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "The soak's output directory")
    Path dir;

    @Option(names = "--generator-exit", defaultValue = "0",
            description = "The load generator's exit code (default ${DEFAULT-VALUE})")
    int generatorExit;

    private final PrintWriter out;

    SoakReport(PrintWriter out) {
        this.out = out;
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new SoakReport(out));
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            err.println("soak-report: " + e);
            return EXIT_NO_INPUT;
        });
        return cl.execute(args);
    }

    @Override
    public Integer call() throws IOException {
        Path generatorDir = dir.resolve("generator");
        Path intervalsCsv = single(generatorDir, "-intervals.csv");
        Path runJson = single(generatorDir, ".json");
        JsonNode run = JSON.readTree(runJson.toFile());
        List<GcLog.Pause> pauses = GcLog.read(dir.resolve("gc.log"));
        List<SoakSeries.Sample> samples = SoakSeries.merge(SoakSeries.readIntervals(intervalsCsv), pauses,
                SoakSeries.readRss(dir.resolve("rss.csv")));
        SoakVerdict verdict = SoakVerdict.of(samples, counts(run, generatorExit));

        String title = title(run, samples);
        SoakSeries.writeCsv(dir.resolve("soak-samples.csv"), samples);
        SoakChart.write(dir.resolve("soak.png"), title, samples, pauses);
        String summary = summary(title, run, samples, pauses, verdict);
        Files.writeString(dir.resolve("soak-summary.md"), summary, StandardCharsets.UTF_8);
        out.print(summary);
        out.flush();
        return verdict.passed() ? 0 : EXIT_FAIL;
    }

    static SoakVerdict.Counts counts(JsonNode run, int generatorExit) {
        JsonNode c = run.path("correctness");
        JsonNode p = run.path("publishes");
        return new SoakVerdict.Counts(c.path("lost").asLong(), c.path("duplicated").asLong(),
                c.path("outOfOrder").asLong(), p.path("issued").asLong(), p.path("acked").asLong(),
                p.path("failed").asLong(), generatorExit);
    }

    private static String title(JsonNode run, List<SoakSeries.Sample> samples) {
        JsonNode spec = run.path("spec");
        double minutes = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).timeS() / 60;
        return String.format(Locale.ROOT, "Soak, %.0f min: %,d publishes/s, %,d subscribers on '%s', %,d topics of "
                        + "%d B (%s)", minutes, spec.path("rate").asInt(), spec.path("subscribers").asInt(),
                spec.path("selector").asText(), spec.path("topics").asInt(), spec.path("payloadBytes").asInt(),
                run.path("startedAt").asText());
    }

    static String summary(String title, JsonNode run, List<SoakSeries.Sample> samples, List<GcLog.Pause> pauses,
                          SoakVerdict v) {
        StringBuilder sb = new StringBuilder();
        sb.append("# ").append(title).append("\n\n");
        SoakVerdict.Window f = v.first();
        SoakVerdict.Window l = v.last();
        sb.append(String.format(Locale.ROOT, "%d samples, one per %s; figures are medians of the window's samples.%n%n",
                samples.size(), samples.size() < 2 ? "interval"
                        : String.format(Locale.ROOT, "%.0f s", (samples.get(1).timeS() - samples.get(0).timeS()))));
        sb.append(String.format(Locale.ROOT, "| | first %s (%d samples) | last %s (%d samples) | change | limit |%n",
                span(f), f.samples(), span(l), l.samples()));
        sb.append("| --- | ---: | ---: | ---: | ---: |\n");
        row(sb, "heap after GC, MiB", f.heapAfterGcMiB(), l.heapAfterGcMiB(), 1, String.format(Locale.ROOT, "%.1f",
                SoakVerdict.limit(f.heapAfterGcMiB(), SoakVerdict.HEAP_MARGIN_FRACTION, SoakVerdict.HEAP_MARGIN_MIB)));
        row(sb, "RSS, MiB", f.rssMiB(), l.rssMiB(), 1, String.format(Locale.ROOT, "%.1f",
                SoakVerdict.limit(f.rssMiB(), SoakVerdict.RSS_MARGIN_FRACTION, SoakVerdict.RSS_MARGIN_MIB)));
        row(sb, "p99, ms", f.p99Ms(), l.p99Ms(), 2, "(reported)");
        row(sb, "deliveries/s", f.deliveriesPerSec(), l.deliveriesPerSec(), 0, "(reported)");
        sb.append('\n');
        sb.append(String.format(Locale.ROOT, "- Slope (least squares over every sample): heap after GC %+.2f MiB per "
                + "10 min, RSS %+.2f MiB per 10 min.%n", v.heapSlopeMiBPer10Min(), v.rssSlopeMiBPer10Min()));
        double maxPause = pauses.stream().mapToDouble(GcLog.Pause::pauseMs).max().orElse(0);
        long minAfter = pauses.stream().mapToLong(GcLog.Pause::afterBytes).min().orElse(0) >> 20;
        long maxAfter = pauses.stream().mapToLong(GcLog.Pause::afterBytes).max().orElse(0) >> 20;
        sb.append(String.format(Locale.ROOT, "- Server GC: %d pauses, longest %.1f ms, heap after GC between %d and "
                + "%d MiB.%n", pauses.size(), maxPause, minAfter, maxAfter));
        SoakVerdict.Counts c = v.counts();
        JsonNode lat = run.path("latencyMs");
        sb.append(String.format(Locale.ROOT, "- Load generator, whole run: %,.0f deliveries/s, p50 %.2f, p99 %.2f, "
                        + "p99.9 %.2f, max %.1f ms; publishes %,d issued, %,d acked, %,d failed; lost %d, duplicated %d,"
                        + " out of order %d; exit code %d.%n", run.path("deliveries").path("perSecond").asDouble(),
                lat.path("p50").asDouble(), lat.path("p99").asDouble(), lat.path("p999").asDouble(),
                lat.path("max").asDouble(), c.issued(), c.acked(), c.failedPublishes(), c.lost(), c.duplicated(),
                c.outOfOrder(), c.generatorExit()));
        sb.append(String.format(Locale.ROOT, "- Generator CPU: %.0f%% of one core; load average at start %.2f.%n",
                run.path("cpu").path("percentOfOneCore").asDouble(), run.path("machine").path("loadAverage").asDouble()));
        sb.append('\n');
        if (v.passed()) {
            sb.append("**PASS**: nothing grew beyond its margin, and every value arrived once and in order.\n");
        } else {
            sb.append("**FAIL**:\n");
            for (String why : v.failures()) {
                sb.append("- ").append(why).append('\n');
            }
        }
        sb.append(String.format(Locale.ROOT, "%nRule: the last window's median heap after GC <= the first's + max(%.0f%%,"
                        + " %.0f MiB), its median RSS <= the first's + max(%.0f%%, %.0f MiB), nothing lost, duplicated or "
                        + "reordered, every publish acked, generator exit 0. Windows: the first and last %.0f minutes "
                        + "(a third of the run when it is shorter than %.0f minutes).%n",
                SoakVerdict.HEAP_MARGIN_FRACTION * 100, SoakVerdict.HEAP_MARGIN_MIB,
                SoakVerdict.RSS_MARGIN_FRACTION * 100, SoakVerdict.RSS_MARGIN_MIB, SoakVerdict.WINDOW_S / 60,
                3 * SoakVerdict.WINDOW_S / 60));
        return sb.toString();
    }

    private static String span(SoakVerdict.Window w) {
        return String.format(Locale.ROOT, "%.1f-%.1f min", w.fromS() / 60, w.untilS() / 60);
    }

    private static void row(StringBuilder sb, String name, double first, double last, int decimals, String limit) {
        String fmt = "%,." + decimals + "f";
        String change = Double.isNaN(first) || Double.isNaN(last) ? "" : String.format(Locale.ROOT, "%+,." + decimals
                + "f (%+.0f%%)", last - first, first == 0 ? 0 : 100 * (last - first) / first);
        sb.append("| ").append(name).append(" | ").append(String.format(Locale.ROOT, fmt, first)).append(" | ")
                .append(String.format(Locale.ROOT, fmt, last)).append(" | ").append(change).append(" | ").append(limit)
                .append(" |\n");
    }

    /** The one file in {@code dir} whose name ends with {@code suffix} (a sweep's files excluded). */
    private static Path single(Path dir, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> found = files.filter(p -> p.getFileName().toString().endsWith(suffix))
                    .filter(p -> !p.getFileName().toString().contains("-sweep")).toList();
            if (found.size() != 1) {
                throw new IOException(dir + ": expected one *" + suffix + " file, found " + found.size());
            }
            return found.get(0);
        }
    }
}
