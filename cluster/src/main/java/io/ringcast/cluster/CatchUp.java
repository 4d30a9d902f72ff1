package io.ringcast.cluster;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.cluster.internal.BarrierLog;
import io.ringcast.cluster.internal.RaftGroup;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Decides when a node that joined has caught up ({@link ClusterNode#ready()}): once a leader is
 * known, it submits a barrier ({@link BarrierLog}), which the leader answers with its commit
 * index; the node is caught up when its own commit index (entries it has applied) reaches that.
 * A barrier that fails (no leader any more, a timeout) is sent again.
 *
 * <p>Thread contract: its own thread, {@code ringcast-cluster-catchup}, checks every
 * {@value #CHECK_MS} ms until caught up; {@link #ready()} and {@link #isReady()} from any thread.
 */
final class CatchUp implements AutoCloseable {
    static final long CHECK_MS = 20;

    private final RaftGroup group;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final ScheduledExecutorService timer =
            Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("ringcast-cluster-catchup", true));
    /** The leader's commit index when it applied our barrier; -1 until then. Written by a callback. */
    private volatile long target = -1;
    private volatile boolean barrierInFlight;

    CatchUp(RaftGroup group) {
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

    /** One check. Catch-up thread. */
    private void check() {
        if (ready.isDone()) {
            timer.shutdown();
            return;
        }
        long t = target;
        if (t >= 0) {
            if (group.commitIndex() >= t) {
                ready.complete(null);
                timer.shutdown();
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

    /** Stops checking; a node not caught up by then never is. Idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
        ready.completeExceptionally(new IllegalStateException("the cluster layer stopped before it caught up"));
    }
}
