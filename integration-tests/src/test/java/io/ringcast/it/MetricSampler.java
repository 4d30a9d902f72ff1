package io.ringcast.it;

import io.ringcast.server.RingcastServer;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoublePredicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Samples a gauge of a real server's {@code /metrics} every few milliseconds on a thread of its
 * own and keeps the largest value, to bound what a server held throughout an abuse; and reads or
 * awaits one metric.
 */
final class MetricSampler implements AutoCloseable {
    private static final long PERIOD_MS = 10;
    private final HttpClient http = HttpClient.newHttpClient();
    private final URI metrics;
    private final String gauge;
    private final AtomicLong largest = new AtomicLong();
    private final AtomicLong samples = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;
    /** The first scrape that failed, if one did. */
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    MetricSampler(RingcastServer server, String gauge) {
        this(server.port(), gauge);
    }

    /** The same for the node whose HTTP port is {@code port} (a node process). */
    MetricSampler(int port, String gauge) {
        this.metrics = metricsOf(port);
        this.gauge = gauge;
        thread = new Thread(() -> {
            while (running.get()) {
                try {
                    largest.accumulateAndGet((long) metric(http, metrics, gauge), Math::max);
                    samples.incrementAndGet();
                } catch (Exception | AssertionError e) {
                    failure.compareAndSet(null, e); // told by largest() and awaitSamples(), not lost with the thread
                }
                try {
                    // the sampling period: back to back, the scrapes took a core of a 2-core machine
                    // from the server they measure, and delayed witnesses by 100-400 ms
                    Thread.sleep(PERIOD_MS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "metrics-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits until {@code n} more samples were taken, so that they cover what happened until now. */
    void awaitSamples(long n) {
        long target = samples.get() + n;
        Await.until(() -> samples.get() >= target || !thread.isAlive(), n + " more samples of " + gauge);
        assertThat(thread.isAlive()).as("the sampler of " + gauge + " is still running").isTrue();
        assertNoFailure();
    }

    private void assertNoFailure() {
        assertThat(failure.get()).as("a failed scrape of " + gauge).isNull();
    }

    long largest() {
        assertNoFailure();
        return largest.get();
    }

    @Override
    public void close() {
        running.set(false);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the test sees it; close() must not hide it
        }
    }

    private static URI metricsOf(int port) {
        return URI.create("http://127.0.0.1:" + port + "/metrics");
    }

    /** The first sample of metric {@code name} in one scrape of {@code metrics}. */
    static double metric(HttpClient http, URI metrics, String name) throws Exception {
        String body = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString()).body();
        return body.lines().filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in /metrics"));
    }

    /** The server's metric {@code name} now. */
    static double metric(RingcastServer server, String name) throws Exception {
        return metric(server.port(), name);
    }

    /** The metric {@code name} of the node whose HTTP port is {@code port}, now. */
    static double metric(int port, String name) throws Exception {
        return metric(HttpClient.newHttpClient(), metricsOf(port), name);
    }

    /** Waits until the server's metric {@code name} satisfies {@code condition}. */
    static void await(RingcastServer server, String name, DoublePredicate condition, String what) {
        await(server.port(), name, condition, what);
    }

    /** The same for the node whose HTTP port is {@code port}. */
    static void await(int port, String name, DoublePredicate condition, String what) {
        URI metrics = metricsOf(port);
        HttpClient http = HttpClient.newHttpClient();
        Await.until(() -> {
            try {
                return condition.test(metric(http, metrics, name));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }, what);
    }
}
