package io.ringcast.it.cluster.faults;

import io.ringcast.it.cluster.faults.History.Attempt;
import io.ringcast.it.cluster.faults.History.Outcome;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One fault, start to verdict: a fresh five-node cluster, the {@link Workload} (publishers homed on
 * nodes 1, 3 and 5, 100 publishes/s each; a subscriber on every node), a warm-up, the fault itself,
 * recovery (every node ready with the full view), a settle phase under load, then the publishers
 * stop, the subscribers catch up, each node's final state is read, and the {@link HistoryChecker}
 * judges the history. Besides the checker's violations, a run fails when the cluster did not
 * recover, when the majority side acked nothing during a fault, or when a probed minority node
 * acked a publish or never refused one. Runs on the calling thread.
 */
final class FaultRun {
    static final int[] PUBLISHER_HOMES = {1, 3, 5};
    static final int RATE_PER_PUBLISHER = 100;

    /** A window of the fault: who counts as the majority side, and the minority probes' outcomes. */
    record Window(String name, long startNs, long endNs, Set<Integer> majorityHomes, int minorityNode,
                  List<Attempt> probes, String uncuttable) {
    }

    private final Fault fault;
    private final Fault.Durations durations;
    private final History history = new History();
    private final List<Window> windows = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private final List<String> events = new ArrayList<>();
    private FaultCluster cluster;
    private Workload load;

    private FaultRun(Fault fault, Fault.Durations durations) {
        this.fault = fault;
        this.durations = durations;
    }

    /** Runs {@code fault} and returns its report (written by the caller). */
    static FaultReport run(Fault fault, Fault.Durations durations) throws Exception {
        FaultRun run = new FaultRun(fault, durations);
        long startedMs = System.currentTimeMillis();
        HistoryChecker.Verdict verdict;
        // a directory of its own per run (target/cluster-logs/fault-<id>-<start>): the next run of the
        // same fault must not overwrite the nodes' logs of one that failed
        String logs = "fault-" + fault.id + "-" + DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")
                .withZone(ZoneOffset.UTC).format(Instant.ofEpochMilli(startedMs));
        try (FaultCluster c = FaultCluster.start(logs)) {
            run.cluster = c;
            try (Workload w = new Workload(c, run.history)) {
                run.load = w;
                verdict = run.drive();
            }
        }
        return new FaultReport(fault, durations, startedMs, System.currentTimeMillis() - startedMs, verdict,
                run.availability(), run.windows, run.failures, run.events, run.history);
    }

    private HistoryChecker.Verdict drive() throws Exception {
        event("cluster of " + FaultCluster.NODES + " ready; starting the load");
        load.start(PUBLISHER_HOMES, RATE_PER_PUBLISHER);
        load.awaitAcks(200, Duration.ofSeconds(60), "before the fault");
        hold(durations.warmUp());
        event("fault " + fault.id);
        fault.inflict(this);
        try {
            cluster.awaitAllReady(Duration.ofSeconds(90));
            event("every node ready with the full view");
        } catch (AssertionError e) {
            failures.add("NOT_RECOVERED: " + firstLine(e.getMessage()));
        }
        hold(durations.settle());
        try {
            load.awaitAcks(100, Duration.ofSeconds(60), "after the fault");
        } catch (AssertionError e) {
            failures.add("NO_PROGRESS_AFTER_FAULT: " + firstLine(e.getMessage()));
        }
        event("stopping the publishers");
        load.stopPublishers(Duration.ofSeconds(30));
        if (!load.awaitSubscribersCaughtUp(Duration.ofSeconds(60))) {
            event("not every subscriber reached every topic's newest ack within 60 s (the checker says what is missing)");
        }
        load.readFinalStates(Duration.ofSeconds(20));
        event("final states read; checking");
        return HistoryChecker.check(history);
    }

    Fault.Durations durations() {
        return durations;
    }

    FaultCluster cluster() {
        return cluster;
    }

    /**
     * Cuts {@code a} from {@code b} for {@code length}, then heals. Publishers homed on
     * {@code majorityHomes} count as the majority side; {@code minorityNode} (0 for none) is probed
     * about once a second with a publish through it alone, which it must refuse.
     */
    void cut(List<Integer> a, List<Integer> b, Set<Integer> majorityHomes, int minorityNode, Duration length)
            throws Exception {
        cut(a, b, false, majorityHomes, minorityNode, length);
    }

    /**
     * The same, with what {@code a} sends to {@code b} dropped and the other way left open when
     * {@code oneWay}.
     */
    void cut(List<Integer> a, List<Integer> b, boolean oneWay, Set<Integer> majorityHomes, int minorityNode,
             Duration length) throws Exception {
        long start = history.now();
        String name = oneWay ? "one-way cut " + a + " -> " + b : "cut " + a + " | " + b;
        if (oneWay) {
            cluster.cutOneWay(a, b);
        } else {
            cluster.cut(a, b);
        }
        event(name);
        List<Attempt> probes = new ArrayList<>();
        long end = System.nanoTime() + length.toNanos();
        String uncuttable = null;
        while (System.nanoTime() < end) {
            long next = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            if (uncuttable == null && System.nanoTime() > end - length.toNanos() / 2) {
                uncuttable = connectionsFromUnboundSockets();
            }
            if (minorityNode != 0) {
                Attempt p = load.probe(minorityNode, Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(500),
                        Math.min(TimeUnit.SECONDS.toNanos(5), end - System.nanoTime()))));
                probes.add(p);
            }
            LockSupport.parkNanos(Math.min(next, end) - System.nanoTime()); // the probing rate and the cut's length
        }
        cluster.heal();
        event("healed");
        Window w = new Window(name, start, history.now(), majorityHomes, minorityNode, probes, uncuttable);
        windows.add(w);
        if (minorityNode != 0) {
            if (probes.stream().anyMatch(p -> p.outcome() == Outcome.ACKED)) {
                failures.add("MINORITY_ACKED: node-" + minorityNode + " acked a publish during the cut: "
                        + probes.stream().filter(p -> p.outcome() == Outcome.ACKED).map(p -> p.value() + " as " + p.sequence()).toList());
            }
            if (probes.stream().noneMatch(p -> "NO_MAJORITY".equals(p.error()))) {
                failures.add("MINORITY_NOT_REFUSED: node-" + minorityNode + " never answered NO_MAJORITY during the cut: "
                        + probes.stream().map(p -> p.outcome() + (p.error() == null ? "" : " " + p.error())).distinct().toList());
            }
        }
    }

    /**
     * Cuts {@code a} from {@code b} and heals them again, each for {@code period}, for {@code length}
     * in all, then heals. Publishers homed on {@code majorityHomes} count as the majority side.
     */
    void flappingCut(List<Integer> a, List<Integer> b, Set<Integer> majorityHomes, Duration length, Duration period)
            throws Exception {
        long start = history.now();
        long end = System.nanoTime() + length.toNanos();
        boolean isCut = false;
        int cuts = 0;
        event("flapping cut " + a + " | " + b + " every " + period.toMillis() + " ms");
        while (System.nanoTime() < end) {
            if (isCut) {
                cluster.heal();
            } else {
                cluster.cut(a, b);
                cuts++;
            }
            isCut = !isCut;
            LockSupport.parkNanos(Math.min(period.toNanos(), end - System.nanoTime())); // the flapping's period
        }
        if (isCut) {
            cluster.heal();
        }
        event("healed after " + cuts + " cuts");
        windows.add(new Window("flapping cut " + a + " | " + b, start, history.now(), majorityHomes, 0, List.of(), null));
    }

    /** kill -9 of {@code nodes} at once; {@code down} later, each restarted. */
    void killAndRestart(List<Integer> nodes, Duration down) throws Exception {
        long start = history.now();
        for (int node : nodes) {
            cluster.kill9(node);
        }
        event("kill -9 " + nodes);
        hold(down);
        for (int node : nodes) {
            cluster.restart(node);
        }
        event("restarted " + nodes);
        recovered("after restarting " + nodes);
        windows.add(new Window("kill -9 " + nodes + " until ready again", start, history.now(), without(nodes), 0,
                List.of(), null));
    }

    /** SIGSTOP of {@code node} for {@code length}, then SIGCONT. */
    void pause(int node, Duration length) throws Exception {
        long start = history.now();
        cluster.pause(node);
        event("SIGSTOP node-" + node);
        hold(length);
        cluster.resume(node);
        event("SIGCONT node-" + node);
        windows.add(new Window("SIGSTOP node-" + node, start, history.now(), without(List.of(node)), 0, List.of(), null));
    }

    /** Each node in turn: SIGTERM, restart, every node ready, 100 more acks. */
    void rollingRestart() throws Exception {
        long start = history.now();
        for (int node = 1; node <= FaultCluster.NODES; node++) {
            cluster.stop(node);
            event("stopped node-" + node);
            cluster.restart(node);
            if (!recovered("after restarting node-" + node)) {
                break;
            }
            try {
                load.awaitAcks(100, Duration.ofSeconds(60), "after restarting node-" + node);
            } catch (AssertionError e) {
                failures.add("NO_PROGRESS: " + firstLine(e.getMessage()));
                break;
            }
        }
        windows.add(new Window("rolling restart", start, history.now(), without(List.of()), 0, List.of(), null));
    }

    /** Waits until every node is ready with the full view; records a failure when not within 90 s. */
    private boolean recovered(String when) {
        try {
            cluster.awaitAllReady(Duration.ofSeconds(90));
            event("every node ready " + when);
            return true;
        } catch (AssertionError e) {
            failures.add("NOT_RECOVERED " + when + ": " + firstLine(e.getMessage()));
            return false;
        }
    }

    /** The publishers' homes but {@code nodes}. */
    static Set<Integer> without(Collection<Integer> nodes) {
        Set<Integer> homes = new java.util.TreeSet<>();
        for (int h : PUBLISHER_HOMES) {
            if (!nodes.contains(h)) {
                homes.add(h);
            }
        }
        return homes;
    }

    /** Each window's availability for the publishers homed on its majority side, and one for the whole run. */
    private List<Availability> availability() {
        List<Attempt> attempts = history.attempts().stream().filter(a -> !a.publisher().startsWith("probe@")).toList();
        List<Availability> result = new ArrayList<>();
        for (Window w : windows) {
            Availability a = Availability.of(w.name(), w.startNs(), w.endNs(), attempts,
                    p -> w.majorityHomes().stream().anyMatch(h -> p.endsWith("@node-" + h)));
            if (a.acksInWindow() == 0) {
                failures.add("NO_PROGRESS_ON_MAJORITY: no publisher homed on " + w.majorityHomes() + " had an ack during " + w.name());
            }
            result.add(a);
        }
        long start = attempts.stream().mapToLong(Attempt::sentNs).min().orElse(0);
        long end = attempts.stream().mapToLong(Attempt::doneNs).max().orElse(0);
        result.add(Availability.of("whole run", start, end, attempts, p -> true));
        return result;
    }

    /**
     * Established TCP connections between nodes opened from unbound sockets (local end 127.0.0.1, as
     * the socket sees it; {@link NetworkFaults#sourceAddressOfUser} gives them their node's address
     * on the wire), counted with {@code ss} in this namespace, clients' connections left out.
     */
    private String connectionsFromUnboundSockets() {
        try {
            Process p = new ProcessBuilder("ss", "-tnH", "state", "established").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).replaceAll("\\[::ffff:([0-9.]+)]", "$1");
            p.waitFor(10, TimeUnit.SECONDS);
            Set<String> clientPorts = new java.util.HashSet<>();
            cluster.processes().webSocketUrls().forEach(u -> clientPorts.add(u.replaceAll("^ws://([^/]+)/.*$", "$1")));
            java.util.regex.Pattern unbound = java.util.regex.Pattern.compile(".*\\s127\\.0\\.0\\.1:\\d+\\s+(127\\.0\\.0\\.1[1-5]:\\d+).*");
            long count = out.lines().map(unbound::matcher).filter(java.util.regex.Matcher::matches)
                    .filter(m -> !clientPorts.contains(m.group(1))).count();
            return count + " connections between nodes from sockets not bound to their node's address "
                    + "(cut only thanks to the per-node SNAT)";
        } catch (IOException e) {
            return "ss failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** Keeps the load running for {@code d}: a fault's length, not a wait for a condition. */
    private static void hold(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        for (long left = d.toNanos(); left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private void event(String what) {
        String line = String.format("%8.1f s  %s", history.now() / 1e9, what);
        events.add(line);
        System.out.println("[" + fault.id + "] " + line);
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
