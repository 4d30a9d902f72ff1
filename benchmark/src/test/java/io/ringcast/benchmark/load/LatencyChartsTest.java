package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

class LatencyChartsTest {

    /** A 30-minute soak's histogram: 360 million values, its nines reaching past 99.9999997%. */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // the bug it guards against never returned
    void chartOfAVeryLongRunIsDrawn(@TempDir Path dir) throws Exception {
        Histogram h = new Histogram(3_600_000_000_000L, 3);
        h.recordValueWithCount(450_000, 359_000_000);
        h.recordValueWithCount(1_500_000, 999_999);
        h.recordValueWithCount(29_000_000, 1);
        Path file = LatencyCharts.percentiles(dir.resolve("long.png"), "long run", List.of("soak"), List.of(h));
        assertThat(Files.size(file)).isPositive();
    }
}
