package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringcast.cluster.ClusterSettings;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.TcpSockets;
import org.jgroups.protocols.BasicTCP;
import org.jgroups.protocols.raft.RaftLeaderException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

/**
 * jgroups-raft 1.1.4 on JGroups 5.5.7 as {@link RaftStack} builds it: members in this JVM on real
 * TCP over loopback, each on its own address (127.0.0.11 ..).
 *
 * <p>What we found reproducing issue 18's lock-up (for the upstream report):
 * <ol>
 *   <li>With {@code send_commits_immediately=true}, 5 members, 200-byte entries and 16 in flight,
 *       commits stopped for good within a second, in 3 runs of 3 (fsync on, 1 MB max_log_size;
 *       before the first snapshot): the leader's runner thread did nothing but
 *       {@code Leader.sendCommitMessageToFollowers}, called for every AppendEntries response; each
 *       commit message is answered by another response, so the queue (9,182) filled with responses,
 *       {@code setAsync} failed with "processing queue is full", the receiver threads blocked in
 *       {@code RAFT.add} ({@code processing_queue.put}), and the followers' acks for the newest
 *       entries never got through: commit index stuck below last appended on every member. The
 *       flag stays off; an idle leader's resend pass (resend_interval 100 ms) tells followers the
 *       commit index instead.</li>
 *   <li>JGroups 5.5.7's {@code Slf4jLogImpl} formats every {@code trace(format, args)} before the
 *       level check; jgroups-raft calls it unguarded per message on the runner, which made the storm
 *       above come sooner and slows the runner at any load ({@link JGroupsLogFactory}).</li>
 *   <li>The lock-up itself ("IllegalStateException on every AppendEntries after the first
 *       snapshot"): a node snapshots when its log passes max_log_size and truncates at its commit
 *       index, even when that is 0 (nothing committed known yet); {@code LogEntryStorage.removeOld(0)}
 *       then swaps in an empty position table, every entry's file position is lost, and each later
 *       append throws a bare {@code IllegalStateException} in {@code LogEntryStorage.write} (the
 *       previous entry has no position), for good. A follower learns the commit index only with the
 *       next AppendEntries, so a new cluster whose first max_log_size bytes arrive before a commit
 *       does (fsync on: slower acks, bigger batches) locks up: reproduced by
 *       {@code RaftCatchUpTest#aMemberWhoseDataWasWipedCatchesUpFromASnapshot} (16 KB log, 200 entries submitted at
 *       once) in 4 runs of 4 before the fix. The engine's file log is no longer used: {@link SegmentedLog}
 *       keeps no positions that a truncation could lose.</li>
 *   <li>Also seen once, after the leader was closed: {@code IllegalStateException: Changing leader
 *       node-1 to node-2 illegally} on every AppendEntries of two followers. The runner handles an
 *       AppendEntries of term 1 (term checked, then {@code raft.leader(node-1)}) while an election
 *       thread moves the term to 2 and clears the leader in between, so the follower ends in term 2
 *       with leader node-1 and refuses node-2 until another election. Not worked around.</li>
 * </ol>
 */
class RaftGroupTest {

    @TempDir
    Path dataDir;

    private RaftSettings shipped() {
        return RaftSettings.defaults(dataDir);
    }

    @Test
    @Timeout(30)
    void threeMembersElectALeaderAndApplyTheSameEntriesInTheSameOrder() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, shipped()).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            assertThat(members.group(leader).term()).isPositive();
            List<CompletableFuture<byte[]>> acks = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                byte[] entry = ("entry-" + i).getBytes();
                acks.add(members.group(i % 3).submit(entry)); // followers forward to the leader
            }
            for (CompletableFuture<byte[]> ack : acks) {
                ack.get(10, TimeUnit.SECONDS);
            }
            members.awaitApplied(300, Duration.ofSeconds(5));
        }
    }

    /**
     * Members write to each other without Nagle's delay: JGroups leaves it on, and at 200 publishes
     * a second an AppendEntries or an ack written behind an unacknowledged one waited for the
     * peer's delayed ACK: five nodes acked at p50 12.8 ms, p99 49 ms; without it 1.9 and 9.1 ms
     * (docs/benchmarks.md, "Nagle's delay between nodes").
     */
    @Test
    @Timeout(30)
    void membersWriteToEachOtherWithoutNaglesDelay() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, shipped()).startAll()) {
            members.awaitLeader(Duration.ofSeconds(10));
            for (int i = 0; i < 3; i++) {
                BasicTCP transport = (BasicTCP) members.group(i).channel().getProtocolStack().getTransport();
                assertThat(transport.tcpNodelay()).as("TCP_NODELAY on member %d's transport", i).isTrue();
            }
        }
    }

    /**
     * The fault suite's partition of 2026-12-01: a node in both sides' views during the cut stayed
     * in its old view after the heal, the others merged without it, and no merge took it back (it
     * served its subscribers nothing new). Here the coordinator suspects a member through {@code
     * GMS} as after such a merge: the member keeps its view of three, whose coordinator it hears
     * (the failure detection's checks are answered) but which multicasts nothing to it. It finds
     * the two others counting it out, takes them out of its view, and merges back. JGroups merges
     * this simpler shape by itself at times, seconds later (the fault suite's, the view's creator
     * now in a view it does not coordinate, it did not in the 90 s the suite waited): when it does
     * so first, the attempt is made again; what proves the remedy is the view of its own the member
     * makes.
     */
    @Test
    @Timeout(120)
    void aMemberLeftInAViewItsOtherMembersLeftTakesThemOutAndMergesBack() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, shipped()).startAll()) {
            members.awaitLeader(Duration.ofSeconds(10));
            long heardWithinMs = shipped().failureDetectionTimeoutMs();
            long quietMs = 3 * heardWithinMs;
            List<String> takenOut = new ArrayList<>();
            for (int attempt = 1; takenOut.isEmpty(); attempt++) {
                assertThat(attempt).as("attempts, JGroups merging the member back by itself before each").isLessThan(5);
                awaitOneViewOfThree(members);
                int coord = indexOf(members.group(0).view().get(0));
                int left = (coord + 2) % 3;
                assertThat(members.group(left).leaveMembersCountingThisNodeOut(heardWithinMs, quietMs))
                        .as("in one view, none counts it out").isEmpty();

                assertThat(members.group(coord).removeFromView(members.group(left).nodeName())).isTrue();
                Await.until(() -> members.group(coord).view().size() == 2, Duration.ofSeconds(10), Duration.ofMillis(10),
                        members::describe);
                org.jgroups.View stranded = members.group(left).channel().getView();
                assertThat(stranded.size()).as("the member left behind keeps its view").isEqualTo(3);
                Await.until(() -> {
                    takenOut.addAll(members.group(left).leaveMembersCountingThisNodeOut(heardWithinMs, quietMs));
                    return !takenOut.isEmpty() || !members.group(left).channel().getView().equals(stranded);
                }, Duration.ofSeconds(20), Duration.ofMillis(100), members::describe);
                if (!takenOut.isEmpty()) {
                    assertThat(takenOut).as("both others: it takes none out until all count it out")
                            .containsExactlyInAnyOrder(members.group(coord).nodeName(),
                                    members.group((coord + 1) % 3).nodeName());
                    Await.until(() -> !members.group(left).view().contains(members.group(coord).nodeName()),
                            Duration.ofSeconds(2), Duration.ofMillis(2), () -> "alone in a view of its own: " + members.describe());
                }
            }
            awaitOneViewOfThree(members);
        }
    }

    /**
     * A member alone in a view of its own that no merge takes back joins the group again: once in a
     * few dozen of the fault suite's partitions, the merge rounds passed a node by after the heal
     * for good (CI, 2026-12-02). Here its {@code MERGE3} is taken out of its stack, so that no merge
     * can come; the others' answers to its discovery say a view without it is there, and the join
     * brings it back, its state machine reloaded from its log and given what was committed
     * meanwhile. Without the join it stays alone (the view of three is never seen).
     */
    @Test
    @Timeout(90)
    void aMemberAloneInAViewNoMergeTakesBackJoinsTheGroupAgainAndCatchesUp() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(3, shipped()).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            submitAll(members.group(leader), 50, 100);
            awaitOneViewOfThree(members);
            int coord = indexOf(members.group(0).view().get(0));
            int stranded = leader == coord ? (leader + 1) % 3 : 3 - leader - coord;
            RaftGroup alone = members.group(stranded);
            assertThat(alone.aloneWhileAnotherViewAnswers(500)).as("in a view of three").isFalse();

            alone.channel().getProtocolStack().removeProtocol(org.jgroups.protocols.MERGE3.class);
            assertThat(members.group(coord).removeFromView(alone.nodeName())).isTrue();
            long heardWithinMs = shipped().failureDetectionTimeoutMs();
            Await.until(() -> !alone.leaveMembersCountingThisNodeOut(heardWithinMs, 3 * heardWithinMs).isEmpty(),
                    Duration.ofSeconds(20), Duration.ofMillis(100), members::describe);
            Await.until(() -> alone.view().equals(List.of(alone.nodeName())), Duration.ofSeconds(5),
                    Duration.ofMillis(5), () -> "alone in a view of its own: " + members.describe());
            submitAll(members.group(leader), 50, 100);

            assertThat(alone.aloneWhileAnotherViewAnswers(1000)).as("the others answer its discovery").isTrue();
            assertThat(alone.rejoin()).isTrue();
            awaitOneViewOfThree(members);
            members.awaitApplied(100, Duration.ofSeconds(20));
        }
    }

    private static void awaitOneViewOfThree(RaftTestMembers members) {
        Await.until(() -> members.running().stream().allMatch(i -> members.group(i).view().size() == 3),
                Duration.ofSeconds(30), Duration.ofMillis(10), () -> "one view of three: " + members.describe());
    }

    private static int indexOf(String nodeName) {
        return Integer.parseInt(nodeName.substring("node-".length())) - 1;
    }

    /**
     * A node killed and started again at once finds its previous run still in the others' view
     * (here for 3 s of verifying the suspicion), and {@code NO_DUPES} refuses its join: it joins
     * once the view lets the previous run go, and catches up (on main before the retry, the start
     * failed, and with it the node: the cluster test that found it restarted a node within a second).
     */
    @Test
    @Timeout(60)
    void aMemberRestartedRightAfterACrashJoinsOnceItsPreviousRunLeftTheView() throws Exception {
        RaftSettings slowToForget = new RaftSettings(dataDir, false, RaftSettings.DEFAULT_MAX_LOG_SIZE_BYTES, 250, 1000,
                3000, 600, 100, 5000, null);
        try (RaftTestMembers members = new RaftTestMembers(3, slowToForget).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(10));
            int restarted = (leader + 1) % 3;
            submitAll(members.group(leader), 50, 100);
            members.crash(restarted);
            members.start(restarted);
            assertThat(members.group(restarted).refusedJoins()).as("joins refused while its previous run was in the view")
                    .isPositive();
            submitAll(members.group(leader), 50, 100);
            members.awaitApplied(100, Duration.ofSeconds(20));
        }
    }

    @Test
    @Timeout(40)
    void fiveMembersElectALeaderAndFollowersLearnTheCommitIndexPromptly() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(5, shipped()).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            long[] submitUs = new long[100];
            long[] followerLagUs = new long[100];
            for (int i = 0; i < 100; i++) {
                long start = System.nanoTime();
                members.group(leader).submit(new byte[200]).get(5, TimeUnit.SECONDS);
                long acked = System.nanoTime();
                submitUs[i] = (acked - start) / 1000;
                long count = i + 1;
                // one submit at a time: no later entry carries this commit index to the followers
                members.awaitApplied(count, Duration.ofSeconds(2));
                followerLagUs[i] = (System.nanoTime() - acked) / 1000;
            }
            Arrays.sort(submitUs);
            Arrays.sort(followerLagUs);
            System.out.printf("5 members, one submit at a time: submit p50 %d us p99 %d us; followers applied "
                    + "after the ack p50 %d us p99 %d us%n", submitUs[50], submitUs[98], followerLagUs[50], followerLagUs[98]);
            // resend_interval (100 ms) bounds it, not the engine's default 1 s
            assertThat(followerLagUs[98]).isLessThan(400_000);
        }
    }

    @Test
    @Timeout(40)
    void closingTheLeaderElectsAnotherAndSubmitsWorkAgain() throws Exception {
        // a submit forwarded to the leader as it closes is never answered: without ClusterNode's
        // LeaderWatch to abandon it, only the submit timeout ends it, so keep that short here (with
        // the shipped 5 s, the test's own 5-s wait for it raced the timeout, and CI failed once)
        try (RaftTestMembers members = new RaftTestMembers(5, shipped().withSubmitTimeoutMs(500)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            members.group(leader).submit(new byte[200]).get(5, TimeUnit.SECONDS);
            int other = (leader + 1) % 5;
            long closed = System.nanoTime();
            members.close(leader);
            long pauseMs = -1;
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    members.group(other).submit(new byte[200]).get(5, TimeUnit.SECONDS);
                    pauseMs = (System.nanoTime() - closed) / 1_000_000;
                    break;
                } catch (ExecutionException refused) {
                    Thread.onSpinWait(); // no leader yet: try again at once
                }
            }
            System.out.printf("leader %s closed: next submit acked after %d ms (new leader %s, term %d)%n",
                    members.member(leader).name(), pauseMs, members.group(other).leader(), members.group(other).term());
            assertThat(pauseMs).isBetween(0L, 2000L);
            members.awaitApplied(2, Duration.ofSeconds(5));
        }
    }

    /**
     * A submit forwarded to a leader that leaves is never answered by the engine: when it may be
     * applied twice (the state machine recognises it), it is sent to the next leader, before any
     * later submit, and acked; the caller waits for the election, not for its timeout.
     */
    @Test
    @Timeout(60)
    void submitsLeftWithALeaderThatLeavesAreSentToTheNextOneInTheirOrder() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(5, shipped().withSubmitTimeoutMs(20_000)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            int follower = (leader + 1) % 5;
            List<CompletableFuture<byte[]>> acks = submitNumbered(members.group(follower), 400, true);
            members.close(leader);
            long closed = System.nanoTime();
            awaitAllAnswered(members.group(follower), acks);
            System.out.printf("leader left: %d submits in flight answered after %d ms%n", acks.size(),
                    (System.nanoTime() - closed) / 1_000_000);
            for (CompletableFuture<byte[]> ack : acks) {
                assertThat(ack).isCompleted().isNotCompletedExceptionally(); // none failed: each was sent again
            }
            Await.until(() -> members.running().stream().allMatch(i -> members.machine(i).heads().stream().distinct()
                    .count() == 400), Duration.ofSeconds(10), Duration.ofMillis(20), () -> "every member to apply all");
            for (int i : members.running()) {
                // a copy the leader committed before it left, and the copy sent again: applied twice, the first in order
                assertThat(members.machine(i).heads().stream().distinct().toList()).as(members.member(i).name())
                        .isEqualTo(LongStream.rangeClosed(1, 400).boxed().toList());
            }
        }
    }

    @Test
    @Timeout(60)
    void submitsThatMayNotBeAppliedTwiceFailAtOnceWhenTheirLeaderLeaves() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(5, shipped().withSubmitTimeoutMs(20_000)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            int follower = (leader + 1) % 5;
            List<CompletableFuture<byte[]>> acks = submitNumbered(members.group(follower), 400, false);
            members.close(leader);
            long closed = System.nanoTime();
            awaitAllAnswered(members.group(follower), acks);
            assertThat((System.nanoTime() - closed) / 1_000_000).as("answered long before the 20-s submit timeout")
                    .isLessThan(10_000);
            // failed by the leader as it left ("I'm not the leader"), or by the follower once it knew another
            assertThat(acks).anyMatch(CompletableFuture::isCompletedExceptionally);
        }
    }

    private static final int ROUNDS = 20;

    /**
     * A vote that keeps its leader (asked of the view's coordinator, which leads: the engine elects
     * the coordinator when logs are level) can lose submits forwarded to the leader meanwhile: its
     * runner registers a batch of submits in the request table it read before the vote replaced it,
     * and nobody answers them (the fault suite's rolling restart: every publisher stalled 5 s).
     * Sent again in the new term, every submit of each round is answered within seconds of a 20-s
     * submit timeout, applied or refused at once while no leader was known. The loss is a race,
     * made likely by a leader that applies slowly: without the resend, 3 runs of 3 failed within
     * their first rounds.
     */
    @Test
    @Timeout(180)
    void submitsTheLeaderLostInAVoteThatKeptItAreSentAgainInTheNewTerm() throws Exception {
        try (RaftTestMembers members = new RaftTestMembers(5, shipped().withSubmitTimeoutMs(20_000)).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            RaftGroup follower = members.group((leader + 1) % 5);
            // the leader's runner applies in the middle of its batches: slower, a vote falls inside one more often
            members.machine(leader).applyNanos = TimeUnit.MICROSECONDS.toNanos(500);
            int votes = 0;
            for (int round = 0; round < ROUNDS; round++) {
                long term = follower.term();
                String leaderBefore = follower.leader();
                List<CompletableFuture<byte[]>> acks = new ArrayList<>();
                long burstStart = System.nanoTime();
                boolean voted = false;
                while (System.nanoTime() - burstStart < TimeUnit.MILLISECONDS.toNanos(200)) {
                    acks.add(follower.submit(ByteBuffer.allocate(200).putLong(acks.size() + 1).array(), true));
                    acks.add(follower.submit(ByteBuffer.allocate(200).putLong(acks.size() + 1).array(), true));
                    Thread.sleep(1); // about as fast as the slowed leader applies: its runner's batches mix submits and applies
                    if (!voted && System.nanoTime() - burstStart > TimeUnit.MILLISECONDS.toNanos(60)) {
                        voted = true;
                        for (int m : members.running()) {
                            members.group(m).startElection(); // the coordinator's alone runs a vote
                        }
                    }
                }
                Await.until(() -> {
                    follower.redirectSubmits(); // as LeaderWatch does at each check
                    return acks.stream().allMatch(CompletableFuture::isDone);
                }, Duration.ofSeconds(5), Duration.ofMillis(20), () -> acks.stream().filter(a -> !a.isDone()).count()
                        + " of " + acks.size() + " submits unanswered, term " + term + " -> " + follower.term()
                        + ", leader " + follower.leader());
                for (CompletableFuture<byte[]> ack : acks) { // refused at once while no leader was known, or applied
                    if (ack.isCompletedExceptionally()) {
                        assertThatThrownBy(ack::join).as("round %d", round).hasCauseInstanceOf(RaftLeaderException.class);
                    }
                }
                votes += follower.term() > term && Objects.equals(follower.leader(), leaderBefore) ? 1 : 0;
            }
            assertThat(votes).as("rounds whose vote moved the term and kept the leader").isGreaterThan(ROUNDS / 2);
        }
    }

    /** Submits entries whose first long is 1 .. n, through {@code group}. */
    private static List<CompletableFuture<byte[]>> submitNumbered(RaftGroup group, int n, boolean resendable) {
        List<CompletableFuture<byte[]>> acks = new ArrayList<>();
        for (long i = 1; i <= n; i++) {
            acks.add(group.submit(ByteBuffer.allocate(200).putLong(i).array(), resendable));
        }
        return acks;
    }

    /** Waits until every submit is answered, telling the group of leader changes as ClusterNode's LeaderWatch does. */
    private static void awaitAllAnswered(RaftGroup group, List<CompletableFuture<byte[]>> acks) {
        Await.until(() -> {
            group.redirectSubmits();
            return acks.stream().allMatch(CompletableFuture::isDone);
        }, Duration.ofSeconds(30), Duration.ofMillis(20), () -> acks.stream().filter(a -> !a.isDone()).count()
                + " of " + acks.size() + " submits unanswered");
    }

    @Test
    @Timeout(40)
    void aMinorityRefusesSubmitsWithinTheTimeout() throws Exception {
        RaftSettings settings = shipped().withSubmitTimeoutMs(1000);
        try (RaftTestMembers members = new RaftTestMembers(5, settings).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            members.group(leader).submit(new byte[200]).get(5, TimeUnit.SECONDS);
            members.close(leader);
            members.close(members.running().get(0));
            members.close(members.running().get(0));
            for (int survivor : members.running()) {
                long start = System.nanoTime();
                CompletableFuture<byte[]> ack = members.group(survivor).submit(new byte[200]);
                assertThatThrownBy(() -> ack.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
                assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(2000);
            }
        }
    }

    /**
     * The shipped stack under issue 18's load (5 members, fsync, 200-byte entries, 16 in flight)
     * with a snapshot every 64 KB of log, so that there are dozens in a few seconds: commits never
     * stall and every member ends with the same state.
     */
    @Test
    @Timeout(60)
    void theShippedConfigurationSurvivesManySnapshotsUnderLoad() throws Exception {
        RaftSettings settings = shipped().withMaxLogSizeBytes(64 * 1024);
        try (RaftTestMembers members = new RaftTestMembers(5, settings).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(15));
            RaftGroup lead = members.group(leader);
            SubmitLoad load = new SubmitLoad(() -> lead, 16, 200);
            try {
                long lastCommit = -1;
                long progressAt = System.nanoTime();
                long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (lead.snapshots() < 20 && System.nanoTime() < end) {
                    Thread.sleep(50); // sampling the commit index, not waiting for a condition
                    long commit = lead.commitIndex();
                    if (commit != lastCommit) {
                        lastCommit = commit;
                        progressAt = System.nanoTime();
                    }
                    assertThat(System.nanoTime() - progressAt)
                            .as("commits stalled: %s", members.describe()).isLessThan(Duration.ofSeconds(3).toNanos());
                }
            } finally {
                load.close();
            }
            long acked = load.acked();
            System.out.printf("many snapshots: %d acked, %d failed, leader snapshots %d, ack p50 %d us p99 %d us%n",
                    acked, load.failed(), lead.snapshots(), load.latencyQuantileMicros(0.5),
                    load.latencyQuantileMicros(0.99));
            assertThat(load.failed()).isZero();
            assertThat(lead.snapshots()).isGreaterThanOrEqualTo(20);
            members.awaitAppliedAlike(lead.commitIndex(), Duration.ofSeconds(10));
            assertThat(members.machine(leader).applied()).isGreaterThanOrEqualTo(acked);
        }
    }

    /** TCP and FD_SOCK2 connect to peers from the member's own address, not the OS's choice. */
    @Test
    @Timeout(30)
    void connectionsToPeersLeaveFromTheMembersOwnAddress() throws Exception {
        InetAddress self = InetAddress.getByName(RaftTestMembers.host(0));
        InetAddress peerHost = InetAddress.getByName(RaftTestMembers.host(1));
        try (ServerSocket fakePeer = new ServerSocket()) {
            fakePeer.bind(new InetSocketAddress(peerHost, 0));
            ClusterSettings cluster = new ClusterSettings("node-1", List.of(
                    new ClusterSettings.Member("node-1", self.getHostAddress(), io.ringcast.testkit.FreePorts.pick()),
                    new ClusterSettings.Member("node-2", peerHost.getHostAddress(), fakePeer.getLocalPort())), 1, 1);
            try (RaftGroup group = new RaftGroup(cluster, shipped(), "g0", new CountingStateMachine())) {
                CompletableFuture<Void> started = CompletableFuture.runAsync(() -> {
                    try {
                        group.start(); // discovery connects to node-2 at once
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                try (Socket fromNode = fakePeer.accept()) {
                    assertThat(fromNode.getInetAddress()).isEqualTo(self);
                }
                started.get(10, TimeUnit.SECONDS);
            }
        }
        // FD_SOCK2 connects only to members of its view: two real members, and node-2's FD port
        try (RaftTestMembers members = new RaftTestMembers(2, shipped()).startAll()) {
            members.awaitLeader(Duration.ofSeconds(10));
            RaftStack.BoundFdSock fd2 = members.group(1).raft().getProtocolStack().findProtocol(RaftStack.BoundFdSock.class);
            int fdPort = fd2.getActualBindPort();
            Await.until(() -> !connectionsTo(peerHost, fdPort).isEmpty(), Duration.ofSeconds(10), Duration.ofMillis(20),
                    () -> "a connection to node-2's FD_SOCK2 port " + fdPort);
            assertThat(connectionsTo(peerHost, fdPort)).allMatch(local -> local.equals(self));
            // JGroups keeps one TCP connection per pair, opened by either side: each leaves from its opener's address
            List<InetAddress> toNode2 = connectionsTo(peerHost, members.member(1).membershipPort());
            List<InetAddress> toNode1 = connectionsTo(self, members.member(0).membershipPort());
            assertThat(toNode2.size() + toNode1.size()).isPositive();
            assertThat(toNode2).allMatch(local -> local.equals(self));
            assertThat(toNode1).allMatch(local -> local.equals(peerHost));
        }
    }

    /**
     * The local addresses of this host's established TCP connections to {@code host:port} (IPv4,
     * which Java's dual-stack sockets list in tcp6 as ::ffff:a.b.c.d: the address's last word).
     */
    private static List<InetAddress> connectionsTo(InetAddress host, int port) {
        List<InetAddress> locals = new ArrayList<>();
        try {
            for (TcpSockets.Socket s : TcpSockets.all()) {
                if (s.state() == TcpSockets.ESTABLISHED && s.remotePort() == port
                        && s.remoteAddressHex().endsWith(hexAddress(host))) {
                    String local = s.localAddressHex().substring(s.localAddressHex().length() - 8);
                    byte[] b = new byte[4];
                    for (int i = 0; i < 4; i++) { // little-endian hex of the IPv4 address
                        b[3 - i] = (byte) Integer.parseInt(local.substring(2 * i, 2 * i + 2), 16);
                    }
                    locals.add(InetAddress.getByAddress(b));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return locals;
    }

    private static String hexAddress(InetAddress a) {
        byte[] b = a.getAddress();
        return String.format("%02X%02X%02X%02X", b[3], b[2], b[1], b[0]);
    }

    static void submitAll(RaftGroup group, int n, int entryBytes) throws Exception {
        List<CompletableFuture<byte[]>> acks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] entry = new byte[entryBytes];
            entry[0] = (byte) i;
            acks.add(group.submit(entry));
        }
        for (CompletableFuture<byte[]> ack : acks) {
            ack.get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Issue 18's lock-up, by hand ({@code -Dringcast.raft.reproduce=true}): fsync on, the engine's
     * default 1 MB max_log_size, 5 members, 200-byte entries with 16 in flight; with
     * {@code -Dringcast.raft.sendCommitsImmediately=true} also the engine's commit push. Prints
     * whether commits stopped for 5 s and where the runners were.
     */
    @Test
    @Timeout(120)
    @EnabledIfSystemProperty(named = "ringcast.raft.reproduce", matches = "true")
    void engineLockUpWithTheIssuesConfiguration() throws Exception {
        RaftSettings bad = shipped().withLogUseFsync(true).withMaxLogSizeBytes(1_000_000);
        try (RaftTestMembers members = new RaftTestMembers(5, bad).startAll()) {
            int leader = members.awaitLeader(Duration.ofSeconds(20));
            for (int i = 0; i < 5; i++) {
                members.group(i).raft().sendCommitsImmediately(Boolean.getBoolean("ringcast.raft.sendCommitsImmediately"));
            }
            RaftGroup lead = members.group(leader);
            long stalledSince = System.nanoTime();
            long lastCommit = -1;
            boolean locked = false;
            try (SubmitLoad load = new SubmitLoad(() -> lead, 16, 200)) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (System.nanoTime() < deadline && lead.snapshots() < 4) {
                    Thread.sleep(100); // sampling the commit index, not waiting for a condition
                    long commit = lead.commitIndex();
                    if (commit != lastCommit) {
                        lastCommit = commit;
                        stalledSince = System.nanoTime();
                    } else if (System.nanoTime() - stalledSince > Duration.ofSeconds(5).toNanos()) {
                        locked = true;
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
                System.out.printf("lock-up run: locked=%s acked=%d failed=%d (first: %s) leader snapshots=%d%s%n", locked,
                        load.acked(), load.failed(), load.firstFailure(), lead.snapshots(), members.describe());
            }
        }
    }
}
