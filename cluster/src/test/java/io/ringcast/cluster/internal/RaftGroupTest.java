package io.ringcast.cluster.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class RaftGroupTest {

    @TempDir
    Path dataDir;

    /**
     * The lock-up issue 18 met: fsync on, the engine's default 1 MB max_log_size, 5 members,
     * 200-byte entries with 16 in flight. Reports whether commits stopped after a snapshot.
     */
    @Test
    @Timeout(120)
    @EnabledIfSystemProperty(named = "ringcast.raft.reproduce", matches = "true")
    void engineLockUpWithFsyncAndTheDefaultLogSize() throws Exception {
        RaftSettings bad = RaftSettings.defaults(dataDir).withLogUseFsync(true).withMaxLogSizeBytes(1_000_000);
        try (RaftTestMembers members = new RaftTestMembers(5, bad).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(20));
            RaftGroup lead = members.group(leader);
            long stalledSince = System.nanoTime();
            long lastCommit = -1;
            boolean locked = false;
            try (SubmitLoad load = new SubmitLoad(() -> lead, 16, 200)) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (System.nanoTime() < deadline) {
                    Thread.sleep(100); // sampling the commit index, not waiting for a condition
                    long commit = lead.commitIndex();
                    if (commit != lastCommit) {
                        lastCommit = commit;
                        stalledSince = System.nanoTime();
                    } else if (System.nanoTime() - stalledSince > Duration.ofSeconds(5).toNanos()) {
                        locked = true;
                        break;
                    }
                    if (lead.snapshots() >= 4) {
                        break;
                    }
                }
                if (locked) {
                    Thread.getAllStackTraces().forEach((t, stack) -> {
                        if (t.getName().startsWith("runner")) {
                            System.out.println(t.getName() + " " + t.getState());
                            for (StackTraceElement e : stack) {
                                System.out.println("    " + e);
                            }
                        }
                    });
                }
                System.out.println("first failure: " + load.firstFailure());
                System.out.printf("lock-up run: locked=%s acked=%d failed=%d leader snapshots=%d%s%n", locked,
                        load.acked(), load.failed(), lead.snapshots(), members.describe());
            }
        }
    }

    @Test
    @Timeout(30)
    void threeMembersElectALeader() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, RaftSettings.defaults(dataDir)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            assertThat(members.group(leader).term()).isPositive();
        }
    }
}
