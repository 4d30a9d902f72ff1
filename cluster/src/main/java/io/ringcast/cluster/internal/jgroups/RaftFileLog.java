package io.ringcast.cluster.internal.jgroups;

import org.jgroups.protocols.raft.FileBasedLog;

/**
 * jgroups-raft's file log, minus the lock-up issue 18 met: the engine snapshots when its log passes
 * {@code max_log_size} and then truncates the log at its commit index, even when nothing is
 * committed yet on this node (commit index 0). In 1.1.4, {@code LogEntryStorage.removeOld(0)} then
 * replaces the index-to-file-position table with an empty one ({@code FilePositionCache
 * .createDeleteCopyFrom(0)} finds no position for index 0), so the positions of every entry in the
 * file are lost; the next append needs the previous entry's position and throws a bare
 * {@code IllegalStateException} from {@code LogEntryStorage.write}, on every AppendEntries, for
 * good. It happens whenever a node's first {@code max_log_size} bytes of log arrive before it learns
 * of a commit: a follower learns the commit index only with the next AppendEntries, so a new cluster
 * under load (fsync makes the batches bigger) or a leader that appends a large first batch hits it.
 * Here a truncation at index 0 drops nothing, as it should: the snapshot is still written, and the
 * next snapshot, at a real commit index, truncates.
 *
 * <p>Named by class in {@code RAFT.log_class}; the engine creates it and calls it on its runner thread.
 */
public class RaftFileLog extends FileBasedLog {

    public RaftFileLog() {
        // created by RAFT through reflection
    }

    @Override
    public void truncate(long indexExclusive) {
        if (indexExclusive < 1) {
            return; // nothing committed: nothing to drop (and 1.1.4 would lose every entry's position)
        }
        super.truncate(indexExclusive);
    }
}
