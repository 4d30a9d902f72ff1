package io.ringcast.cluster.internal.jgroups;

import static io.ringcast.cluster.internal.jgroups.RaftGroupTest.submitAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.testkit.Await;
import org.jgroups.protocols.MsgStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;

/**
 * A member that was away catches up: from its own log, from a snapshot when its data is gone, and
 * while the group is under load. Real members on loopback ({@link RaftTestMembers}).
 */
class RaftCatchUpTest {

    @TempDir
    Path dataDir;

    private RaftSettings shipped() {
        return RaftSettings.defaults(dataDir);
    }

    @Test
    @Timeout(40)
    void aRestartedMemberCatchesUpFromItsLog() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, shipped()).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            int follower = (leader + 1) % 3;
            submitAll(members.group(leader), 100, 200);
            members.awaitApplied(100, Duration.ofSeconds(5));
            members.close(follower);
            submitAll(members.group(leader), 100, 200);
            members.start(follower);
            // a fresh state machine, rebuilt from the member's own log, then the 100 it missed
            members.awaitApplied(200, Duration.ofSeconds(10));
            assertThat(members.machine(follower).snapshotsRead()).isZero();
        }
    }

    @Test
    @Timeout(40)
    void aMemberWhoseDataWasWipedCatchesUpFromASnapshot() throws Exception {
        RaftSettings smallLog = shipped().withMaxLogSizeBytes(16 * 1024);
        try (RaftTestMembers members = new RaftTestMembers(3, smallLog).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            int follower = (leader + 1) % 3;
            try {
                submitAll(members.group(leader), 200, 200);
            } catch (ExecutionException e) {
                throw new AssertionError("submits failed: " + members.describe(), e);
            }
            members.close(follower);
            members.wipe(follower);
            try {
                submitAll(members.group(leader), 200, 200);
            } catch (ExecutionException e) {
                throw new AssertionError("submits failed: " + members.describe(), e);
            }
            assertThat(members.group(leader).snapshots()).isPositive();
            members.start(follower);
            members.awaitApplied(400, Duration.ofSeconds(10));
            assertThat(members.machine(follower).snapshotsRead()).isPositive();
        }
    }

    /**
     * Under continuous load a restarted follower catches up while the load goes on. jgroups-raft
     * 1.1.4 resends what a follower lacks only once its runner's queue has been idle for
     * {@code resend_interval}, which never happens under load: the fault suite's restarted leader
     * stayed 30,000 entries behind for good. {@link RaftStack}'s RAFT resends under load too.
     */
    @Test
    @Timeout(60)
    void aRestartedMemberCatchesUpWhileTheLoadGoesOn() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, shipped().withLogUseFsync(false)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            int follower = (leader + 1) % 3;
            RaftGroup lead = members.group(leader);
            SubmitLoad load = new SubmitLoad(() -> lead, 4, 200);
            try {
                Await.until(() -> lead.commitIndex() > 500, Duration.ofSeconds(20), Duration.ofMillis(10),
                        members::describe);
                members.close(follower);
                long closedAt = lead.commitIndex();
                Await.until(() -> lead.commitIndex() > closedAt + 2000, Duration.ofSeconds(20), Duration.ofMillis(10),
                        members::describe);
                members.start(follower);
                RaftGroup back = members.group(follower);
                Await.until(() -> back.commitIndex() >= lead.commitIndex() - 100, Duration.ofSeconds(15),
                        Duration.ofMillis(10), () -> "the restarted member catches up under load: " + members.describe());
            } finally {
                load.close();
            }
            assertThat(load.failed()).isZero();
        }
    }

    /**
     * Under load a healthy follower is sent each entry about once: the engine multicasts every
     * entry to every follower, and {@link ResendingRaft} feeds only followers that refused entries.
     * It fed every follower behind the leader's last entry on each of its acknowledgements, and
     * under load a healthy follower is always behind by the entries in flight: it received each
     * entry twice (1,994 bytes per entry of 1,000 here; 1,009 to 1,013 now).
     */
    @Test
    @Timeout(60)
    void aHealthyFollowerUnderLoadReceivesEachEntryAboutOnce() throws Exception {
        int entryBytes = 1000;
        try (RaftTestMembers members = new RaftTestMembers(3, shipped().withLogUseFsync(false)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            RaftGroup lead = members.group(leader);
            MsgStats received = members.group((leader + 1) % 3).channel().getProtocolStack().getTransport()
                    .getMessageStats().enable(true);
            SubmitLoad load = new SubmitLoad(() -> lead, 16, entryBytes);
            try {
                Await.until(() -> lead.commitIndex() > 200, Duration.ofSeconds(20), Duration.ofMillis(10),
                        members::describe);
                long bytesFrom = received.getNumBytesReceived();
                long commitFrom = lead.commitIndex();
                Await.until(() -> lead.commitIndex() > commitFrom + 3000, Duration.ofSeconds(30), Duration.ofMillis(10),
                        members::describe);
                double bytesPerEntry = (received.getNumBytesReceived() - bytesFrom)
                        / (double) (lead.commitIndex() - commitFrom);
                assertThat(bytesPerEntry).as("bytes a follower received per entry of %d bytes committed", entryBytes)
                        .isLessThan(1.5 * entryBytes);
            } finally {
                load.close();
            }
            assertThat(load.failed()).isZero();
        }
    }
}
