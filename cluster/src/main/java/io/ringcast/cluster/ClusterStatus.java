package io.ringcast.cluster;

import java.util.List;

/**
 * A node's view of the cluster at one moment, for {@code /health} and the metrics.
 *
 * @param node               this node's name
 * @param view               the members in the current view, coordinator first
 * @param majority           whether the view holds a majority of the configured members (publishes are sequenced)
 * @param ready              whether the node has caught up with every partition's owner since it started
 * @param ownedPartitions    partitions this node sequences
 * @param backupPartitions   partitions this node is the backup of
 * @param updatesBehind      over all partitions, updates known to exist that this node has not applied yet
 * @param awaitingBackup     updates this node sequenced that their backup has not confirmed yet
 * @param pendingPublishes   publishes received here that their partition's owner has not answered yet
 * @param viewChanges        views seen since start
 */
public record ClusterStatus(String node, List<String> view, boolean majority, boolean ready, int ownedPartitions,
                            int backupPartitions, long updatesBehind, int awaitingBackup, int pendingPublishes,
                            long viewChanges) {
}
