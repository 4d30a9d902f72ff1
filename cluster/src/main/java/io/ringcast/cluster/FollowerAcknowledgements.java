package io.ringcast.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * On a leader, which followers acknowledge its log: each follower's match index (the engine's
 * commit table, {@link ClusterStatus.Follower}) and when it last moved, so that {@link LeaderWatch}
 * can tell a leader that a majority still follows from one that only hears from a majority.
 *
 * <p>Hearing is not following: after a one-way cut from the leader to two of four followers, those
 * two made a JGroups view without it and elected another leader, and the other two, in that view,
 * dropped what the old leader sent them as from a non-member, while everything the four sent it
 * still arrived. The old leader heard a majority, kept its clients, and answered none of their
 * publishes for the cut's length (the fault suite's {@code one-way-cut}, 2026-11-30: 8.7 s).
 *
 * <p>A follower acknowledges when its match index moved within the silence, or is level with the
 * leader's log (an idle cluster moves nothing). Thread contract: one thread, the watch's.
 */
final class FollowerAcknowledgements {
    private final long silenceNs;
    /** Each follower's match index when last seen, and when it last moved (ns). */
    private final Map<String, long[]> progress = new HashMap<>();

    FollowerAcknowledgements(long silenceMs) {
        this.silenceNs = TimeUnit.MILLISECONDS.toNanos(silenceMs);
    }

    /**
     * Takes the followers' progress as the leader's commit table gives it now, and counts those that
     * acknowledged within the silence. A follower seen for the first time counts from now: a new
     * leader's followers have had no time to answer it yet.
     */
    int acknowledging(List<ClusterStatus.Follower> followers, long nowNs) {
        int acknowledging = 0;
        for (ClusterStatus.Follower f : followers) {
            long[] p = progress.computeIfAbsent(f.member(), m -> new long[] {f.matchIndex(), nowNs});
            if (f.matchIndex() != p[0] || f.lag() == 0) {
                p[0] = f.matchIndex();
                p[1] = nowNs;
            }
            if (nowNs - p[1] <= silenceNs) {
                acknowledging++;
            }
        }
        return acknowledging;
    }

    /**
     * The followers, of those {@link #acknowledging} last took, that acknowledged nothing for over
     * {@code silentNs}.
     */
    List<String> silentFor(long silentNs, long nowNs) {
        List<String> silent = new ArrayList<>();
        progress.forEach((member, p) -> {
            if (nowNs - p[1] > silentNs) {
                silent.add(member);
            }
        });
        return silent;
    }

    /** This node does not lead (any more): what it knew of followers is forgotten, for its next term. */
    void clear() {
        progress.clear();
    }
}
