package io.ringcast.benchmark.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The soak's samples over time, one per interval of the load generator ({@code --report-interval}):
 * the generator's figures for the interval, and what the server process looked like when it ended.
 * Stateless.
 *
 * <ul>
 *   <li>{@code heapAfterGcMiB}: heap in use after the last GC pause that ended at or before the
 *       interval's end ({@link GcLog}); empty before the first pause.</li>
 *   <li>{@code rssMiB}: the server's resident set ({@code VmRSS} of {@code /proc/PID/status}) from the
 *       sampler's reading nearest in time, if one lies within an interval of it; empty otherwise.</li>
 *   <li>{@code p99Ms}, {@code deliveriesPerSec}: the interval's own, from the generator.</li>
 * </ul>
 */
final class SoakSeries {
    /** One row of {@code soak-samples.csv}; NaN where a figure is missing. */
    record Sample(double timeS, long epochMs, double heapAfterGcMiB, double rssMiB, double p99Ms,
                  double deliveriesPerSec) {
    }

    /** One row of the generator's {@code NAME-intervals.csv}. */
    record Interval(long epochMs, double elapsedS, double lengthS, double deliveriesPerSec, double p99Ms) {
    }

    /** One reading of the sampler's {@code rss.csv}: {@code epochMs,rssKiB}. */
    record RssReading(long epochMs, long rssKiB) {
    }

    static final String CSV_HEADER = "timeS,epochMs,heapAfterGcMiB,rssMiB,p99Ms,deliveriesPerSec";
    private static final double MIB = 1024.0 * 1024.0;

    private SoakSeries() {
    }

    static List<Sample> merge(List<Interval> intervals, List<GcLog.Pause> pauses, List<RssReading> rss) {
        double nominalS = intervals.stream().mapToDouble(Interval::lengthS).sorted()
                .skip(intervals.size() / 2).findFirst().orElse(10);
        long rssToleranceMs = (long) (nominalS * 1000);
        List<Sample> samples = new ArrayList<>(intervals.size());
        int gc = 0;
        double heap = Double.NaN;
        for (Interval in : intervals) {
            while (gc < pauses.size() && pauses.get(gc).epochMs() <= in.epochMs()) {
                heap = pauses.get(gc).afterBytes() / MIB;
                gc++;
            }
            double rssMiB = Double.NaN;
            long best = Long.MAX_VALUE;
            for (RssReading r : rss) {
                long d = Math.abs(r.epochMs() - in.epochMs());
                if (d <= rssToleranceMs && d < best) {
                    best = d;
                    rssMiB = r.rssKiB() / 1024.0;
                }
            }
            samples.add(new Sample(in.elapsedS(), in.epochMs(), heap, rssMiB, in.p99Ms(), in.deliveriesPerSec()));
        }
        return samples;
    }

    static List<Interval> readIntervals(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
        List<String> header = lines.isEmpty() ? List.of() : Arrays.asList(lines.get(0).split(","));
        int epoch = column(header, "epochMs", csv);
        int elapsed = column(header, "elapsedS", csv);
        int length = column(header, "intervalS", csv);
        int rate = column(header, "deliveriesPerSec", csv);
        int p99 = column(header, "p99Ms", csv);
        List<Interval> out = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(",");
            out.add(new Interval(Long.parseLong(f[epoch]), Double.parseDouble(f[elapsed]),
                    Double.parseDouble(f[length]), Double.parseDouble(f[rate]), Double.parseDouble(f[p99])));
        }
        return out;
    }

    static List<RssReading> readRss(Path csv) throws IOException {
        List<RssReading> out = new ArrayList<>();
        for (String line : Files.readAllLines(csv, StandardCharsets.UTF_8)) {
            String[] f = line.trim().split(",");
            // the header, and a reading cut short when the server exited under the sampler
            if (f.length == 2 && !f[0].isEmpty() && !f[1].isEmpty() && Character.isDigit(f[0].charAt(0))
                    && Character.isDigit(f[1].charAt(0))) {
                out.add(new RssReading(Long.parseLong(f[0]), Long.parseLong(f[1])));
            }
        }
        return out;
    }

    static void writeCsv(Path file, List<Sample> samples) throws IOException {
        StringBuilder sb = new StringBuilder(CSV_HEADER).append('\n');
        for (Sample s : samples) {
            sb.append(String.format(Locale.ROOT, "%.1f,%d,%s,%s,%s,%s%n", s.timeS(), s.epochMs(),
                    figure(s.heapAfterGcMiB(), 1), figure(s.rssMiB(), 1), figure(s.p99Ms(), 3),
                    figure(s.deliveriesPerSec(), 1)));
        }
        Files.writeString(file, sb, StandardCharsets.UTF_8);
    }

    private static String figure(double v, int decimals) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static int column(List<String> header, String name, Path csv) throws IOException {
        int i = header.indexOf(name);
        if (i < 0) {
            throw new IOException(csv + ": no column " + name + " in its header " + header);
        }
        return i;
    }
}
