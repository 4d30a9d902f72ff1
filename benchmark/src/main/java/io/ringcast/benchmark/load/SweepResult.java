package io.ringcast.benchmark.load;

import java.util.List;

/**
 * A sweep, as written to its JSON file.
 *
 * @param scenario                          the topology, e.g. {@code 1n-4p-100s-1000t-200B}
 * @param startedAt                         ISO-8601 wall-clock time the sweep started
 * @param machine                           where the generator ran
 * @param criteria                          what made a step clean
 * @param steps                             every step run, in order; the last one failed unless the
 *                                          sweep reached its max
 * @param maxCleanRate                      the highest offered rate whose step was clean, 0 when none was
 * @param deliveriesPerSecondAtMaxCleanRate the deliveries per second of that step, 0 when none was clean
 * @param p99MsAtMaxCleanRate               the p99 latency of that step, 0 when none was clean
 */
record SweepResult(String scenario, String startedAt, LoadResult.Machine machine, Criteria criteria,
                   List<Step> steps, int maxCleanRate, double deliveriesPerSecondAtMaxCleanRate,
                   double p99MsAtMaxCleanRate) {

    /**
     * @param p99BelowMs           p99 latency must be below this
     * @param minAchievedFraction  the achieved publish rate must be at least this fraction of the offered one
     */
    record Criteria(double p99BelowMs, double minAchievedFraction) {
        /** Also required, not parameters: no value lost, duplicated or out of order; every publish acked. */
        static final Criteria DEFAULT = new Criteria(10.0, 0.95);
    }

    /**
     * @param offeredRate  the step's rate
     * @param clean        whether it met every criterion
     * @param failedOn     the criteria it missed, empty when clean
     * @param result       the step's full figures
     */
    record Step(int offeredRate, boolean clean, List<String> failedOn, LoadResult result) {
    }
}
