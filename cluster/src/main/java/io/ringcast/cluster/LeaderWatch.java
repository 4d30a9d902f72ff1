package io.ringcast.cluster;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.cluster.internal.jgroups.BarrierLog;
import io.ringcast.cluster.internal.jgroups.RaftGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Decides when a node that joined has caught up ({@link ClusterNode#ready()}): once a leader is
 * known, it submits a barrier ({@link BarrierLog}), which the leader answers with its commit
 * index; the node is caught up when its own commit index (entries it has applied) reaches that.
 * A barrier that fails (no leader any more, a timeout) is sent again. Afterwards it logs each
 * change of the leader this node knows, with the term and the view, for operators.
 *
 * <p>It also tells when the leader this node knows cannot be reached ({@link #leaderUnreachable}):
 * a submit forwarded to it unanswered for {@code silenceMs}, while this node's commit index did
 * not move for as long, and nothing came from the leader for as long either (when this node is
 * the leader: fewer than a majority acknowledged its log). Answers alone said too much: a leader
 * writing a snapshot (its engine thread busy for a second) or a machine short of CPU delays them
 * while the leader is there, its heartbeats coming, and failing them made every publisher of every
 * node fail over for nothing, to nodes forwarding to the same leader. That happens when the network
 * connects this node to some members only (the fault suite's bridge: node 5 reaches node 3, which
 * reaches the leader, node 1; JGroups' view, and so the engine's leader, stay as they were). Its
 * forwarded submits are then failed at once, the node refuses publishes with {@code NO_MAJORITY}
 * (the client retries through another address), and a barrier probes the leader every
 * {@value #PROBE_MS} ms until one is answered. The same holds when this node is the leader and no
 * majority acknowledges it: fewer than a majority of followers (with itself) moved their place in
 * its log or were level with it within {@code silenceMs} ({@link FollowerAcknowledgements}, which
 * says why hearing from them is not enough).
 *
 * <p>Thread contract: its own thread, {@code ringcast-cluster-watch}, checks every
 * {@value #CHECK_MS} ms; {@link #ready()} and {@link #isReady()} from any thread.
 */
final class LeaderWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LeaderWatch.class);
    static final long CHECK_MS = 20;
    static final long PROBE_MS = 500;
    /**
     * How many silences ({@code failureDetectionMs}) a follower that is heard may acknowledge
     * nothing before this leader takes it for a member of another view: longer than an election
     * and a merge round ({@code GMS.merge_timeout}, 5 s) take together.
     */
    static final long STALE_FOLLOWER_SILENCES = 8;

    /**
     * How many silences ({@code failureDetectionMs}) a member of this node's view, heard within the
     * last, may multicast nothing to it before this node takes it for a member of another view: a
     * member multicasts at least once per heartbeat interval to its view, but during a merge round
     * ({@code GMS.merge_timeout}, 5 s) a coordinator already sends to the view it is installing;
     * with 3, nodes left views they were in after heals (quick fault suite, 2026-12-01).
     */
    static final long OTHER_VIEW_SILENCES = 8;

    /**
     * How long this node may be the only member of its view, with other members answering it,
     * before it joins the group anew ({@link #rejoinIfStranded}): a merge takes it back within one
     * or two of {@code MERGE3}'s checks (every 4.8 s) and a merge round (5 s) when it comes at all.
     */
    static final long ALONE_MS = 15_000;

    private final RaftGroup group;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final ScheduledExecutorService timer =
            Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("ringcast-cluster-watch", true));
    /** The leader's commit index when it applied our barrier; -1 until then. Written by a callback. */
    private volatile long target = -1;
    private volatile boolean barrierInFlight;
    /** The leader last logged; watch thread only. */
    private String loggedLeader = "";
    private final long silenceMs;
    /** Whether the known leader does not answer this node ({@link #leaderUnreachable}). */
    private volatile boolean unreachable;
    private volatile boolean probeInFlight;
    private long lastProbeNs;
    /** The commit index at the last check, and when it last moved; watch thread only. */
    private long lastCommitIndex = -1;
    private long commitMovedNs;
    /** While this node leads, which followers acknowledge its log; watch thread only. */
    private final FollowerAcknowledgements acknowledgements;
    /** Since when no leader is known here (valid while none is); watch thread only. */
    private long leaderlessSinceNs;
    /** When this node last asked for an election ({@link #electIfStalled}); watch thread only. */
    private long electionAskedNs;
    /** When each follower was last removed from the view ({@link #dropFollowersOfAnotherView}); watch thread only. */
    private final Map<String, Long> droppedNs = new HashMap<>();
    /** When this node last took members of another view out of its own ({@link #leaveOtherViews}); watch thread only. */
    private long otherViewsLeftNs;
    /** Whether this node is the only member of its view, since when, and when it last looked for others; watch thread only. */
    private boolean alone;
    private long aloneSinceNs;
    private long aloneLookedNs;
    /** Whether the stall was logged since commits last moved; watch thread only. */
    private boolean stallLogged;

    /** @param silenceMs how long a forwarded submit may go unanswered before the leader counts as unreachable */
    LeaderWatch(RaftGroup group, long silenceMs) {
        this.group = group;
        this.silenceMs = silenceMs;
        this.acknowledgements = new FollowerAcknowledgements(silenceMs);
        this.otherViewsLeftNs = System.nanoTime(); // a member new to the view counts from its installation anyway
    }

    /** Whether the leader this node knows has not answered it for a while: refuse publishes. Any thread. */
    boolean leaderUnreachable() {
        return unreachable;
    }

    void start() {
        timer.scheduleWithFixedDelay(this::check, 0, CHECK_MS, TimeUnit.MILLISECONDS);
    }

    CompletableFuture<Void> ready() {
        return ready;
    }

    boolean isReady() {
        return ready.isDone() && !ready.isCompletedExceptionally();
    }

    /** One check. Watch thread. */
    private void check() {
        logLeaderChange();
        long now = System.nanoTime();
        leaveOtherViews(now);
        rejoinIfStranded(now);
        if (ready.isDone()) {
            checkReachable();
            return;
        }
        long t = target;
        if (t >= 0) {
            if (group.commitIndex() >= t) {
                ready.complete(null);
                log.info("cluster: caught up to commit index {} (leader {}, term {})", t, group.leader(), group.term());
            }
            return;
        }
        if (!barrierInFlight && group.leader() != null) {
            barrierInFlight = true;
            group.submit(BarrierLog.barrier()).whenComplete((response, failure) -> {
                if (failure == null) {
                    target = BarrierLog.commitIndexOf(response);
                }
                barrierInFlight = false;
            });
        }
    }

    /**
     * Logs a change of the leader this node knows; at every check, sends the submits the engine will
     * not answer again, in order, or fails them at once when they may not be sent twice
     * ({@link RaftGroup#redirectSubmits}): those made through a former leader (the engine never
     * answers a submit forwarded to a leader that died), those whose send failed, and those the
     * same leader may have lost in a vote that kept it. They would hold the batcher's entries in
     * flight until their timeout, pausing every publish here for that long. (The batcher's next
     * submit does the same, first, should it come before this check; it may not come: the
     * publishers may be waiting for these.)
     */
    private void logLeaderChange() {
        String leader = String.valueOf(group.leader());
        int[] redirected = group.redirectSubmits();
        if (redirected[0] + redirected[1] > 0) {
            log.info("cluster: {} entries sent again to {} (through a former leader, failed, or sent in an earlier "
                    + "term), {} answered as timed out (they may not be applied twice)", redirected[0], leader,
                    redirected[1]);
        }
        if (!leader.equals(loggedLeader)) {
            loggedLeader = leader;
            unreachable = false;
            if (leader.equals("null")) {
                leaderlessSinceNs = System.nanoTime();
                log.warn("cluster: no leader known (term {}, view {}): publishes here are refused with NO_MAJORITY",
                        group.term(), group.view());
            } else {
                log.info("cluster: leader is {} (term {}, view {}, commit index {})", leader, group.term(), group.view(),
                        group.commitIndex());
            }
        }
    }

    /** Marks the leader unreachable when a forwarded submit waited too long; probes it while so. Watch thread. */
    private void checkReachable() {
        String leader = group.leader();
        long now = System.nanoTime();
        long commitIndex = group.commitIndex();
        if (commitIndex != lastCommitIndex) {
            lastCommitIndex = commitIndex;
            commitMovedNs = now;
            stallLogged = false;
        }
        electIfStalled(leader, now);
        if (leader == null) {
            unreachable = false;
            return;
        }
        boolean leading = leader.equals(group.nodeName());
        if (!leading) {
            acknowledgements.clear();
        }
        // tracked at every check while leading, so that each follower's last move is known when asked
        int acknowledging = leading ? acknowledgements.acknowledging(group.followers(), now) : 0;
        if (leading) {
            dropFollowersOfAnotherView(now);
        }
        if (!unreachable && group.oldestForwardedMs(leader) > silenceMs
                && now - commitMovedNs > TimeUnit.MILLISECONDS.toNanos(silenceMs)
                && (leading ? 1 + acknowledging < group.majority() : group.msSinceHeardFrom(leader) > silenceMs)) {
            unreachable = true;
            int abandoned = group.abandonSubmitsTo(leader);
            log.warn("cluster: leader {} does not answer this node{} ({} entries unanswered for over {} ms, failed as "
                    + "timed out; no entry committed, {} meanwhile): publishes here are refused with NO_MAJORITY "
                    + "until it does", leader, leading ? " (it is this node: no majority acknowledges it)" : "",
                    abandoned, silenceMs, leading ? "fewer than a majority took its entries" : "nothing heard from it");
        }
        if (unreachable && !probeInFlight && now - lastProbeNs > TimeUnit.MILLISECONDS.toNanos(PROBE_MS)) {
            lastProbeNs = now;
            probeInFlight = true;
            group.submit(BarrierLog.barrier()).whenComplete((response, failure) -> {
                probeInFlight = false;
                if (failure == null && unreachable) {
                    unreachable = false;
                    log.info("cluster: leader {} answers this node again", leader);
                }
            });
        }
    }

    /**
     * Asks for an election ({@link RaftGroup#startElection}: only where this node coordinates a
     * view of a majority) when no leader was known for {@code silenceMs}, or when the leader it
     * knows, another node, committed nothing for {@code silenceMs} while a submit of this node
     * waited as long (it stepped down in a view that lost its majority, and the merged view that
     * came after named no other). At most once per {@code 2 * silenceMs}. Watch thread.
     */
    private void electIfStalled(String leader, long now) {
        long silenceNs = TimeUnit.MILLISECONDS.toNanos(silenceMs);
        boolean stalled = leader == null ? now - leaderlessSinceNs > silenceNs
                : !leader.equals(group.nodeName()) && now - commitMovedNs > silenceNs
                        && group.oldestUnansweredMs() > silenceMs;
        if (!stalled || now - electionAskedNs <= 2 * silenceNs) {
            return;
        }
        electionAskedNs = now;
        if (group.startElection() && !stallLogged) {
            stallLogged = true;
            log.warn("cluster: {} for over {} ms (term {}, view {}): this node coordinates the view, asked for an "
                    + "election", leader == null ? "no leader known" : "leader " + leader + " committed nothing of this "
                    + "node's entries", silenceMs, group.term(), group.view());
        }
    }

    /**
     * While this node leads: removes from its view, where it coordinates it, the followers it hears
     * but that acknowledged nothing for {@link #STALE_FOLLOWER_SILENCES} silences: they follow
     * another leader in another view (a merge after overlapping views left this node in its old
     * one, {@link RaftGroup#removeFromView}); alone, it merges back. Also a follower in this very
     * view stuck on another leader of the same term (docs/clustering.md's third way a heal goes
     * wrong), which {@link #leaveOtherViews} cannot see: it multicasts to this node. A follower not
     * heard is left to the failure detection. At most once per member per that time. Watch thread.
     */
    private void dropFollowersOfAnotherView(long now) {
        long staleNs = TimeUnit.MILLISECONDS.toNanos(silenceMs * STALE_FOLLOWER_SILENCES);
        for (String follower : acknowledgements.silentFor(staleNs, now)) {
            Long last = droppedNs.get(follower);
            if ((last == null || now - last > staleNs) && group.msSinceHeardFrom(follower) <= silenceMs) {
                droppedNs.put(follower, now);
                if (group.removeFromView(follower)) {
                    log.warn("cluster: follower {} is heard but acknowledged nothing of this leader's log for over {} "
                            + "ms (term {}, view {}): it follows another view; removed from this node's view so that "
                            + "the views merge", follower, silenceMs * STALE_FOLLOWER_SILENCES, group.term(),
                            group.view());
                }
            }
        }
    }

    /**
     * Takes out of this node's view the members that answer it but count it out of theirs
     * ({@link RaftGroup#leaveMembersCountingThisNodeOut}): a merge after overlapping views left
     * this node in its old view, as a follower or a leader, with members that went over to the
     * other side; nothing else brings it back (the fault suite's partition, 2026-12-01: node 5,
     * in both sides' views during the cut, stayed in its old view after the heal, serving its
     * subscribers nothing new). Any node, leading or not, ready or not. At most once per
     * {@link #OTHER_VIEW_SILENCES} silences. Watch thread.
     */
    private void leaveOtherViews(long now) {
        long quietMs = silenceMs * OTHER_VIEW_SILENCES;
        if (now - otherViewsLeftNs <= TimeUnit.MILLISECONDS.toNanos(quietMs)) {
            return;
        }
        List<String> left = group.leaveMembersCountingThisNodeOut(silenceMs, quietMs);
        if (!left.isEmpty()) {
            otherViewsLeftNs = now;
            log.warn("cluster: {} answer this node but multicast nothing to it for over {} ms (term {}, view {}): they "
                    + "live in another view; taken out of this node's view so that the views merge", left, quietMs,
                    group.term(), group.view());
        }
    }

    /**
     * Joins the group anew ({@link RaftGroup#rejoin}) when this node has been the only member of its
     * view for {@link #ALONE_MS} while other members answer it: no merge took it back (once in a
     * few dozen of the fault suite's partitions, a node that {@link #leaveOtherViews} left alone
     * after the heal stayed so for good, its subscribers served nothing new). A node cut off from
     * every other hears no answer and stays as it is. Looks at most once per {@link #ALONE_MS}.
     * Watch thread (it blocks while it looks and joins: this node has no leader meanwhile anyway).
     */
    private void rejoinIfStranded(long now) {
        if (group.view().size() > 1 || group.majority() < 2) { // none: a join again that failed
            alone = false;
            return;
        }
        if (!alone) {
            alone = true;
            aloneSinceNs = now;
            aloneLookedNs = now;
            return;
        }
        if (now - aloneLookedNs < TimeUnit.MILLISECONDS.toNanos(ALONE_MS)) {
            return;
        }
        aloneLookedNs = now;
        if (!group.aloneWhileAnotherViewAnswers(PROBE_MS)) {
            return;
        }
        log.warn("cluster: this node has been alone in its view for {} ms while other members answer it, and no "
                + "merge took it back (term {}): joining the group again", (now - aloneSinceNs) / 1_000_000, group.term());
        try {
            if (group.rejoin()) {
                log.info("cluster: joined the group again (view {})", group.view());
            }
        } catch (Exception e) {
            log.warn("cluster: joining the group again failed ({}); trying again in {} ms", e.toString(), ALONE_MS);
        }
        alone = false;
    }

    /** Stops checking; a node not caught up by then never is. Idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
        ready.completeExceptionally(new IllegalStateException("the cluster layer stopped before it caught up"));
    }
}
