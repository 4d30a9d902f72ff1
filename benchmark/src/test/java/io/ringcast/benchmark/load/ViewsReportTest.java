package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The views-against-plain table, from run files written by hand in the generator's JSON layout. */
class ViewsReportTest {

    /** One run's JSON, with only the figures the report reads. */
    static void run(Path dir, String name, int subscribers, int rate, int viewShapes, double cpuNs, double p99,
                    double frames, long rssMb, long lost) throws IOException {
        Files.createDirectories(dir.resolve(name));
        Files.writeString(dir.resolve(name).resolve("run.json"), String.format(Locale.ROOT, """
                {"scenario":"x","spec":{"subscribers":%d,"rate":%d,"viewShapes":%d},
                 "deliveries":{"perSecond":%d},
                 "latencyMs":{"p99":%s},
                 "correctness":{"lost":%d,"duplicated":0,"outOfOrder":0,"subscriberFailures":0},
                 "wire":{"known":true,"framesPerDelivery":%s},
                 "serverCpu":{"cpuNsPerDelivery":%s,"peakRssBytes":%d}}
                """, subscribers, rate, viewShapes, subscribers * rate, p99, lost, frames, cpuNs, rssMb << 20));
    }

    @Test
    void eachPointComparesTheMediansOfItsViewRunsWithItsPlainRuns(@TempDir Path dir) throws IOException {
        run(dir, "r1-plain-1000ps", 1000, 1000, 0, 900, 40, 0.14, 160, 0);
        run(dir, "r2-plain-1000ps", 1000, 1000, 0, 1000, 50, 0.15, 170, 0);
        run(dir, "r3-plain-1000ps", 1000, 1000, 0, 1100, 60, 0.16, 180, 0);
        run(dir, "r1-views-1000ps", 1000, 1000, 10, 1800, 80, 0.30, 170, 0);
        run(dir, "r2-views-1000ps", 1000, 1000, 10, 2000, 100, 0.32, 180, 1);
        run(dir, "r3-views-1000ps", 1000, 1000, 10, 2200, 120, 0.34, 190, 0);
        run(dir, "r1-plain-200ps", 1000, 200, 0, 4000, 20, 1.0, 150, 0);
        run(dir, "r1-views-200ps", 1000, 200, 10, 4400, 22, 1.0, 150, 0);
        Files.writeString(dir.resolve("sweep.json"), "{\"steps\":[]}"); // a sweep: not a run

        String md = ViewsReport.summary(dir);

        assertThat(md).contains("| 1,000 | 1,000 | plain | 3 | 1,000,000 | 1000 (900, 1000, 1100) | 50.00 | 0.150 | 170 "
                + "| 0 / 0 / 0 / 0 |");
        assertThat(md).contains("| 1,000 | 1,000 | 10 view shapes | 3 | 1,000,000 | 2000 (1800, 2000, 2200) | 100.00 "
                + "| 0.320 | 180 | 1 / 0 / 0 / 0 |");
        // 2,000 against 1,000 ns: twice plain's, above the 1.5x issue 16 allows
        assertThat(md).contains("| 1,000 | 1,000 | 10 view shapes | 2.00x | **no** | 2.00x | 2.13x | 1.06x |");
        assertThat(md).contains("| 1,000 | 200 | 10 view shapes | 1.10x | yes | 1.10x | 1.00x | 1.00x |");
        // points in order of subscribers, then rate
        assertThat(md.indexOf("| 1,000 | 200 | plain")).isLessThan(md.indexOf("| 1,000 | 1,000 | plain"));
    }

    @Test
    void unknownFiguresAreSaidSoAndAPointWithoutPlainRunsHasNoRatio(@TempDir Path dir) throws IOException {
        run(dir, "r1-views", 100, 500, 3, -1, 5, 0.5, 100, 0);
        String md = ViewsReport.summary(dir);
        assertThat(md).contains("| 100 | 500 | 3 view shapes | 1 | 50,000 | n/a (n/a) |");
        assertThat(md).doesNotContain("within");
    }
}
