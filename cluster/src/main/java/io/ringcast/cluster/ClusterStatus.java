package io.ringcast.cluster;

import java.util.List;

/**
 * A node's view of the cluster at one moment, for {@code /health} and the metrics. The first
 * fields are the first group's (the only one on jgroups-raft); {@link #groups} has each group's.
 *
 * @param node            this node's name
 * @param leader          the first group's Raft leader as this node knows it, or null while none is known
 * @param term            the first group's current Raft term as this node knows it
 * @param majority        whether every group's leader is known: publishes are committed (a leader needs a majority)
 * @param ready           whether the node has caught up since it started ({@link ClusterNode#ready()})
 * @param members         the configured members
 * @param view            the members this node is connected with now (its JGroups view, coordinator
 *                        first); under Ratis, which keeps no view, the members it heard from in its
 *                        groups' traffic within {@code failureDetectionMs}, itself included (its
 *                        followers where it leads, its leaders)
 * @param commitIndex     the first group's index of the last log entry this node knows committed
 * @param lastAppended    the first group's index of the last entry in this node's log
 * @param queuedPublishes publishes received here waiting for a log entry, all groups
 * @param snapshots       snapshots this node has taken since it started, all groups
 * @param engine          {@code jgroups} or {@code ratis} ({@code cluster.engine})
 * @param groups          each Raft group, in order ({@code cluster.groups})
 */
public record ClusterStatus(String node, String leader, long term, boolean majority, boolean ready,
                            List<String> members, List<String> view, long commitIndex, long lastAppended,
                            int queuedPublishes, int snapshots, String engine, List<Group> groups) {

    public ClusterStatus {
        members = List.copyOf(members);
        view = List.copyOf(view);
        groups = List.copyOf(groups);
    }

    /**
     * One Raft group as this node sees it.
     *
     * @param name            {@code g0}, {@code g1}, ...
     * @param leader          its leader as this node knows it, or null while none is known
     * @param term            its current term
     * @param commitIndex     the last entry this node knows committed
     * @param appliedIndex    the last entry this node applied
     * @param lastAppended    the last entry in this node's log of the group
     * @param queuedPublishes publishes received here waiting for one of its entries
     * @param snapshots       snapshots this node took of it since it started
     * @param lastSnapshot    the last of them, or null when none (or the engine does not tell)
     * @param followers       on its leader, each other member's progress; empty elsewhere
     */
    public record Group(String name, String leader, long term, long commitIndex, long appliedIndex,
                        long lastAppended, int queuedPublishes, int snapshots, Snapshot lastSnapshot,
                        List<Follower> followers) {
        public Group {
            followers = List.copyOf(followers);
        }

        /** A group whose engine tells neither its last snapshot nor its followers' progress (Ratis, for now). */
        public Group(String name, String leader, long term, long commitIndex, long appliedIndex, long lastAppended,
                     int queuedPublishes, int snapshots) {
            this(name, leader, term, commitIndex, appliedIndex, lastAppended, queuedPublishes, snapshots, null,
                    List.of());
        }
    }

    /**
     * The last snapshot this node took of a group.
     *
     * @param bytes  its size
     * @param millis how long writing it took
     * @param atMs   when it was written (epoch milliseconds)
     * @param index  the commit index it covers
     */
    public record Snapshot(long bytes, long millis, long atMs, long index) {
    }

    /**
     * How far a member has the group's log, as its leader knows it: on the leader only.
     *
     * @param member     the member's name
     * @param matchIndex the last entry the leader knows the member has
     * @param lag        entries in the leader's log the member does not have yet
     */
    public record Follower(String member, long matchIndex, long lag) {
    }
}
