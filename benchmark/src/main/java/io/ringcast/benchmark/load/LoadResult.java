package io.ringcast.benchmark.load;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.lang.management.ManagementFactory;
import java.util.List;

/**
 * The figures of one run, as written to its JSON file. Rates are per second; latencies in
 * milliseconds from the intended send time.
 *
 * @param scenario    the run's name by topology and rate, e.g. {@code 1n-4p-100s-1000t-200B-10000ps}
 * @param startedAt   ISO-8601 wall-clock time the run started
 * @param machine     where the generator ran
 * @param spec        what was asked
 * @param publishes   what the publishers did
 * @param deliveries  what the subscribers received
 * @param latencyMs   end-to-end latency of the measured deliveries
 * @param correctness lost, duplicated and out-of-order values over the whole run
 * @param cpu         the generator process's CPU use over the measured time and the drain
 * @param wire        what the servers wrote over the same time, from their {@code /health}
 */
record LoadResult(String scenario, String startedAt, Machine machine, LoadSpec spec, Publishes publishes,
                  Deliveries deliveries, LatencyMs latencyMs, Correctness correctness, Cpu cpu, Wire wire) {

    /**
     * The servers' own count of frames written and their bytes (WebSocket headers included, after
     * deltas and compression), between the start of the measured window and the end of the drain.
     *
     * @param known              false when a server's {@code /health} did not answer (then the rest is 0)
     * @param deliveries         frames the servers wrote to sessions
     * @param bytes              their bytes
     * @param bytesPerDelivery   {@code bytes / deliveries}
     */
    record Wire(boolean known, long deliveries, long bytes, double bytesPerDelivery) {
        static Wire between(ServerProbe.Totals before, ServerProbe.Totals after) {
            if (!before.known() || !after.known() || after.deliveries() <= before.deliveries()) {
                return new Wire(false, 0, 0, 0);
            }
            long n = after.deliveries() - before.deliveries();
            long b = after.deliveredBytes() - before.deliveredBytes();
            return new Wire(true, n, b, LoadRun.round((double) b / n, 1));
        }
    }

    /**
     * @param cores     available processors
     * @param jvm       {@code java.vm.name} and {@code java.runtime.version}
     * @param os        {@code os.name os.version os.arch}
     * @param loadAverage the system's one-minute load average when the run started (-1 if unknown):
     *                  anything well above the generator's and server's own threads means other
     *                  work shared the cores
     */
    record Machine(int cores, String jvm, String os, double loadAverage) {
        static Machine current() {
            return new Machine(Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                    System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                            + System.getProperty("os.arch"),
                    LoadRun.round(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), 2));
        }
    }

    /**
     * @param offeredPerSecond  the rate asked for
     * @param achievedPerSecond publishes of the measured window over the time they took to issue
     *                          (at least the window): below offered when the generator fell behind
     * @param issued            publishes sent, warm-up included
     * @param acked             of those, acked by the server
     * @param failed            of those, failed (refused, or the connection was lost before the ack)
     * @param measured          publishes whose intended send time lies in the measured window
     * @param firstFailure      the first failure's message, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Publishes(int offeredPerSecond, double achievedPerSecond, long issued, long acked, long failed,
                     long measured, String firstFailure) {
    }

    /**
     * @param total     in-order updates received by all subscribers, warm-up included
     * @param measured  of those, the ones whose intended send time lies in the measured window
     * @param perSecond measured deliveries over the time from the window's start to the last of them
     *                  (at least the window)
     */
    record Deliveries(long total, long measured, double perSecond) {
    }

    /** Percentiles of the measured deliveries; {@code count} is how many were recorded. */
    record LatencyMs(long count, double p50, double p90, double p99, double p999, double max, double mean) {
    }

    /**
     * Sums over every subscriber, warm-up included.
     *
     * @param clean                 no value lost, duplicated or out of order: the exit code is 0
     * @param worstSubscriber       the subscriber with the most violations (or subscriber 0 when none has any)
     * @param subscribersWithErrors every subscriber with a violation or an error, at most 100
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Correctness(boolean clean, long lost, long duplicated, long outOfOrder, long snapshots, long gapSnapshots,
                       long conflated, long sequenceGaps, long foreignValues, long disconnects, long subscriberErrors,
                       SubscriberCounts worstSubscriber, List<SubscriberCounts> subscribersWithErrors) {
    }

    /**
     * @param processCpuMs      CPU time of every thread of the generator's JVM (and of the server
     *                          too with {@code --embedded}), -1 when the JVM does not report it
     * @param wallMs            the wall time it was measured over
     * @param percentOfOneCore  {@code processCpuMs / wallMs}, in percent: 200 means two cores busy
     * @param percentOfAllCores the same over every core of the machine
     */
    record Cpu(long processCpuMs, long wallMs, double percentOfOneCore, double percentOfAllCores, int cores) {
    }
}
