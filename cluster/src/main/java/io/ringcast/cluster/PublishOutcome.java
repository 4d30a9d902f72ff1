package io.ringcast.cluster;

/** How a publish handed to {@link ClusterNode#publish} ended. */
public enum PublishOutcome {
    /** Sequenced by the partition's owner and held by its backup: it will reach every node. */
    ACKED,
    /** This node, or the owner, is on the minority side of a split: nothing was sequenced. */
    NO_MAJORITY,
    /** No owner took it within {@code replicationTimeoutMs}; it may or may not be applied. */
    TIMED_OUT
}
