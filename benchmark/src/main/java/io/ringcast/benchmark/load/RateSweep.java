package io.ringcast.benchmark.load;

import io.netty.channel.EventLoopGroup;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * Finds the max clean rate of one topology: runs {@link LoadRun}s at {@code start},
 * {@code start + step} ... up to {@code max}, each with fresh clients, and stops after the first
 * step that is not clean. A step is clean when p99 is below {@link SweepResult.Criteria#p99BelowMs},
 * the achieved rate is at least {@link SweepResult.Criteria#minAchievedFraction} of the offered one,
 * no value was lost, duplicated or reordered, no subscriber failed, and every publish was acked.
 * Not thread-safe.
 */
final class RateSweep {

    /** The sweep and the latency histogram (ns) of each of its steps, in order. */
    record Outcome(SweepResult result, List<Histogram> histograms) {
    }

    private final LoadSpec base;
    private final int startRate;
    private final int stepRate;
    private final int maxRate;
    private final SweepResult.Criteria criteria;
    private final EventLoopGroup group;
    private final PrintWriter log;

    RateSweep(LoadSpec base, int startRate, int stepRate, int maxRate, SweepResult.Criteria criteria,
              EventLoopGroup group, PrintWriter log) {
        if (startRate < 1 || stepRate < 1 || maxRate < startRate) {
            throw new IllegalArgumentException("--sweep-start, --sweep-step, --sweep-max: need start >= 1, step >= 1"
                    + " and max >= start, were " + startRate + ", " + stepRate + ", " + maxRate);
        }
        if (!(criteria.p99BelowMs() > 0)) {
            throw new IllegalArgumentException("--sweep-p99-below-ms: must be positive, was " + criteria.p99BelowMs());
        }
        this.criteria = criteria;
        this.base = base;
        this.startRate = startRate;
        this.stepRate = stepRate;
        this.maxRate = maxRate;
        this.group = group;
        this.log = log;
    }

    Outcome execute() throws LoadException, InterruptedException {
        String startedAt = Instant.now().toString();
        LoadResult.Machine machine = LoadResult.Machine.current();
        List<SweepResult.Step> steps = new ArrayList<>();
        List<Histogram> histograms = new ArrayList<>();
        SweepResult.Step best = null;
        for (long rate = startRate; rate <= maxRate; rate += stepRate) {
            log.printf("sweep step %,d/s%n", rate);
            LoadRun.Outcome run = new LoadRun(base.withRate((int) rate), group, log).execute();
            List<String> failedOn = failedOn(run.result(), criteria);
            SweepResult.Step step = new SweepResult.Step((int) rate, failedOn.isEmpty(), failedOn, run.result());
            steps.add(step);
            histograms.add(run.histogram());
            log.println("  " + Summary.oneLine(run.result()) + (failedOn.isEmpty() ? "  clean" : "  NOT clean: "
                    + String.join("; ", failedOn)));
            log.flush();
            if (!failedOn.isEmpty()) {
                break;
            }
            best = step;
        }
        SweepResult result = new SweepResult(base.topology(), startedAt, machine, criteria,
                steps, best == null ? 0 : best.offeredRate(),
                best == null ? 0 : best.result().deliveries().perSecond(),
                best == null ? 0 : best.result().latencyMs().p99());
        return new Outcome(result, histograms);
    }

    /** The criteria a run missed, each said with its figure; empty when the run was clean. */
    static List<String> failedOn(LoadResult r, SweepResult.Criteria criteria) {
        List<String> failed = new ArrayList<>();
        if (r.latencyMs().count() == 0) {
            failed.add("no measured delivery");
        } else if (r.latencyMs().p99() >= criteria.p99BelowMs()) {
            failed.add("p99 " + r.latencyMs().p99() + " ms >= " + criteria.p99BelowMs() + " ms");
        }
        double achieved = r.publishes().achievedPerSecond();
        if (achieved < criteria.minAchievedFraction() * r.publishes().offeredPerSecond()) {
            failed.add(String.format("achieved %.0f/s < %.0f%% of offered", achieved,
                    100 * criteria.minAchievedFraction()));
        }
        LoadResult.Correctness c = r.correctness();
        if (c.lost() > 0) {
            failed.add("lost " + c.lost());
        }
        if (c.duplicated() > 0) {
            failed.add("duplicated " + c.duplicated());
        }
        if (c.outOfOrder() > 0) {
            failed.add("out of order " + c.outOfOrder());
        }
        if (c.subscriberFailures() > 0) {
            failed.add("failed subscribers " + c.subscriberFailures() + " (" + c.firstFailure() + ")");
        }
        if (r.publishes().acked() != r.publishes().issued()) {
            failed.add("acked " + r.publishes().acked() + " of " + r.publishes().issued() + " publishes");
        }
        return failed;
    }
}
