package io.ringcast.benchmark.load;

import java.io.PrintWriter;

/** The short human-readable report printed after a run or a sweep. Stateless. */
final class Summary {
    private Summary() {
    }

    static void print(PrintWriter out, LoadResult r) {
        LoadSpec s = r.spec();
        out.printf("%s load %s: %d server(s)%s, %d publishers, %,d %s subscribers ('%s'%s), %,d topics, %d B%s%n",
                s.target().displayName, r.scenario(), s.servers().size(), s.embedded() ? " (embedded)" : "",
                s.publishers(), s.subscribers(), subscriberKind(s), s.selector(),
                s.viewShapes() == 0 ? "" : ", round robin over " + s.viewShapes() + " view shapes", s.topics(),
                s.payloadBytes(), s.valueFormat() == ValueFormat.JSON ? " JSON (" + s.jsonFields() + " fields)" : "");
        LoadResult.Publishes p = r.publishes();
        out.printf("  publishes    offered %,d/s  achieved %,.0f/s  acked %,d of %,d%s%n", p.offeredPerSecond(),
                p.achievedPerSecond(), p.acked(), p.issued(), p.failed() > 0 ? "  FAILED " + p.failed()
                        + " after the client's retries " + p.failedByReason() : "");
        out.printf("  deliveries   %,.0f/s  (%,d measured in %,d ms, %,d in all)%n", r.deliveries().perSecond(),
                r.deliveries().measured(), s.durationMs(), r.deliveries().total());
        LoadResult.LatencyMs l = r.latencyMs();
        out.printf("  latency ms   p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (from intended send time)%n",
                l.p50(), l.p90(), l.p99(), l.p999(), l.max());
        LoadResult.LatencyMs a = r.ackLatencyMs();
        out.printf("  acks ms      p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (%,.0f acked/s, from intended"
                + " send time)%n", a.p50(), a.p90(), a.p99(), a.p999(), a.max(), p.ackedPerSecond());
        LoadResult.Correctness c = r.correctness();
        out.printf("  correctness  lost %,d  duplicated %,d  out of order %,d  (conflated %,d, snapshots %,d, gap snapshots"
                        + " %,d, disconnects %,d, errors %,d)%s%n", c.lost(), c.duplicated(), c.outOfOrder(), c.conflated(),
                c.snapshots(), c.gapSnapshots(), c.disconnects(), c.subscriberErrors(), c.clean() ? "" : "  NOT CLEAN");
        if (c.lostThenReceived() > 0) {
            out.printf("  late         of the lost, %,d came after a later value of their topic (out of order), %,d never"
                    + " came%n", c.lostThenReceived(), c.lost() - c.lostThenReceived());
        }
        if (c.subscriberFailures() > 0) {
            out.printf("  failed       %,d subscriber(s) stopped, %,d values unchecked; first: %s%n",
                    c.subscriberFailures(), c.unchecked(), c.firstFailure());
        }
        if (p.failed() > 0) {
            out.printf("  unacked      values of failed publishes received all the same %,d (late %,d), never received"
                    + " %,d: not lost, never acked%n", c.unackedDelivered(), c.unackedLate(), c.unackedMissed());
        }
        LoadResult.Pauses pauses = r.pauses();
        out.printf("  pauses       longest between two acks %.1f ms (publisher %d), between two deliveries %.1f ms"
                        + " (subscriber %d)%n", pauses.longestAckGapMs(), pauses.ackGapPublisher(),
                pauses.longestDeliveryGapMs(), pauses.deliveryGapSubscriber());
        if (r.wire() != null && r.wire().known()) {
            out.printf("  wire         %,.1f bytes and %.3f WebSocket frames per delivery written by the server(s)"
                            + " (%,d deliveries in %,d frames)%n", r.wire().bytesPerDelivery(), r.wire().framesPerDelivery(),
                    r.wire().deliveries(), r.wire().frames());
        }
        if (!c.clean() && c.worstSubscriber() != null) {
            SubscriberCounts w = c.worstSubscriber();
            out.printf("  worst        subscriber %d: lost %,d  duplicated %,d  out of order %,d%s%n", w.subscriber(),
                    w.lost(), w.duplicated(), w.outOfOrder(), w.firstLate() == null ? "" : "  (first late: "
                            + w.firstLate() + ")");
        }
        LoadResult.Cpu cpu = r.cpu();
        out.printf("  generator    CPU %.0f%% of one core, %.0f%% of %d cores%s, %d event loops on %s; load average at start"
                        + " %.2f%n", cpu.percentOfOneCore(), cpu.percentOfAllCores(), cpu.cores(),
                s.embedded() ? " (server included: embedded)" : "", s.ioThreads(), s.transport(),
                r.machine().loadAverage());
        LoadResult.ServerCpu sc = r.serverCpu();
        if (sc != null) {
            out.printf("  servers      %s; RSS %s, peak %s%n", sc.known() ? String.format("CPU %.2f cores (%,d ms in %,d ms), %,.0f"
                    + " deliveries per server CPU second, %,.0f ns of server CPU per delivery", sc.coresUsed(), sc.cpuMs(),
                    sc.wallMs(), sc.deliveriesPerCoreSecond(), sc.cpuNsPerDelivery())
                    : "CPU unknown: a process of " + sc.pids() + " could not be read",
                    sc.rssBytes() < 0 ? "unknown" : String.format("%,d MB", sc.rssBytes() >> 20),
                    sc.peakRssBytes() < 0 ? "unknown" : String.format("%,d MB", sc.peakRssBytes() >> 20));
        }
    }

    /** What the subscribers are, in the summary's first line. */
    private static String subscriberKind(LoadSpec s) {
        return switch (s.target()) {
            case JETSTREAM -> "ordered-consumer";
            case REDIS -> "PSUBSCRIBE " + RedisChannels.PATTERN;
            case RINGCAST -> s.subscriberClient() == SubscriberClient.LEAN ? "lean" : "Java client";
        };
    }

    static String oneLine(LoadResult r) {
        return String.format("achieved %,.0f/s  deliveries %,.0f/s  p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f ms"
                        + "  lost %d dup %d ooo %d%s  cpu %.0f%%", r.publishes().achievedPerSecond(),
                r.deliveries().perSecond(), r.latencyMs().p50(), r.latencyMs().p99(), r.latencyMs().p999(),
                r.latencyMs().max(), r.correctness().lost(), r.correctness().duplicated(),
                r.correctness().outOfOrder(), r.correctness().subscriberFailures() > 0
                        ? "  failed subscribers " + r.correctness().subscriberFailures() : "",
                r.cpu().percentOfOneCore())
                + (r.serverCpu() != null && r.serverCpu().known() ? String.format("  servers %.2f cores, %,.0f"
                + " deliveries/CPU s, %,.0f ns/delivery", r.serverCpu().coresUsed(), r.serverCpu().deliveriesPerCoreSecond(),
                r.serverCpu().cpuNsPerDelivery()) : "")
                + (r.wire() != null && r.wire().known() ? String.format("  frames/delivery %.3f", r.wire().framesPerDelivery()) : "");
    }

    static void printSweep(PrintWriter out, SweepResult s) {
        out.printf("%s sweep %s: %d step(s)%n", s.steps().isEmpty() ? Target.RINGCAST.displayName
                : s.steps().get(0).result().spec().target().displayName, s.scenario(), s.steps().size());
        for (SweepResult.Step step : s.steps()) {
            out.printf("  %,9d/s  %s  %s%n", step.offeredRate(), step.clean() ? "clean" : "NOT clean",
                    oneLine(step.result()));
        }
        if (s.maxCleanRate() == 0) {
            out.println("  max clean rate: none (the first step already failed)");
        } else {
            out.printf("  max clean rate %,d/s: %,.0f deliveries/s, p99 %.3f ms%n", s.maxCleanRate(),
                    s.deliveriesPerSecondAtMaxCleanRate(), s.p99MsAtMaxCleanRate());
        }
    }
}
