package io.ringcast.benchmark.load;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;

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
 * @param pauses      the longest pauses publishers and subscribers saw (a cluster losing its leader)
 * @param serverCpu   the servers' CPU over the same time as {@code cpu}; null without {@code --server-pids}
 * @param ackLatencyMs the latency of the measured publishes' acks, from the intended send time as
 *                    {@code latencyMs}: what a publisher waits for the system to hold its value
 * @param subscribersConfirmedMs how long the subscribers took to connect, from the first one's start to
 *                    the last one's confirmed subscription (the log's "N subscribers confirmed in X s")
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record LoadResult(String scenario, String startedAt, Machine machine, LoadSpec spec, Publishes publishes,
                  Deliveries deliveries, LatencyMs latencyMs, Correctness correctness, Cpu cpu, Wire wire,
                  Pauses pauses, ServerCpu serverCpu, LatencyMs ackLatencyMs, long subscribersConfirmedMs) {

    /**
     * The longest time between two consecutive acks of one publisher, and between two consecutive
     * deliveries to one subscriber, over the measured window and the drain (a gap counts when it
     * ends after the window opened; one still open at the end, when acks or values never came,
     * counts up to the end). Steady, about the time between two publishes; when a leader dies,
     * the pause from the last ack (delivery) before the death to the first after the recovery.
     *
     * @param longestAckGapMs          the longest, over every publisher
     * @param ackGapEndEpochMs         wall-clock time it ended (0 when none): an outside event, such as
     *                                 a kill, lies inside it when it caused it
     * @param ackGapPublisher          the publisher that saw it
     * @param longestDeliveryGapMs     the longest, over every subscriber
     * @param deliveryGapEndEpochMs    wall-clock time it ended (0 when none)
     * @param deliveryGapSubscriber    the subscriber that saw it
     */
    record Pauses(double longestAckGapMs, long ackGapEndEpochMs, int ackGapPublisher, double longestDeliveryGapMs,
                  long deliveryGapEndEpochMs, int deliveryGapSubscriber) {
    }

    /**
     * The servers' CPU ({@code --server-pids}, user + system from {@code /proc}), measured over the same
     * time as the generator's: from the measured window's start to the end of the drain.
     *
     * @param pids                     the processes summed
     * @param known                    false when a process could not be read at either end (it died)
     * @param cpuMs                    their CPU time together
     * @param wallMs                   the wall time it was measured over
     * @param coresUsed                {@code cpuMs / wallMs}: 1.5 means one and a half cores busy
     * @param deliveriesPerCoreSecond  deliveries over the same time (the servers' own count when
     *                                 {@code wire} is known, else the measured deliveries) per CPU second
     *                                 of the servers: the figure to set beside deliveries per vCPU
     * @param cpuNsPerDelivery         the same the other way round: the servers' CPU nanoseconds per delivery
     * @param peakRssBytes             the servers' peak resident memory ({@code VmHWM}, summed), at the
     *                                 end of the run; -1 when unknown
     * @param rssBytes                 the servers' resident memory ({@code VmRSS}, summed) at the end of the
     *                                 drain; -1 when unknown (a process gone)
     */
    record ServerCpu(List<Long> pids, boolean known, long cpuMs, long wallMs, double coresUsed,
                     double deliveriesPerCoreSecond, double cpuNsPerDelivery, long peakRssBytes, long rssBytes) {
    }

    /**
     * The servers' own count of frames written and their bytes (WebSocket headers included, after
     * deltas and compression), between the start of the measured window and the end of the drain.
     *
     * @param known              false when a server's {@code /health} did not answer (then the rest is 0)
     * @param deliveries         updates (and replies) the servers wrote to sessions
     * @param frames             the WebSocket frames they took: fewer where updates shared a frame
     * @param bytes              their bytes
     * @param bytesPerDelivery   {@code bytes / deliveries}
     * @param framesPerDelivery  {@code frames / deliveries}: 1 for a frame per update, falling as they are batched
     */
    record Wire(boolean known, long deliveries, long frames, long bytes, double bytesPerDelivery,
                double framesPerDelivery) {
        static Wire between(ServerProbe.Totals before, ServerProbe.Totals after) {
            if (!before.known() || !after.known() || after.deliveries() <= before.deliveries()) {
                return new Wire(false, 0, 0, 0, 0, 0);
            }
            long n = after.deliveries() - before.deliveries();
            long f = after.frames() - before.frames();
            long b = after.deliveredBytes() - before.deliveredBytes();
            return new Wire(true, n, f, b, LoadRun.round((double) b / n, 1), LoadRun.round((double) f / n, 3));
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
     * @param failed            of those, failed after the client's own retries (refused, outcome unknown, or
     *                          the client closed before the answer): not acked, so not sent again and
     *                          not counted as lost when missing (see {@link Correctness})
     * @param measured          publishes whose intended send time lies in the measured window
     * @param firstFailure      the first failure's message, or null
     * @param failedByReason    the failed ones by the server's error code (or the client's message)
     * @param ackedPerSecond    acks of the measured publishes over the time from the window's start to
     *                          the last of them (at least the window)
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Publishes(int offeredPerSecond, double achievedPerSecond, long issued, long acked, long failed,
                     long measured, String firstFailure, Map<String, Long> failedByReason, double ackedPerSecond) {
    }

    /**
     * @param total     in-order updates received by all subscribers, warm-up included
     * @param measured  of those, the ones whose intended send time lies in the measured window
     * @param perSecond measured deliveries over the time from the window's start to the last of them
     *                  (at least the window)
     */
    record Deliveries(long total, long measured, double perSecond) {
    }

    /** Percentiles of the measured deliveries (or acks); {@code count} is how many were recorded. */
    record LatencyMs(long count, double p50, double p90, double p99, double p999, double max, double mean) {
        /** The percentiles of a histogram of nanoseconds, in milliseconds. */
        static LatencyMs of(org.HdrHistogram.Histogram h) {
            return new LatencyMs(h.getTotalCount(), LoadRun.ms(h.getValueAtPercentile(50)),
                    LoadRun.ms(h.getValueAtPercentile(90)), LoadRun.ms(h.getValueAtPercentile(99)),
                    LoadRun.ms(h.getValueAtPercentile(99.9)), LoadRun.ms(h.getMaxValue()),
                    h.getTotalCount() == 0 ? 0 : LoadRun.round(h.getMean() / 1e6, 3));
        }
    }

    /**
     * Sums over every subscriber, warm-up included.
     *
     * @param clean                 no value lost, duplicated or out of order, and no subscriber failed: the
     *                              exit code is 0
     * @param lost                  acked values some subscriber never received (values whose publish
     *                              failed are counted in the three {@code unacked} figures instead)
     * @param outOfOrder            acked values received after a later one, and new values under an
     *                              old server sequence
     * @param worstSubscriber       the subscriber with the most violations (or subscriber 0 when none has any)
     * @param subscribersWithErrors every subscriber with a violation or an error, at most 100
     * @param unackedDelivered      values whose publish failed that subscribers received all the same
     *                              (applied: an outcome unknown may be), summed over subscribers
     * @param unackedLate           of those, the ones received after a later value of their topic
     *                              (applied after it, which a publish answered with a failure may be)
     * @param unackedMissed         such values a subscriber never received (not applied)
     * @param subscriberFailures    subscribers that stopped because they could not check on honestly: a lean
     *                              subscriber given a delta, or losing its connection (it does not resume)
     * @param unchecked             values those subscribers never received after they stopped: neither lost
     *                              nor checked
     * @param firstFailure          the first failed subscriber's reason, or null: what to do instead
     * @param lostThenReceived      of {@code lost}, acked values that came after a later value of their topic
     *                              (so also out of order): {@code lost} less this never came
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Correctness(boolean clean, long lost, long duplicated, long outOfOrder, long snapshots, long gapSnapshots,
                       long conflated, long sequenceGaps, long foreignValues, long disconnects, long subscriberErrors,
                       SubscriberCounts worstSubscriber, List<SubscriberCounts> subscribersWithErrors,
                       long unackedDelivered, long unackedLate, long unackedMissed, long subscriberFailures,
                       long unchecked, String firstFailure, long lostThenReceived) {
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
