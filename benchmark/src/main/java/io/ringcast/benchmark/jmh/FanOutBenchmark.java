package io.ringcast.benchmark.jmh;

import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.Features;
import io.ringcast.server.internal.FanOutHarness;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Our fan-out path, through {@link FanOutHarness}: the real {@code TopicSequencer} (sequence,
 * encode one WebSocket frame per update into a pooled buffer, keep history), the real fan-out ring
 * and one real {@code FanOutPoller} per reader thread, writing a retained duplicate of the shared
 * frame to every subscriber's channel, whose pipeline head releases it. No sockets.
 *
 * <p>One operation is {@link Workload#updates} updates delivered to each of
 * {@link Workload#subscribers} subscribers (see {@link Workload}). The JMH worker thread plays the
 * sequencer thread: it builds the harness, publishes, and closes it, and nothing else does (the
 * harness's thread contract; with {@code -ea} the sequencer asserts it). When the ring is full it
 * waits for the readers, so the time of an operation is the time of the whole pipeline.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-Dio.netty.leakDetection.level=disabled"})
public class FanOutBenchmark extends Workload {
    /**
     * The toggles every topic has: {@code cache} is the server's default (last-value cache on, the
     * rest off); {@code off} turns the cache off too; {@code deltas} and {@code compression} add one
     * each (compression with every subscriber having negotiated it, frames of any size compressed);
     * {@code all-on} adds both and {@code on-backpressure} conflation. What each costs per update
     * and per delivery, on the sequencer and the readers.
     */
    @Param({"cache"})
    public String features;

    private FanOutHarness harness;

    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        boolean compression = features.equals("compression") || features.equals("all-on");
        harness = new FanOutHarness(subscribers, readers, topics, valueBytes, ringSize, features(features), compression);
        expected = harness.delivered(); // subscribe replies and topic creations
        publishAndAwait(primeUpdates());
    }

    @Benchmark
    public void fanOut(Deliveries deliveries) throws InterruptedException {
        deliveries.deliveries += publishAndAwait(updates);
    }

    static Features features(String name) {
        return switch (name) {
            case "off" -> new Features(false, false, false, Conflation.OFF, 0, 262144, List.of());
            case "cache" -> new Features(true, false, false, Conflation.OFF, 0, 262144, List.of());
            case "deltas" -> new Features(true, true, false, Conflation.OFF, 0, 262144, List.of());
            case "compression" -> new Features(true, false, true, Conflation.OFF, 0, 262144, List.of());
            case "all-on" -> new Features(true, true, true, Conflation.ON_BACKPRESSURE, 0, 262144, List.of());
            default -> throw new IllegalArgumentException("features: one of off, cache, deltas, compression, all-on; was "
                    + name);
        };
    }

    @Override
    void publish(int topic, boolean endOfBatch) {
        harness.publish(topic, endOfBatch);
    }

    @Override
    long delivered() {
        return harness.delivered();
    }

    /** Every update reached every subscriber exactly once: no fewer (awaited), and no more. */
    @TearDown(Level.Iteration)
    public void check() {
        if (harness.delivered() != expected) {
            throw new IllegalStateException("delivered " + harness.delivered() + " frames, expected " + expected);
        }
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
        harness.close();
    }
}
