package io.ringcast.benchmark.load;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * {@code --report-interval}: the measured window cut into intervals, each reported on its own, so a
 * long run (a soak) shows how deliveries/s and latency move over time instead of one figure for the
 * whole. Every interval is a line on the log and a row of {@code NAME-intervals.csv}:
 * <pre>
 * epochMs,elapsedS,intervalS,deliveries,deliveriesPerSec,p50Ms,p90Ms,p99Ms,p999Ms,maxMs
 * </pre>
 * {@code epochMs} is the wall-clock time the interval ended (to line rows up with samples taken
 * outside the generator), {@code elapsedS} the time since the measured window opened.
 * {@code deliveries} are the measured deliveries received in the interval, all subscribers
 * together: the count of its latency histogram, which has one value per measured delivery. The
 * percentiles are those of the interval alone (latency from the intended send time, as for the run).
 * The last interval runs from the last tick to the end of the drain; its length is in
 * {@code intervalS}, and every rate is over the actual length.
 *
 * <p>Threads: {@link #start} and {@link #finish} on the run's control thread; between them only the
 * reporter's own thread drains the {@link LatencyRecorders} and writes the rows. {@link #finish}
 * joins that thread before it drains the rest, so the recorders always have one drainer at a time
 * and the whole-run histogram it returns holds every measured value exactly once.
 */
final class IntervalReporter {
    static final String CSV_HEADER = "epochMs,elapsedS,intervalS,deliveries,deliveriesPerSec,p50Ms,p90Ms,p99Ms,"
            + "p999Ms,maxMs";

    private final LatencyRecorders latencies;
    private final long intervalNs;
    private final Path csvFile;
    private final PrintWriter log;
    private final Histogram total = LatencyRecorders.newHistogram();

    private Writer csv;
    private Thread thread;
    private long fromNs;
    private long untilNs;
    private long lastTickNs;
    private volatile boolean stopped;
    /** The first write error of the reporter thread, rethrown by {@link #finish}. */
    private volatile IOException failure;

    /**
     * @param latencies  the run's recorders; this reporter becomes their only drainer
     * @param intervalMs length of an interval
     * @param csvFile    where the rows go (created, or replaced)
     * @param log        where the lines go
     */
    IntervalReporter(LatencyRecorders latencies, long intervalMs, Path csvFile, PrintWriter log) {
        this.latencies = latencies;
        this.intervalNs = TimeUnit.MILLISECONDS.toNanos(intervalMs);
        this.csvFile = csvFile;
        this.log = log;
    }

    /** Control thread, once, before the window opens: writes the header and starts the reporter thread. */
    void start(MeasurementWindow window) throws LoadException {
        this.fromNs = window.fromNs();
        this.untilNs = window.untilNs();
        this.lastTickNs = fromNs;
        try {
            Files.createDirectories(csvFile.toAbsolutePath().getParent());
            // a FileOutputStream, not Files.newBufferedWriter: an NIO channel closes itself when its thread is interrupted
            csv = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(csvFile.toFile()),
                    StandardCharsets.UTF_8));
            csv.write(CSV_HEADER);
            csv.write('\n');
            csv.flush();
        } catch (IOException e) {
            throw new LoadException("--report-interval: could not write " + csvFile + ": " + e, e);
        }
        thread = new Thread(this::tickUntilTheWindowCloses, "load-interval-reporter");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Control thread, once, after the drain and after the clients were closed: stops the reporter
     * thread, reports the last interval and returns every measured latency of the run (ns).
     */
    Histogram finish() throws LoadException, InterruptedException {
        stop();
        thread.join();
        Writer closedAtTheEnd = csv;
        try (closedAtTheEnd) {
            if (failure != null) {
                throw failure;
            }
            report(System.nanoTime());
        } catch (IOException e) {
            throw new LoadException("--report-interval: could not write " + csvFile + ": " + e, e);
        }
        return total;
    }

    /** Any thread, any number of times: ends the reporter thread without reporting (a run that failed). */
    void stop() {
        stopped = true;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    private void tickUntilTheWindowCloses() {
        try {
            // ticks strictly inside the window: the interval that reaches its end is reported by finish(),
            // after the drain, so it also holds the values that were late
            for (long tick = fromNs + intervalNs; tick < untilNs && !stopped; tick += intervalNs) {
                for (long waitNs; (waitNs = tick - System.nanoTime()) > 0 && !stopped; ) {
                    LockSupport.parkNanos(waitNs);
                }
                if (!stopped) {
                    report(tick);
                }
            }
        } catch (IOException e) {
            failure = e;
        }
    }

    /** Drains the interval that ends at {@code endNs}, adds it to the total, writes its row and line. */
    private void report(long endNs) throws IOException {
        Histogram h = latencies.drain();
        total.add(h);
        double lengthS = Math.max(endNs - lastTickNs, 1) / 1e9;
        double elapsedS = (endNs - fromNs) / 1e9;
        lastTickNs = endNs;
        long n = h.getTotalCount();
        double perSecond = n / lengthS;
        double p50 = n == 0 ? 0 : LoadRun.ms(h.getValueAtPercentile(50));
        double p90 = n == 0 ? 0 : LoadRun.ms(h.getValueAtPercentile(90));
        double p99 = n == 0 ? 0 : LoadRun.ms(h.getValueAtPercentile(99));
        double p999 = n == 0 ? 0 : LoadRun.ms(h.getValueAtPercentile(99.9));
        double max = n == 0 ? 0 : LoadRun.ms(h.getMaxValue());
        csv.write(String.format(Locale.ROOT, "%d,%.3f,%.3f,%d,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f%n",
                System.currentTimeMillis(), elapsedS, lengthS, n, perSecond, p50, p90, p99, p999, max));
        csv.flush(); // a long run that dies still leaves every interval so far
        log.printf(Locale.ROOT, "  interval %7.1f s  %,11.0f deliveries/s  p50 %.3f  p99 %.3f  max %.3f ms%n",
                elapsedS, perSecond, p50, p99, max);
        log.flush();
    }
}
