package io.ringcast.cluster;

import java.util.List;

/**
 * A node's view of the cluster at one moment, for {@code /health} and the metrics.
 *
 * @param node            this node's name
 * @param leader          the Raft leader's name as this node knows it, or null while none is known
 * @param term            the current Raft term as this node knows it
 * @param majority        whether a leader is known: publishes are committed (a leader needs a majority)
 * @param ready           whether the node has caught up since it started ({@link ClusterNode#ready()})
 * @param members         the configured members
 * @param view            the members this node is connected with now (its JGroups view), coordinator first
 * @param commitIndex     the index of the last log entry this node knows committed, and has applied
 * @param lastAppended    the index of the last entry in this node's log
 * @param queuedPublishes publishes received here waiting for a log entry
 * @param snapshots       snapshots this node has taken since it started
 */
public record ClusterStatus(String node, String leader, long term, boolean majority, boolean ready,
                            List<String> members, List<String> view, long commitIndex, long lastAppended,
                            int queuedPublishes, int snapshots) {
}
