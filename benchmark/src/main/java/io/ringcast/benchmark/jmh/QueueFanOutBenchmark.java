package io.ringcast.benchmark.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The baseline, {@link QueueFanOut}: one bounded queue per subscriber and a copy of the value per
 * subscriber, the way most Java code would fan out (and what Go channels do in Coinbase's
 * write-up). Same workload, same operation, same JVM options as {@link FanOutBenchmark}, so the
 * two compare as a ratio.
 *
 * <p>One operation is {@link Workload#updates} updates delivered to each of
 * {@link Workload#subscribers} subscribers (see {@link Workload}). The JMH worker thread is the
 * publisher; when a subscriber's queue is full it waits in {@code put}, so the time of an operation
 * is the time of the whole pipeline.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-Dio.netty.leakDetection.level=disabled"})
public class QueueFanOutBenchmark extends Workload {
    private QueueFanOut fanOut;

    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        fanOut = new QueueFanOut(subscribers, readers, topics, valueBytes, ringSize);
        publishAndAwait(primeUpdates());
    }

    @Benchmark
    public void fanOut(Deliveries deliveries) throws InterruptedException {
        deliveries.deliveries += publishAndAwait(updates);
    }

    @Override
    void publish(int topic, boolean endOfBatch) throws InterruptedException {
        fanOut.publish(topic, endOfBatch);
    }

    @Override
    long delivered() {
        return fanOut.delivered();
    }

    /** Every update reached every subscriber exactly once, with all its bytes. */
    @TearDown(Level.Iteration)
    public void check() {
        if (fanOut.delivered() != expected || fanOut.deliveredBytes() != expected * valueBytes) {
            throw new IllegalStateException("delivered " + fanOut.delivered() + " values of "
                    + fanOut.deliveredBytes() + " bytes in all, expected " + expected + " of " + valueBytes + " bytes each");
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        fanOut.close();
    }
}
