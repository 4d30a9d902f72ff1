package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jgroups.protocols.raft.FileBasedLog;
import org.jgroups.protocols.raft.LogEntries;
import org.jgroups.protocols.raft.LogEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;

/** The engine's snapshot-then-truncate step at commit index 0, on the engine's log and on ours. */
class RaftFileLogTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(10)
    void theEnginesLogLosesEveryPositionWhenTruncatedBeforeAnythingIsCommitted() throws Exception {
        FileBasedLog log = open(new FileBasedLog(), "engine");
        append(log, 1, 10);
        snapshotAndTruncate(log);
        // the upstream bug: what every follower then throws on every AppendEntries
        assertThatThrownBy(() -> append(log, 11, 1)).isInstanceOf(IllegalStateException.class);
        log.close();
    }

    @Test
    @Timeout(10)
    void ourLogKeepsAppendingAndTruncatesAtTheFirstRealCommit() throws Exception {
        FileBasedLog log = open(new RaftFileLog(), "ours");
        append(log, 1, 10);
        snapshotAndTruncate(log);
        append(log, 11, 10);
        assertThat(log.lastAppended()).isEqualTo(20);
        assertThat(log.get(15)).isNotNull();
        log.commitIndex(15);
        snapshotAndTruncate(log);
        assertThat(log.firstAppended()).isEqualTo(15);
        append(log, 21, 1);
        assertThat(log.get(21)).isNotNull();
        log.close();
    }

    private FileBasedLog open(FileBasedLog log, String name) throws Exception {
        log.useFsync(true);
        log.init(dir.resolve(name).toString(), new HashMap<>());
        return log;
    }

    /** What RAFT.takeSnapshot does: write the snapshot, truncate at the commit index. */
    private static void snapshotAndTruncate(FileBasedLog log) {
        log.setSnapshot(ByteBuffer.wrap(new byte[16]));
        log.truncate(log.commitIndex());
    }

    private static void append(FileBasedLog log, long first, int n) {
        LogEntries entries = new LogEntries();
        for (int i = 0; i < n; i++) {
            entries.add(new LogEntry(1, new byte[200]));
        }
        log.append(first, entries);
    }
}
