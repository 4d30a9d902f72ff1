package io.ringcast.cluster;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.cluster.internal.BarrierLog;
import io.ringcast.cluster.internal.RaftGroup;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>Thread contract: its own thread, {@code ringcast-cluster-watch}, checks every
 * {@value #CHECK_MS} ms; {@link #ready()} and {@link #isReady()} from any thread.
 */
final class LeaderWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LeaderWatch.class);
    static final long CHECK_MS = 20;

    private final RaftGroup group;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final ScheduledExecutorService timer =
            Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("ringcast-cluster-watch", true));
    /** The leader's commit index when it applied our barrier; -1 until then. Written by a callback. */
    private volatile long target = -1;
    private volatile boolean barrierInFlight;
    /** The leader last logged; watch thread only. */
    private String loggedLeader = "";

    LeaderWatch(RaftGroup group) {
        this.group = group;
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
        if (ready.isDone()) {
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
     * Logs a change of the leader this node knows, and fails at once the submits forwarded to the
     * former one ({@link RaftGroup#abandonSubmitsTo}): they would hold the batcher's entries in
     * flight until their timeout, pausing every publish here for that long after an election.
     */
    private void logLeaderChange() {
        String leader = String.valueOf(group.leader());
        if (!leader.equals(loggedLeader)) {
            String former = loggedLeader;
            loggedLeader = leader;
            if (!former.isEmpty() && !former.equals("null")) {
                int abandoned = group.abandonSubmitsTo(former);
                if (abandoned > 0) {
                    log.info("cluster: {} entries forwarded to {}, no longer the leader, answered as timed out",
                            abandoned, former);
                }
            }
            if (leader.equals("null")) {
                log.warn("cluster: no leader known (term {}, view {}): publishes here are refused with NO_MAJORITY",
                        group.term(), group.view());
            } else {
                log.info("cluster: leader is {} (term {}, view {}, commit index {})", leader, group.term(), group.view(),
                        group.commitIndex());
            }
        }
    }

    /** Stops checking; a node not caught up by then never is. Idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
        ready.completeExceptionally(new IllegalStateException("the cluster layer stopped before it caught up"));
    }
}
