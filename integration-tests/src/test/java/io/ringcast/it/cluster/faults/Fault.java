package io.ringcast.it.cluster.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The six faults of issue 18 and three of issue 28 (a one-way cut, an isolated leader, a flapping
 * partition), each done to a loaded five-node cluster by {@link FaultRun}. A fault
 * opens one or more windows (the time the fault lasts) whose availability the report gives.
 */
enum Fault {
    /** {1,2} | {3,4,5} for 40 s (8 s quick), then healed; node 1 probed: it must refuse. */
    PARTITION("partition") {
        @Override
        void inflict(FaultRun run) throws Exception {
            run.cut(List.of(1, 2), List.of(3, 4, 5), Set.of(3, 5), 1, run.durations().cut());
        }
    },
    /** {1,2} and {4,5} cut from each other, node 3 sees both; then healed. */
    BRIDGE("bridge") {
        @Override
        void inflict(FaultRun run) throws Exception {
            run.cut(List.of(1, 2), List.of(4, 5), Set.of(1, 3, 5), 0, run.durations().cut());
        }
    },
    /**
     * What the busiest leader sends to the two nodes after it dropped, the other way left open, for
     * as long as a partition; then healed. The leader and the two others are a majority.
     */
    ONE_WAY_CUT("one-way-cut") {
        @Override
        void inflict(FaultRun run) throws Exception {
            int leader = run.cluster().busiestLeader(Workload.topics());
            List<Integer> deaf = List.of(next(leader), next(next(leader)));
            run.cut(List.of(leader), deaf, true, FaultRun.without(deaf), 0, run.durations().cut());
        }
    },
    /**
     * The busiest leader cut from every other node, its clients still connected to it; then healed.
     * It is probed: it must refuse, and its publishers go to the others.
     */
    ISOLATED_LEADER("isolated-leader") {
        @Override
        void inflict(FaultRun run) throws Exception {
            int leader = run.cluster().busiestLeader(Workload.topics());
            List<Integer> others = new ArrayList<>();
            for (int node = 1; node <= FaultCluster.NODES; node++) {
                if (node != leader) {
                    others.add(node);
                }
            }
            run.cut(List.of(leader), others, false, FaultRun.without(List.of(leader)), leader, run.durations().cut());
        }
    },
    /** {1,2} | {3,4,5} cut and healed every 3 s, for as long as a partition; then healed. */
    FLAPPING_PARTITION("flapping-partition") {
        @Override
        void inflict(FaultRun run) throws Exception {
            run.flappingCut(List.of(1, 2), List.of(3, 4, 5), Set.of(3, 5), run.durations().cut(), Duration.ofSeconds(3));
        }
    },
    /**
     * A one-way cut from the busiest leader to the two nodes after it, then, without a pause, a
     * flapping partition of {1,2} | {3,4,5}: where a run from outside once saw a publish applied
     * twice (issue 28), its publisher homed on the side that could not hear the others.
     */
    ONE_WAY_THEN_FLAPPING("one-way-then-flapping") {
        @Override
        void inflict(FaultRun run) throws Exception {
            ONE_WAY_CUT.inflict(run);
            FLAPPING_PARTITION.inflict(run);
        }
    },
    /** kill -9 of the busiest group's leader; restarted after a while. */
    KILL_LEADER("kill-leader") {
        @Override
        void inflict(FaultRun run) throws Exception {
            int leader = run.cluster().busiestLeader(Workload.topics());
            run.killAndRestart(List.of(leader), run.durations().down());
        }
    },
    /** kill -9 of two nodes at once (the busiest leader and the next node); both restarted. */
    KILL_TWO("kill-two") {
        @Override
        void inflict(FaultRun run) throws Exception {
            int leader = run.cluster().busiestLeader(Workload.topics());
            run.killAndRestart(List.of(leader, leader % FaultCluster.NODES + 1), run.durations().down());
        }
    },
    /** SIGSTOP of the busiest leader for 30 s (6 s quick), then SIGCONT. */
    PAUSE_LEADER("pause-leader") {
        @Override
        void inflict(FaultRun run) throws Exception {
            run.pause(run.cluster().busiestLeader(Workload.topics()), run.durations().pause());
        }
    },
    /** Every node in turn stopped (SIGTERM), restarted and awaited ready, under load. */
    ROLLING_RESTART("rolling-restart") {
        @Override
        void inflict(FaultRun run) throws Exception {
            run.rollingRestart();
        }
    };

    private static int next(int node) {
        return node % FaultCluster.NODES + 1;
    }

    /** How long the faults last: the long version by hand, the quick one in CI. */
    record Durations(Duration warmUp, Duration cut, Duration down, Duration pause, Duration settle) {
        static final Durations FULL = new Durations(Duration.ofSeconds(10), Duration.ofSeconds(40),
                Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(10));
        // long enough for each fault's elections (within 1-2 s), catch-ups and the checks of
        // availability (within 2 s of the fault and of the heal) three times over; CI runs five of
        // them, so each second here is a second of each run (8-s pauses and 4-s downs until
        // 2026-12-03). Cuts stay at 8 s: with 6, the flapping partition's majority side stalled
        // 3.6-5.7 s (71-91% acked, two runs) where 8 s gave 1.8 s and 100% (one run); not understood
        static final Durations QUICK = new Durations(Duration.ofSeconds(2), Duration.ofSeconds(8),
                Duration.ofSeconds(3), Duration.ofSeconds(6), Duration.ofSeconds(1));
    }

    final String id;

    Fault(String id) {
        this.id = id;
    }

    abstract void inflict(FaultRun run) throws Exception;

    static Fault byId(String id) {
        for (Fault f : values()) {
            if (f.id.equals(id)) {
                return f;
            }
        }
        throw new IllegalArgumentException("no fault '" + id + "'; the faults: "
                + java.util.Arrays.stream(values()).map(f -> f.id).toList());
    }
}
