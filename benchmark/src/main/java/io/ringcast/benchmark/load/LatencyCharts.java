package io.ringcast.benchmark.load;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Draws the PNG charts with XChart, headless. Stateless.
 *
 * <p>The percentile chart uses the HdrHistogram convention: the x axis is {@code log10(1 / (1 - q))},
 * so 90%, 99%, 99.9%, 99.99% are evenly spaced and the tail, where the interesting latencies are,
 * gets as much room as the median. (Plotted on a linear axis of the logarithm, because XChart
 * ignores a log axis once the tick labels have a custom formatter.)
 */
final class LatencyCharts {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 560;
    /** Points per halving of the distance to 100% (HdrHistogram's percentile iterator). */
    private static final int TICKS_PER_HALF_DISTANCE = 5;

    static {
        System.setProperty("java.awt.headless", "true"); // charts only: never open a display
    }

    private LatencyCharts() {
    }

    /** Latency (ms) against percentile, one curve per histogram (ns). */
    static Path percentiles(Path file, String title, List<String> labels, List<Histogram> histograms)
            throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("percentile, in nines: 1 = 90%, 2 = 99%, 3 = 99.9%, 4 = 99.99% ...")
                .yAxisTitle("latency (ms)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        // no custom tick labels: XChart's tick search never ends on some ranges with a formatter of
        // ours (a 30-minute soak's histogram hung it), so the axis title says what the numbers mean
        double maxX = 1;
        for (int i = 0; i < histograms.size(); i++) {
            Histogram h = histograms.get(i);
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            if (h.getTotalCount() > 0) {
                for (HistogramIterationValue v : h.percentiles(TICKS_PER_HALF_DISTANCE)) {
                    double q = v.getPercentileLevelIteratedTo() / 100.0;
                    if (q >= 1.0) {
                        break; // 1 / (1 - q) has no finite place for the max
                    }
                    x.add(Math.log10(1.0 / (1.0 - q)));
                    y.add(h.highestEquivalentValue(v.getValueIteratedTo()) / 1e6);
                }
            }
            if (x.isEmpty()) {
                x.add(0.0);
                y.add(0.0);
            }
            maxX = Math.max(maxX, x.get(x.size() - 1));
            XYSeries s = chart.addSeries(labels.get(i), x, y);
            s.setMarker(SeriesMarkers.NONE);
        }
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setXAxisMax(Math.ceil(maxX));
        return save(chart, file);
    }

    /** p99 latency and deliveries per second against the offered rate, one point per step. */
    static Path sweep(Path file, SweepResult sweep) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title("Rate sweep, " + sweep.scenario() + ": max clean rate "
                        + String.format(Locale.ROOT, "%,d", sweep.maxCleanRate()) + "/s")
                .xAxisTitle("offered publishes per second").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setMarkerSize(6);
        chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        chart.setYAxisGroupTitle(0, "p99 latency (ms)");
        chart.setYAxisGroupTitle(1, "deliveries per second");
        List<Double> rate = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> deliveries = new ArrayList<>();
        for (SweepResult.Step step : sweep.steps()) {
            rate.add((double) step.offeredRate());
            p99.add(step.result().latencyMs().p99());
            deliveries.add(step.result().deliveries().perSecond());
        }
        chart.addSeries("p99 latency (ms)", rate, p99).setMarker(SeriesMarkers.CIRCLE).setYAxisGroup(0);
        chart.addSeries("deliveries per second", rate, deliveries).setMarker(SeriesMarkers.DIAMOND).setYAxisGroup(1);
        chart.addSeries("p99 limit " + sweep.criteria().p99BelowMs() + " ms",
                List.of(rate.get(0), rate.get(rate.size() - 1)),
                List.of(sweep.criteria().p99BelowMs(), sweep.criteria().p99BelowMs()))
                .setMarker(SeriesMarkers.NONE).setYAxisGroup(0);
        return save(chart, file);
    }

    private static Path save(XYChart chart, Path file) throws IOException {
        // the image and ImageIO rather than BitmapEncoder.saveBitmap, which XChart 4 deprecates
        ImageIO.write(BitmapEncoder.getBufferedImage(chart), "png", file.toFile());
        return file;
    }
}
