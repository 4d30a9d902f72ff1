package io.ringcast.it.cluster.faults;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * The six faults of issue 18, each done to a loaded five-node cluster by {@link FaultRun}. A fault
 * opens one or more windows (the time the fault lasts) whose availability the report gives.
 */
enum Fault {
    /** {1,2} | {3,4,5} for 40 s (15 s quick), then healed; node 1 probed: it must refuse. */
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
    /** SIGSTOP of the busiest leader for 30 s (15 s quick), then SIGCONT. */
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

    /** How long the faults last: the long version by hand, the quick one in CI. */
    record Durations(Duration warmUp, Duration cut, Duration down, Duration pause, Duration settle) {
        static final Durations FULL = new Durations(Duration.ofSeconds(10), Duration.ofSeconds(40),
                Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(10));
        static final Durations QUICK = new Durations(Duration.ofSeconds(5), Duration.ofSeconds(15),
                Duration.ofSeconds(8), Duration.ofSeconds(15), Duration.ofSeconds(5));
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
