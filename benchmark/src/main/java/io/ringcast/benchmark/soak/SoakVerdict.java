package io.ringcast.benchmark.soak;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Whether anything grew: the soak's PASS rule, applied to its samples and the generator's counts.
 *
 * <p>The run's <b>first</b> and <b>last window</b> are its first and last {@link #WINDOW_S} (five
 * minutes), or its first and last third when it is shorter than three windows. Each figure of a
 * window is the median of its samples, so one slow interval or one late GC does not decide. The run
 * passes when
 * <ul>
 *   <li>the heap after GC of the last window is at most the first window's plus
 *       {@link #HEAP_MARGIN_FRACTION} of it or {@link #HEAP_MARGIN_MIB}, whichever is larger;</li>
 *   <li>the RSS of the last window is at most the first window's plus
 *       {@link #RSS_MARGIN_FRACTION} of it or {@link #RSS_MARGIN_MIB}, whichever is larger;</li>
 *   <li>nothing was lost, duplicated or reordered, every publish was acked, and the generator
 *       exited with 0.</li>
 * </ul>
 * p99 and deliveries/s are reported, first against last, but never fail the run: on a shared
 * machine they move with the neighbours. The slopes are least-squares lines through every sample,
 * in MiB per ten minutes: a figure to read, not a rule. Stateless after construction.
 */
record SoakVerdict(Window first, Window last, double heapSlopeMiBPer10Min, double rssSlopeMiBPer10Min,
                   Counts counts, List<String> failures) {

    /** Length of the first and last window, unless the run is shorter than three of them. */
    static final double WINDOW_S = 300;
    static final double HEAP_MARGIN_FRACTION = 0.10;
    static final double HEAP_MARGIN_MIB = 16;
    static final double RSS_MARGIN_FRACTION = 0.05;
    static final double RSS_MARGIN_MIB = 32;

    /** Medians over the samples whose time lies in {@code [fromS, untilS]}. */
    record Window(double fromS, double untilS, int samples, double heapAfterGcMiB, double rssMiB, double p99Ms,
                  double deliveriesPerSec) {
    }

    /** What the generator counted over the whole run (its JSON) and how it exited. */
    record Counts(long lost, long duplicated, long outOfOrder, long issued, long acked, long failedPublishes,
                  int generatorExit) {
    }

    boolean passed() {
        return failures.isEmpty();
    }

    static SoakVerdict of(List<SoakSeries.Sample> samples, Counts counts) {
        double endS = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).timeS();
        double windowS = Math.min(WINDOW_S, endS / 3);
        Window first = window(samples, 0, windowS);
        Window last = window(samples, endS - windowS, endS);
        List<String> failures = new ArrayList<>();
        if (samples.size() < 3) {
            failures.add("only " + samples.size() + " sample(s): too short to tell growth from noise");
        }
        growth(failures, "heap after GC", first.heapAfterGcMiB(), last.heapAfterGcMiB(), HEAP_MARGIN_FRACTION,
                HEAP_MARGIN_MIB);
        growth(failures, "RSS", first.rssMiB(), last.rssMiB(), RSS_MARGIN_FRACTION, RSS_MARGIN_MIB);
        if (counts.lost() + counts.duplicated() + counts.outOfOrder() > 0) {
            failures.add(String.format(Locale.ROOT, "not clean: lost %d, duplicated %d, out of order %d",
                    counts.lost(), counts.duplicated(), counts.outOfOrder()));
        }
        if (counts.failedPublishes() > 0 || counts.acked() != counts.issued()) {
            failures.add(String.format(Locale.ROOT, "publishes: %d issued, %d acked, %d failed", counts.issued(),
                    counts.acked(), counts.failedPublishes()));
        }
        if (counts.generatorExit() != 0) {
            failures.add("the load generator exited with " + counts.generatorExit());
        }
        return new SoakVerdict(first, last, slopePer10Min(samples, SoakSeries.Sample::heapAfterGcMiB),
                slopePer10Min(samples, SoakSeries.Sample::rssMiB), counts, List.copyOf(failures));
    }

    /** The allowed growth of a figure whose first-window median is {@code first}. */
    static double limit(double first, double fraction, double minimumMiB) {
        return first + Math.max(first * fraction, minimumMiB);
    }

    private static void growth(List<String> failures, String name, double first, double last, double fraction,
                               double minimumMiB) {
        if (Double.isNaN(first) || Double.isNaN(last)) {
            failures.add(name + ": no samples in the first or the last window");
        } else if (last > limit(first, fraction, minimumMiB)) {
            failures.add(String.format(Locale.ROOT, "%s grew from %.1f to %.1f MiB (limit %.1f MiB: +%.0f%% or "
                    + "+%.0f MiB)", name, first, last, limit(first, fraction, minimumMiB), fraction * 100, minimumMiB));
        }
    }

    static Window window(List<SoakSeries.Sample> samples, double fromS, double untilS) {
        List<SoakSeries.Sample> in = samples.stream().filter(s -> s.timeS() >= fromS && s.timeS() <= untilS)
                .toList();
        return new Window(fromS, untilS, in.size(), median(in, SoakSeries.Sample::heapAfterGcMiB),
                median(in, SoakSeries.Sample::rssMiB), median(in, SoakSeries.Sample::p99Ms),
                median(in, SoakSeries.Sample::deliveriesPerSec));
    }

    static double median(List<SoakSeries.Sample> samples, ToDoubleFunction<SoakSeries.Sample> figure) {
        double[] v = samples.stream().mapToDouble(figure).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** Least-squares slope of a figure against time, in units per 600 s; NaN with fewer than two points. */
    static double slopePer10Min(List<SoakSeries.Sample> samples, ToDoubleFunction<SoakSeries.Sample> figure) {
        double[][] xy = samples.stream().filter(s -> !Double.isNaN(figure.applyAsDouble(s)))
                .map(s -> new double[] {s.timeS(), figure.applyAsDouble(s)}).toArray(double[][]::new);
        if (xy.length < 2) {
            return Double.NaN;
        }
        double mx = Arrays.stream(xy).mapToDouble(p -> p[0]).average().orElse(0);
        double my = Arrays.stream(xy).mapToDouble(p -> p[1]).average().orElse(0);
        double sxy = 0;
        double sxx = 0;
        for (double[] p : xy) {
            sxy += (p[0] - mx) * (p[1] - my);
            sxx += (p[0] - mx) * (p[0] - mx);
        }
        return sxx == 0 ? Double.NaN : sxy / sxx * 600;
    }
}
