package io.ringcast.server.internal;

/**
 * How a cluster node's sequencer has a topic removed: not at once, but through its group's log, so
 * that every node removes it in the same place among the updates ({@link ClusterRoute}). The
 * sequencer uses it for expiry: only the leader of a topic's group logs its expiry, as a removal
 * that a publish logged first cancels.
 *
 * <p>Thread contract: any thread; neither call blocks.
 */
interface LoggedRemovals {
    /** Whether this node leads the group of {@code path} now. */
    boolean leads(String path);

    /**
     * Logs the removal of the topic at {@code path} if its last sequence is still
     * {@code ifLastSequence}. False when the log's queue is full: nothing was logged.
     */
    boolean removeIfUnchanged(String path, long ifLastSequence);
}
