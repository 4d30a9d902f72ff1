package io.ringcast.benchmark.soak;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The soak's PNG: four panels over the same time axis (minutes since the measured load began), heap
 * after GC and RSS on top, p99 and deliveries/s below, each y axis from zero so that a flat line
 * looks flat. The heap panel also shows every GC pause's figure as dots, the sampled line through
 * them. Stateless; XChart draws each panel headless, and the panels are pasted into one image.
 */
final class SoakChart {
    private static final int PANEL_WIDTH = 760;
    private static final int PANEL_HEIGHT = 420;
    private static final int TITLE_HEIGHT = 36;

    static {
        System.setProperty("java.awt.headless", "true"); // charts only: never open a display
    }

    private SoakChart() {
    }

    static Path write(Path file, String title, List<SoakSeries.Sample> samples, List<GcLog.Pause> pauses)
            throws IOException {
        long startEpochMs = samples.isEmpty() ? 0
                : samples.get(0).epochMs() - Math.round(samples.get(0).timeS() * 1000);
        double endMin = samples.isEmpty() ? 1 : samples.get(samples.size() - 1).timeS() / 60;
        XYChart heap = panel("Heap after GC (MiB)", "MiB", samples, SoakSeries.Sample::heapAfterGcMiB, endMin,
                false);
        List<Double> gcX = new ArrayList<>();
        List<Double> gcY = new ArrayList<>();
        for (GcLog.Pause p : pauses) {
            double min = (p.epochMs() - startEpochMs) / 60_000.0;
            if (min >= 0 && min <= endMin) {
                gcX.add(min);
                gcY.add(p.afterBytes() / (1024.0 * 1024.0));
            }
        }
        if (!gcX.isEmpty()) {
            XYSeries dots = heap.addSeries("each GC pause", gcX, gcY);
            dots.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            dots.setMarker(SeriesMarkers.CIRCLE);
            dots.setMarkerColor(new Color(0, 0, 0, 90));
            heap.getStyler().setLegendVisible(true);
        }
        XYChart rss = panel("Server RSS (MiB)", "MiB", samples, SoakSeries.Sample::rssMiB, endMin, false);
        // log scale: one slow interval (a neighbour's build, a warming JIT) must not flatten the rest
        XYChart p99 = panel("p99 latency per interval (ms, log scale)", "ms", samples, SoakSeries.Sample::p99Ms,
                endMin, true);
        XYChart rate = panel("Deliveries per second per interval", "deliveries/s", samples,
                SoakSeries.Sample::deliveriesPerSec, endMin, false);
        rate.getStyler().setYAxisDecimalPattern("#,##0");

        BufferedImage image = new BufferedImage(2 * PANEL_WIDTH, TITLE_HEIGHT + 2 * PANEL_HEIGHT,
                BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, image.getWidth(), image.getHeight());
            g.setColor(Color.BLACK);
            g.setFont(g.getFont().deriveFont(18f));
            g.drawString(title, 16, 25);
            g.drawImage(BitmapEncoder.getBufferedImage(heap), 0, TITLE_HEIGHT, null);
            g.drawImage(BitmapEncoder.getBufferedImage(rss), PANEL_WIDTH, TITLE_HEIGHT, null);
            g.drawImage(BitmapEncoder.getBufferedImage(p99), 0, TITLE_HEIGHT + PANEL_HEIGHT, null);
            g.drawImage(BitmapEncoder.getBufferedImage(rate), PANEL_WIDTH, TITLE_HEIGHT + PANEL_HEIGHT, null);
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file.toFile());
        return file;
    }

    private static XYChart panel(String title, String yTitle, List<SoakSeries.Sample> samples,
                                 ToDoubleFunction<SoakSeries.Sample> figure, double endMin, boolean logY) {
        XYChart chart = new XYChartBuilder().width(PANEL_WIDTH).height(PANEL_HEIGHT).title(title)
                .xAxisTitle("minutes since the measured load began").yAxisTitle(yTitle).build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setXAxisMax(Math.max(endMin, 0.1));
        chart.getStyler().setXAxisDecimalPattern("0.#");
        chart.getStyler().setYAxisLogarithmic(logY);
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        double max = 0;
        for (SoakSeries.Sample s : samples) {
            double v = figure.applyAsDouble(s);
            if (!Double.isNaN(v) && !(logY && v <= 0)) { // on a log axis, an interval without deliveries has no place
                x.add(s.timeS() / 60);
                y.add(v);
                max = Math.max(max, v);
            }
        }
        if (x.isEmpty()) {
            x.add(0.0);
            y.add(logY ? 1.0 : 0.0);
        }
        if (!logY) {
            chart.getStyler().setYAxisMin(0.0); // from zero: a flat line looks flat, a small wobble small
            chart.getStyler().setYAxisMax(max <= 0 ? 1.0 : max * 1.15); // headroom above the highest point
        }
        XYSeries line = chart.addSeries(title, x, y);
        line.setMarker(SeriesMarkers.NONE);
        line.setLineColor(new Color(31, 119, 180));
        return chart;
    }
}
