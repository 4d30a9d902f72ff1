package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLog;
import io.ringcast.cluster.internal.TopicLogTesting;
import org.jgroups.protocols.raft.RAFT;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;

class BarrierLogTest {
    private static final long MIN_LOG_BYTES = 64 * 1024;

    /** A node's part of the snapshot of a given size. */
    private static SnapshotContent contentOf(int bytes) {
        return new SnapshotContent() {
            @Override
            public void write(DataOutput out) throws IOException {
                out.write(new byte[bytes]);
            }

            @Override
            public void read(DataInput in) {
                throw new UnsupportedOperationException("not read here");
            }
        };
    }

    private static long snapshotAndReadNextLogSize(int contentBytes) throws IOException {
        RAFT raft = new RAFT().maxLogSize(MIN_LOG_BYTES);
        BarrierLog log = new BarrierLog(new TopicLog(new TopicLogTesting.RecordingSink(), contentOf(contentBytes),
                1000, 16), () -> raft, MIN_LOG_BYTES);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        log.writeContentTo(new DataOutputStream(written));
        assertThat(written.size()).as("the snapshot holds the content").isGreaterThan(contentBytes);
        return raft.maxLogSize() == 2L * written.size() ? -1 : raft.maxLogSize();
    }

    @Test
    void theNextSnapshotComesOnceTheLogHoldsTwiceTheLastSnapshot() throws IOException {
        assertThat(snapshotAndReadNextLogSize(1_000_000)).as("max_log_size is twice the snapshot's bytes (-1)")
                .isEqualTo(-1);
    }

    @Test
    void aSmallSnapshotLeavesTheConfiguredLogSize() throws IOException {
        assertThat(snapshotAndReadNextLogSize(100)).isEqualTo(MIN_LOG_BYTES);
    }
}
