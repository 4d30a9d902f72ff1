package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.protocols.SHARED_LOOPBACK;
import org.jgroups.protocols.SHARED_LOOPBACK_PING;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.protocols.pbcast.STABLE;
import org.jgroups.protocols.raft.AppendResult;
import org.jgroups.protocols.raft.InMemoryLog;
import org.jgroups.protocols.raft.LogEntries;
import org.jgroups.protocols.raft.LogEntry;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.raft.RaftHandle;
import org.jgroups.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a follower commits and acknowledges when its log holds entries of an old leader that were
 * never committed: the fault suite's bridge, where node 2, cut off with leader node 1, had node 1's
 * entries 5847 to 5877 of term 1 when node 3 led term 2 from 5846. The follower is one member of
 * a three-member group on an in-memory log, alone in its view (no election protocol), and is
 * handed each AppendEntries as the engine's runner would hand it, from leaders that are addresses
 * only. Each entry's first long is {@code term * 1000 + index}, so the state machine's heads tell
 * which leader's entry was applied at each index.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // connecting a channel waits for its join
class LogMatchingFollowerTest {
    private static final Address OLD_LEADER = UUID.randomUUID();
    private static final Address NEW_LEADER = UUID.randomUUID();

    private final List<JChannel> channels = new ArrayList<>();
    private final List<String> logs = new ArrayList<>();

    @AfterEach
    void closeChannelsAndForgetLogs() {
        channels.forEach(JChannel::close);
        InMemoryLog.logs.keySet().removeIf(name -> logs.stream().anyMatch(name::contains));
    }

    @Test
    void aFollowerCutOffWithAnOldLeaderNeverAppliesThatLeadersUncommittedEntries() throws Exception {
        CountingStateMachine machine = new CountingStateMachine();
        RAFT raft = follower(new ResendingRaft(), machine);
        oldLeaderAppendsTenAndCommitsFive(raft);

        // the new leader of term 2 has entries 1 to 5 only, and its commit index passed 10 with entries of its own
        raft.setLeaderAndTerm(NEW_LEADER, 2);
        AppendResult commitOnly = append(raft, NEW_LEADER, 0, 0, 12, null);
        assertThat(raft.commitIndex()).as("a commit message checks nothing: nothing beyond 5 is committed").isEqualTo(5);
        assertThat(result(commitOnly)).isEqualTo(AppendResult.Result.FAIL_CONFLICTING_PREV_TERM);
        assertThat(commitOnly.index()).as("send again from the first entry not vouched for").isEqualTo(6);

        AppendResult appended = append(raft, NEW_LEADER, 5, 1, 12, entries(2, 6, 8));
        assertThat(result(appended)).isEqualTo(AppendResult.Result.OK);
        assertThat(appended.index()).isEqualTo(8);
        assertThat(raft.commitIndex()).as("committed as far as the leader checked").isEqualTo(8);
        assertThat(raft.lastAppended()).as("the old leader's 9 and 10 are gone").isEqualTo(8);
        assertThat(machine.heads()).containsExactly(1001L, 1002L, 1003L, 1004L, 1005L, 2006L, 2007L, 2008L);
    }

    @Test
    void aFollowerAcknowledgesOnlyWhatItCanVouchFor() throws Exception {
        RAFT raft = follower(new ResendingRaft(), new CountingStateMachine());
        oldLeaderAppendsTenAndCommitsFive(raft);
        raft.setLeaderAndTerm(NEW_LEADER, 2);
        assertThat(append(raft, NEW_LEADER, 0, 0, 5, null).index()).isEqualTo(6); // the first answer takes back

        // the new leader has the old leader's 6 and 7 (it was their follower), then its own
        AppendResult same = append(raft, NEW_LEADER, 5, 1, 5, entries(1, 6, 7));
        assertThat(result(same)).as("the entries it has already, checked up to 7").isEqualTo(AppendResult.Result.OK);
        assertThat(same.index()).as("8 to 10 are not vouched for").isEqualTo(7);
        assertThat(raft.lastAppended()).isEqualTo(10);
        assertThat(append(raft, NEW_LEADER, 0, 0, 7, null).index()).as("a commit message changes nothing").isEqualTo(7);
        assertThat(raft.commitIndex()).isEqualTo(7);
    }

    @Test
    void aConflictingPreviousEntryDeletesNothingAndAsksForEverythingNotVouchedFor() throws Exception {
        RAFT raft = follower(new ResendingRaft(), new CountingStateMachine());
        oldLeaderAppendsTenAndCommitsFive(raft);
        raft.setLeaderAndTerm(NEW_LEADER, 2);

        AppendResult conflict = append(raft, NEW_LEADER, 8, 2, 5, entries(2, 9, 9));
        assertThat(result(conflict)).isEqualTo(AppendResult.Result.FAIL_CONFLICTING_PREV_TERM);
        assertThat(conflict.index()).isEqualTo(6);
        assertThat(raft.lastAppended()).as("the engine deleted back to 6; nothing is, until the leader's entries replace them")
                .isEqualTo(10);
    }

    @Test
    void aRestartedFollowerWhoseLastEntryIsOfTheCurrentTermVouchesForItsWholeLog() throws Exception {
        RAFT raft = follower(new ResendingRaft(), new CountingStateMachine(), "restarted");
        raft.setLeaderAndTerm(NEW_LEADER, 2);
        append(raft, NEW_LEADER, 0, 0, 0, entries(2, 1, 4));
        channels.remove(channels.size() - 1).close();

        // the same log, a new follower that has checked nothing: only this term's leader made entry 4
        raft = follower(new ResendingRaft(), new CountingStateMachine(), "restarted");
        raft.setLeaderAndTerm(NEW_LEADER, 2);
        assertThat(raft.lastAppended()).isEqualTo(4);
        AppendResult commitOnly = append(raft, NEW_LEADER, 0, 0, 3, null);
        assertThat(result(commitOnly)).isEqualTo(AppendResult.Result.OK);
        assertThat(commitOnly.index()).isEqualTo(4);
        assertThat(raft.commitIndex()).isEqualTo(3);
    }

    /**
     * The engine's own follower, for comparison: it applies the old leader's entries 6 to 10 on the
     * new leader's commit message and acknowledges 10. The day this fails, the engine is mended and
     * {@link ResendingRaft.LogMatchingFollower} can go.
     */
    @Test
    void theEnginesOwnFollowerAppliesTheOldLeadersUncommittedEntries() throws Exception {
        CountingStateMachine machine = new CountingStateMachine();
        RAFT raft = follower(new RAFT(), machine);
        oldLeaderAppendsTenAndCommitsFive(raft);
        raft.setLeaderAndTerm(NEW_LEADER, 2);

        AppendResult commitOnly = append(raft, NEW_LEADER, 0, 0, 12, null);
        assertThat(commitOnly.index()).isEqualTo(10);
        assertThat(raft.commitIndex()).isEqualTo(10);
        assertThat(machine.heads()).endsWith(1009L, 1010L);
    }

    @Test
    void aRequestWhoseTermEndedMeanwhileLeavesTheNewTermWithoutALeaderUntilItsOwnSpeaks() throws Exception {
        RAFT raft = follower(new ResendingRaft(), new CountingStateMachine());
        oldLeaderAppendsTenAndCommitsFive(raft);
        raft.setLeaderAndTerm(null, 2); // a vote request of term 2, on another thread, after the runner checked term 1

        AppendResult stale = append(raft, 1, OLD_LEADER, 10, 1, 5, entries(1, 11, 11));
        assertThat(stale.success()).isFalse();
        assertThat(raft.leader()).as("term 2 has no leader yet").isNull();
        assertThat(raft.lastAppended()).isEqualTo(10);

        AppendResult fromTheNewLeader = append(raft, 2, NEW_LEADER, 10, 1, 5, entries(2, 11, 11));
        assertThat(result(fromTheNewLeader)).isEqualTo(AppendResult.Result.OK);
        assertThat(raft.leader()).isEqualTo(NEW_LEADER);
    }

    /**
     * The engine's own follower, in the same race: it takes the ended term's leader as the new term's,
     * and refuses the new leader (upstream report 8a). The day this fails, the engine is mended.
     */
    @Test
    void theEnginesOwnFollowerTakesTheLeaderOfAnEndedTermAsTheNewTermsLeader() throws Exception {
        RAFT raft = follower(new RAFT(), new CountingStateMachine());
        oldLeaderAppendsTenAndCommitsFive(raft);
        raft.setLeaderAndTerm(null, 2);

        append(raft, 1, OLD_LEADER, 10, 1, 5, entries(1, 11, 11));
        assertThat(raft.leader()).isEqualTo(OLD_LEADER);
        assertThat(raft.currentTerm()).isEqualTo(2);
        assertThatThrownBy(() -> append(raft, 2, NEW_LEADER, 11, 1, 5, entries(2, 12, 12)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("illegally");
    }

    /** Term 1: the old leader appends entries 1 to 10 here and has committed 5. */
    private static void oldLeaderAppendsTenAndCommitsFive(RAFT raft) {
        raft.setLeaderAndTerm(OLD_LEADER, 1);
        AppendResult r = append(raft, OLD_LEADER, 0, 0, 5, entries(1, 1, 10));
        assertThat(result(r)).isEqualTo(AppendResult.Result.OK);
        assertThat(raft.lastAppended()).isEqualTo(10);
        assertThat(raft.commitIndex()).isEqualTo(5);
    }

    /** An AppendEntries of the current term, as the runner hands it to the follower. */
    private static AppendResult append(RAFT raft, Address leader, long prevIndex, long prevTerm, long leaderCommit,
                                       LogEntries entries) {
        return append(raft, raft.currentTerm(), leader, prevIndex, prevTerm, leaderCommit, entries);
    }

    /** An AppendEntries of {@code requestTerm}, which the runner checked against a term that may have moved on since. */
    private static AppendResult append(RAFT raft, long requestTerm, Address leader, long prevIndex, long prevTerm,
                                       long leaderCommit, LogEntries entries) {
        if (raft instanceof ResendingRaft ours) {
            ours.requestTerm = requestTerm;
        }
        long entryTerm = entries == null ? requestTerm : entries.iterator().next().term();
        return raft.impl().handleAppendEntriesRequest(entries, leader, prevIndex, prevTerm, entryTerm, leaderCommit);
    }

    /** The engine's result of an answer, which it shows only in its text. */
    private static AppendResult.Result result(AppendResult r) {
        if (r.success()) {
            return AppendResult.Result.OK;
        }
        for (AppendResult.Result failure : AppendResult.Result.values()) {
            if (r.toString().contains("(" + failure + ")")) {
                return failure;
            }
        }
        throw new AssertionError("no result in " + r);
    }

    /** Entries {@code from} to {@code to} of {@code term}, each headed by {@code term * 1000 + index}. */
    private static LogEntries entries(long term, long from, long to) {
        LogEntries entries = new LogEntries();
        for (long i = from; i <= to; i++) {
            entries.add(new LogEntry(term, ByteBuffer.allocate(Long.BYTES).putLong(term * 1000 + i).array()));
        }
        return entries;
    }

    private RAFT follower(RAFT raft, CountingStateMachine machine) throws Exception {
        return follower(raft, machine, "b-" + System.nanoTime());
    }

    /**
     * Member "b" of {a, b, c}, connected alone on a shared loopback, with {@code raft} on the
     * in-memory log named {@code log} (kept in this JVM across a restart of the member, until the test ends).
     */
    private RAFT follower(RAFT raft, CountingStateMachine machine, String log) throws Exception {
        logs.add(log);
        raft.raftId("b").members(List.of("a", "b", "c")).logClass(InMemoryLog.class.getName())
                .logPrefix(log).resendInterval(60_000);
        JChannel ch = new JChannel(new SHARED_LOOPBACK(), new SHARED_LOOPBACK_PING(), new NAKACK2(), new UNICAST3(),
                new STABLE(), new GMS().setJoinTimeout(100), raft);
        channels.add(ch);
        new RaftHandle(ch, machine);
        ch.name("b").connect("log-matching-" + System.nanoTime());
        return raft;
    }
}
