package io.ringcast.benchmark.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The soak's analysis on made-up inputs: the GC log parser, the merge, the PASS rule, the files. No sockets. */
class SoakReportTest {
    static final long T0 = 1_795_397_800_000L;

    @Test
    void readsTheHeapAfterEveryPauseAndSkipsTheRest() {
        List<GcLog.Pause> pauses = GcLog.parse(List.of(
                "[1795397779504ms] Using G1",
                "[1795397782466ms] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 27M->4M(512M) 110.663ms",
                "[1795397790000ms] GC(1) Concurrent Mark Cycle 12.345ms",
                "[1795397791000ms] GC(1) Pause Remark 40M->39M(512M) 2.100ms",
                "[1795397792000ms] GC(2) Pause Full (System.gc()) 1G->512K(2G) 80.5ms"));
        assertThat(pauses).hasSize(3);
        assertThat(pauses.get(0)).isEqualTo(new GcLog.Pause(1795397782466L, 0,
                "Pause Young (Normal) (G1 Evacuation Pause)", 27L << 20, 4L << 20, 512L << 20, 110.663));
        assertThat(pauses.get(1).kind()).isEqualTo("Pause Remark");
        assertThat(pauses.get(2).beforeBytes()).isEqualTo(1L << 30);
        assertThat(pauses.get(2).afterBytes()).isEqualTo(512L << 10);
    }

    @Test
    void eachSampleTakesTheLastPauseBeforeItAndTheNearestRssReading() {
        List<SoakSeries.Interval> intervals = List.of(
                new SoakSeries.Interval(T0 + 10_000, 10, 10, 200_000, 3.0),
                new SoakSeries.Interval(T0 + 20_000, 20, 10, 199_000, 4.0),
                new SoakSeries.Interval(T0 + 30_000, 30, 10, 201_000, 5.0));
        List<GcLog.Pause> pauses = List.of(pause(T0 + 1_000, 30), pause(T0 + 12_000, 31), pause(T0 + 19_000, 32));
        List<SoakSeries.RssReading> rss = List.of(new SoakSeries.RssReading(T0 + 9_000, 600 * 1024),
                new SoakSeries.RssReading(T0 + 21_000, 610 * 1024));
        List<SoakSeries.Sample> s = SoakSeries.merge(intervals, pauses, rss);
        assertThat(s).extracting(SoakSeries.Sample::heapAfterGcMiB).containsExactly(30.0, 32.0, 32.0);
        assertThat(s).extracting(SoakSeries.Sample::rssMiB).containsExactly(600.0, 610.0, 610.0);
        assertThat(s).extracting(SoakSeries.Sample::p99Ms).containsExactly(3.0, 4.0, 5.0);
    }

    @Test
    void flatMemoryPassesAndGrowthOrLossFails() {
        SoakVerdict.Counts clean = new SoakVerdict.Counts(0, 0, 0, 1000, 1000, 0, 0);
        // 30 minutes, one sample per 10 s: flat with noise
        assertThat(SoakVerdict.of(samples(0, 0), clean).failures()).isEmpty();
        // heap after GC +1 MiB per minute: 25 MiB between the windows, over the 16 MiB margin
        SoakVerdict heapGrows = SoakVerdict.of(samples(1, 0), clean);
        assertThat(heapGrows.failures()).singleElement().asString().startsWith("heap after GC grew");
        assertThat(heapGrows.heapSlopeMiBPer10Min()).isCloseTo(10.0, org.assertj.core.data.Offset.offset(0.5));
        // RSS +2 MiB per minute: 50 MiB, over max(5%, 32 MiB)
        assertThat(SoakVerdict.of(samples(0, 2), clean).failures()).singleElement().asString()
                .startsWith("RSS grew");
        SoakVerdict lost = SoakVerdict.of(samples(0, 0), new SoakVerdict.Counts(3, 0, 0, 1000, 1000, 0, 1));
        assertThat(lost.failures()).hasSize(2).anyMatch(f -> f.contains("lost 3"))
                .anyMatch(f -> f.contains("exited with 1"));
    }

    @Test
    void writesTheSamplesTheChartAndTheSummary(@TempDir Path dir) throws Exception {
        Path gen = Files.createDirectories(dir.resolve("generator"));
        StringBuilder csv = new StringBuilder("epochMs,elapsedS,intervalS,deliveries,deliveriesPerSec,p50Ms,p90Ms,"
                + "p99Ms,p999Ms,maxMs\n");
        StringBuilder gc = new StringBuilder("[" + T0 + "ms] Using G1\n");
        StringBuilder rss = new StringBuilder("epochMs,rssKiB\n");
        for (int i = 1; i <= 18; i++) {
            long t = T0 + i * 10_000L;
            csv.append(String.format(Locale.ROOT, "%d,%d.000,10.000,2000000,200000.0,0.7,1.0,%.3f,6.0,9.0%n", t,
                    i * 10, 3.0 + (i % 3)));
            gc.append(String.format(Locale.ROOT, "[%dms] GC(%d) Pause Young (Normal) (G1 Evacuation Pause) "
                    + "330M->%dM(512M) 20.5ms%n", t - 3000, i, 33 + i % 2));
            rss.append(t - 500).append(',').append(660 * 1024 + i).append('\n');
        }
        rss.append(T0 + 190_000).append(",\n"); // a reading cut short when the server stopped
        Files.writeString(gen.resolve("1n-4p-100s-100t-200B-2000ps-intervals.csv"), csv);
        Files.writeString(gen.resolve("1n-4p-100s-100t-200B-2000ps.json"), "{\"scenario\":\"x\",\"spec\":{\"rate\":"
                + "2000,\"subscribers\":100,\"topics\":100,\"payloadBytes\":200,\"selector\":\"#\"},\"publishes\":"
                + "{\"issued\":380000,\"acked\":380000,\"failed\":0},\"correctness\":{\"lost\":0,\"duplicated\":0,"
                + "\"outOfOrder\":0},\"deliveries\":{\"perSecond\":200000.0},\"latencyMs\":{\"p99\":4.0}}");
        Files.writeString(dir.resolve("gc.log"), gc);
        Files.writeString(dir.resolve("rss.csv"), rss);

        StringWriter out = new StringWriter();
        int code = SoakReport.run(new String[] {"--dir", dir.toString()}, new PrintWriter(out), new PrintWriter(out));
        assertThat(code).as(out.toString()).isZero();
        assertThat(out.toString()).contains("**PASS**").contains("| heap after GC, MiB | 33.");
        List<String> samples = Files.readAllLines(dir.resolve("soak-samples.csv"), StandardCharsets.UTF_8);
        assertThat(samples).hasSize(19).first().isEqualTo(SoakSeries.CSV_HEADER);
        assertThat(samples.get(1)).startsWith("10.0," + (T0 + 10_000) + ",34.0,660.0,4.000,200000.0");
        assertThat(Files.readAllBytes(dir.resolve("soak.png"))).startsWith(0x89, 'P', 'N', 'G');
        assertThat(dir.resolve("soak-summary.md")).content().contains("**PASS**");

        assertThat(SoakReport.run(new String[] {"--dir", dir.toString(), "--generator-exit", "1"},
                new PrintWriter(out), new PrintWriter(out))).isEqualTo(SoakReport.EXIT_FAIL);
        assertThat(SoakReport.run(new String[] {"--dir", dir.resolve("nothing").toString()}, new PrintWriter(out),
                new PrintWriter(out))).isEqualTo(SoakReport.EXIT_NO_INPUT);
    }

    /** 30 minutes of samples every 10 s, heap around 34 MiB and RSS around 660 MiB, each growing as given. */
    static List<SoakSeries.Sample> samples(double heapMiBPerMin, double rssMiBPerMin) {
        List<SoakSeries.Sample> s = new ArrayList<>();
        for (int i = 1; i <= 180; i++) {
            double min = i / 6.0;
            double noise = (i % 5) - 2;
            s.add(new SoakSeries.Sample(i * 10, T0 + i * 10_000L, 34 + noise + heapMiBPerMin * min,
                    660 + noise + rssMiBPerMin * min, 3 + noise / 4, 200_000 + noise * 100));
        }
        return s;
    }

    static GcLog.Pause pause(long epochMs, long afterMiB) {
        return new GcLog.Pause(epochMs, 0, "Pause Young", 300L << 20, afterMiB << 20, 512L << 20, 10);
    }
}
