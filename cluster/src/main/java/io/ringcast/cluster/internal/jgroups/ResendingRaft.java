package io.ringcast.cluster.internal.jgroups;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.raft.AppendResult;
import org.jgroups.protocols.raft.Follower;
import org.jgroups.protocols.raft.Log;
import org.jgroups.protocols.raft.LogEntries;
import org.jgroups.protocols.raft.LogEntry;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.protocols.raft.RaftHeader;
import org.jgroups.protocols.raft.Role;
import org.jgroups.raft.util.CommitTable;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code RAFT} whose leader also resends, every {@code resend_interval}, what lagging followers
 * lack while it is busy, and keeps a lagging follower fed at the pace of its acknowledgements. In 1.1.4 the runner sends a follower the entries it is missing (after
 * it refused an AppendEntries whose previous entry it lacks: a restarted or cut-off member) only
 * when its queue stayed empty for {@code resend_interval}; under steady load that never happens,
 * and the fault suite's restarted leader stayed 30,000 entries behind for good
 * ({@code RaftCatchUpTest#aRestartedMemberCatchesUpWhileTheLoadGoesOn}). The resend runs on the
 * runner thread, between two turns of its queue, as the engine's own idle resend does.
 *
 * <p>As a follower it is a {@link LogMatchingFollower}, which commits only entries it knows are the
 * leader's: 1.1.4's follower commits up to the leader's commit index whatever its log holds beyond
 * the entries the leader has checked, so a member cut off with an old leader applied that leader's
 * uncommitted entries once a new leader's commit index passed them (the fault suite's bridge:
 * updates applied twice, another value under an acked sequence, and the member stuck for good on
 * "cannot delete entries ... as commit_index is higher").
 */
final class ResendingRaft extends RAFT {
    private long lastResendNs = System.nanoTime();
    /** Per follower caught up, the commit index last told it by this class; runner thread only. */
    private final Map<Address, Long> lastTold = new HashMap<>();
    private static final long PROBE_NS = TimeUnit.SECONDS.toNanos(1);
    /** Per follower behind, the next index last sent to it by this class, and when; runner thread only. */
    private final Map<Address, Long> lastSent = new HashMap<>();
    private final Map<Address, Long> lastProbeNs = new HashMap<>();
    /** Per follower, its next index at the last pass: a lower one since is a refusal. Runner thread only. */
    private final Map<Address, Long> lastSeenNext = new HashMap<>();
    /**
     * Followers that refused entries (or were first seen behind) and have not caught up since: fed
     * at the pace of their acks. Runner thread only.
     */
    private final Set<Address> lagging = new HashSet<>();
    /**
     * The term of the request {@link #handleUpRequest} handles, for {@link LogMatchingFollower};
     * runner thread only (tests that hand the follower requests set it).
     */
    long requestTerm;

    ResendingRaft() {
        // the header id JGroups registers for RAFT (a subclass has none of its own)
        setId(ClassConfigurator.getProtocolId(RAFT.class));
        impl = new LogMatchingFollower(this);
    }

    /**
     * The engine's role change, with a {@link LogMatchingFollower} for the follower's role (the
     * engine makes its own, privately). Leader and learner are the engine's: this cluster's members
     * are a static list, so no member is ever a learner.
     */
    @Override
    protected RAFT changeRole(Role role) {
        if (role != Role.Follower) {
            return super.changeRole(role);
        }
        if (impl instanceof LogMatchingFollower) {
            return this;
        }
        LogMatchingFollower follower = new LogMatchingFollower(this);
        if (impl != null) {
            impl.destroy();
        }
        follower.init();
        impl = follower;
        notifyRoleChangeListeners(role);
        return this;
    }

    /** The engine's handling of a request from another member, which records the request's term first. */
    @Override
    public void handleUpRequest(Message msg, RaftHeader hdr) {
        requestTerm = hdr.currTerm();
        super.handleUpRequest(msg, hdr);
    }

    /**
     * One turn of the runner, then: every {@code resend_interval}, the engine's resend pass
     * (entries to followers behind, the commit index to the others); and in between, to a
     * lagging follower (one that refused entries) that has acknowledged what it was sent last,
     * its next entries at once, so that a member that was away catches up at the pace of its
     * acknowledgements (1.1.4 sends a lagging follower one entry per pass under load: 10 a
     * second), while any other one behind is sent to at most once a second ({@link #feed}); and, when the queue is
     * empty, the commit index to caught-up followers not told it yet, so that followers apply
     * the last entries of a burst within a round trip, not up to 100 ms later (the fault
     * suite read followers' final states a few updates behind the leader's).
     */
    @Override
    protected void processQueue() {
        super.processQueue();
        CommitTable table = commit_table;
        if (!isLeader() || table == null) {
            lastSent.clear();
            lastProbeNs.clear();
            lastTold.clear();
            lastSeenNext.clear();
            lagging.clear();
            return;
        }
        long now = System.nanoTime();
        boolean due = now - lastResendNs >= TimeUnit.MILLISECONDS.toNanos(resend_interval);
        if (due) {
            lastResendNs = now;
        }
        boolean idle = processing_queue.isEmpty();
        table.forEach((member, entry) -> feed(member, entry, now, due, idle));
    }

    /**
     * A follower caught up gets the commit index on a pass, and at once when the runner is idle
     * and it has not been told the current one (once per follower and commit index: not per
     * acknowledgement, the storm {@code send_commits_immediately} makes). One lagging (it refused
     * entries since it was last caught up, restarted or back from a cut, or was behind when this
     * node became leader) gets its next entries when it acknowledged the last ones. Any other one
     * behind gets them at most once a second: under load a healthy follower is always behind by
     * the entries in flight, which the engine multicast to it already; fed on each of its
     * acknowledgements, it was sent them again (a third of the leader's runner samples at 2,000
     * publishes/s went to those resends, and a follower received each entry twice:
     * {@code RaftCatchUpTest}), and a member behind a cut never answers, while each resend to it
     * costs the runner a range.
     */
    private void feed(Address member, CommitTable.Entry entry, long now, boolean due, boolean idle) {
        long next = entry.nextIndex();
        Long seen = lastSeenNext.put(member, next);
        if (next > last_appended) {
            lagging.remove(member);
            boolean tell = idle && entry.commitIndex() < commit_index
                    && !Long.valueOf(commit_index).equals(lastTold.get(member));
            if (due || tell) {
                lastTold.put(member, commit_index);
                sendAppendEntriesMessage(member, entry);
            }
            return;
        }
        if (seen == null || next < seen) {
            // its next index moves back only when it refused an AppendEntries; first seen behind
            // (this node just became leader), it may lack what the last leader sent. It lags until
            // it has caught up: stopped sooner (once past what it lacked when found lagging), a
            // restarted member lacked what was multicast meanwhile, and caught up at the probes'
            // pace (19 s against 3 in the fault suite's kill-two)
            lagging.add(member);
        }
        boolean progressed = lagging.contains(member) && !Long.valueOf(next).equals(lastSent.get(member));
        boolean probe = due && now - lastProbeNs.getOrDefault(member, 0L) >= PROBE_NS;
        if (progressed || probe) {
            lastSent.put(member, next);
            lastProbeNs.put(member, now);
            sendAppendEntriesMessage(member, entry);
        }
    }

    /**
     * The engine's follower, but for what it commits and acknowledges: only entries it knows to be
     * the leader's. Raft lets a follower commit up to the leader's commit index only as far as the
     * entries the leader's AppendEntries checked (its previous index and term, then its entries); by
     * the Log Matching property, an entry of the same index and term as the leader's vouches for
     * every entry before it. 1.1.4's follower commits {@code min(leader_commit, last_appended)},
     * also on the leader's empty commit message, which checks nothing, and answers it with its
     * {@code last_appended}, which the leader counts as holding its entries up to there. A member
     * that holds entries of an old leader that were never committed (it was cut off with that
     * leader) therefore applies them once the next leader's commit index passes their indices, and
     * can make the leader count it for entries it does not have (the bug of atomix/copycat#265 and
     * scylladb#9965).
     *
     * <p>Here a follower vouches for: what it has committed (a committed entry is in every later
     * leader's log); what this term's AppendEntries checked; and its whole log when its last entry
     * is of this term (only this term's leader made it, after checking the entries before). It
     * commits no further and acknowledges no further. When it holds entries beyond what it vouches
     * for, its first answer in a term is a conflict at the first of them, which makes the leader
     * send again from there and sets the leader's match index to what it vouches for (taking back
     * one this member's previous run may have left); later answers acknowledge what it vouches for.
     * On a conflicting previous entry it deletes nothing (the engine deleted back to the start of
     * the conflicting term, entries a leader may have counted): the leader sends again from the
     * first entry not vouched for, and its entries replace the conflicting ones, as Raft says.
     *
     * <p>Thread contract: the engine's runner thread only, as every role.
     */
    static final class LogMatchingFollower extends Follower {
        private final ResendingRaft raft;
        /** The term of the leader whose request this member handles last, which {@link #checked} and {@link #answered} are of. */
        private long term = -1;
        /** The highest index this term's leader has checked in this member's log; 0 before any. */
        private long checked;
        /** Whether this member has answered this term's leader yet. */
        private boolean answered;

        LogMatchingFollower(ResendingRaft raft) {
            super(raft);
            this.raft = raft;
        }

        @Override
        public AppendResult handleAppendEntriesRequest(LogEntries entries, Address leader, long prevIndex,
                                                       long prevTerm, long entryTerm, long leaderCommit) {
            // the term and the leader in one step: the engine checked the request's term, but a vote
            // request (another thread) may have moved it on since, and 1.1.4 then set the old leader
            // as the new term's, refusing the new one until another election (upstream report 8a)
            if (raft.trySetLeaderAndTerm(leader, raft.requestTerm) < 0) {
                return answer(AppendResult.Result.FAIL_ENTRY_NOT_FOUND); // a leader no longer current
            }
            if (raft.requestTerm != term) {
                term = raft.requestTerm;
                checked = 0;
                answered = false;
            }
            long first = prevIndex + 1;
            // entries the engine would append (those at or below the commit index are this member's already)
            if (entries != null && entries.size() > 0 && first > raft.commitIndex()) {
                Log log = raft.log();
                LogEntry prev = log.get(prevIndex);
                if (prev == null && prevIndex > 0) {
                    raft.num_failed_append_requests_not_found++;
                    return answer(AppendResult.Result.FAIL_ENTRY_NOT_FOUND);
                }
                if (prevIndex > 0 && prev.term() != prevTerm) {
                    raft.num_failed_append_requests_wrong_term++;
                    return sendAgainFrom(vouched() + 1);
                }
                LogEntry existing = log.get(first);
                if (existing != null && existing.term() != entryTerm) {
                    raft.deleteAllLogEntriesStartingFrom(first);
                }
                if (raft.append(first, entries)) {
                    raft.num_successful_append_requests += entries.size();
                    checked = Math.max(checked, prevIndex + entries.size());
                } else {
                    checked = Math.max(checked, lastOfTheSame(entries, first, prevIndex));
                }
            }
            raft.commitLogTo(Math.min(leaderCommit, vouched()), false);
            return answer(AppendResult.Result.OK);
        }

        /** {@code result} for the whole log when this member vouches for it all, else as the class says. */
        private AppendResult answer(AppendResult.Result result) {
            long vouched = vouched();
            long lastAppended = raft.lastAppended();
            if (vouched >= lastAppended) {
                answered = true;
                return new AppendResult(result, lastAppended).commitIndex(raft.commitIndex());
            }
            if (!answered) {
                // rare (a member cut off with an old leader, or restarted), and what an operator would look for
                raft.getLog().info("%s: entries %d to %d are not known to be the term %d leader's; committing"
                        + " none of them until it sends its own", raft.getAddress(), vouched + 1, lastAppended, term);
                return sendAgainFrom(vouched + 1);
            }
            return new AppendResult(result, vouched).commitIndex(raft.commitIndex());
        }

        /** A conflict at {@code index}: the leader sets this member's match index to the one before and sends again from it. */
        private AppendResult sendAgainFrom(long index) {
            answered = true;
            LogEntry mine = raft.log().get(index);
            return new AppendResult(AppendResult.Result.FAIL_CONFLICTING_PREV_TERM, index, mine == null ? 0 : mine.term())
                    .commitIndex(raft.commitIndex());
        }

        /**
         * Of entries the engine did not append (this member has one of the same term at
         * {@code first}), the highest index at which this member's entry has the same term as the
         * leader's; {@code prevIndex} (checked) when none does.
         */
        private long lastOfTheSame(LogEntries entries, long first, long prevIndex) {
            LogEntry[] sent = entries.toArray();
            Log log = raft.log();
            for (long i = Math.min(prevIndex + sent.length, raft.lastAppended()); i >= first; i--) {
                LogEntry mine = log.get(i);
                if (mine != null && mine.term() == sent[(int) (i - first)].term()) {
                    return i;
                }
            }
            return prevIndex;
        }

        /** The highest index up to which this member's log is the leader's, as far as it knows. */
        private long vouched() {
            long vouched = Math.max(checked, raft.commitIndex());
            long lastAppended = raft.lastAppended();
            if (vouched < lastAppended) {
                LogEntry last = raft.log().get(lastAppended);
                if (last != null && last.term() == term) {
                    return lastAppended;
                }
            }
            return vouched;
        }
    }
}
