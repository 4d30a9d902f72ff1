package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLog;
import io.ringcast.cluster.internal.TopicLogTesting;
import io.ringcast.testkit.Await;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.util.ByteArrayDataOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;

/** The snapshot as the engine takes it through the state machine and our log, and when the next one comes. */
@Timeout(30)
class BarrierLogTest {
    private static final long MIN_LOG_BYTES = 64 * 1024;

    @TempDir
    Path dir;

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

    /**
     * What RAFT.takeSnapshot does (the state machine's part into a buffer, then setSnapshot), then
     * an entry applied: the engine's next max_log_size, or -1 when it is twice the snapshot written.
     */
    private long snapshotAndReadNextLogSize(int contentBytes) throws Exception {
        SegmentedLog segmented = new SegmentedLog();
        segmented.useFsync(false);
        segmented.init(dir.toString(), new HashMap<>());
        RAFT raft = new RAFT().maxLogSize(MIN_LOG_BYTES).log(segmented);
        BarrierLog log = new BarrierLog(new TopicLog(new TopicLogTesting.RecordingSink(), contentOf(contentBytes),
                1000, 16), () -> raft, MIN_LOG_BYTES);
        try {
            ByteArrayDataOutputStream engines = new ByteArrayDataOutputStream(128, true);
            log.writeContentTo(engines);
            assertThat(engines.position()).as("only a placeholder on the engine's thread").isLessThan(contentBytes);
            segmented.setSnapshot(ByteBuffer.wrap(engines.buffer(), 0, engines.position()));
            int written = segmented.getSnapshot().remaining(); // waits for the worker's write
            assertThat(written).as("the snapshot holds the content").isGreaterThan(contentBytes);
            Await.until(() -> log.lastSnapshot() != null, Duration.ofSeconds(10), Duration.ofMillis(5),
                    () -> "the snapshot recorded");
            assertThat(log.lastSnapshot().bytes()).isEqualTo(written);
            log.apply(BarrierLog.barrier(), 0, 1, false); // the engine's thread takes the next size here
            return raft.maxLogSize() == 2L * written ? -1 : raft.maxLogSize();
        } finally {
            segmented.close();
        }
    }

    @Test
    void theNextSnapshotComesOnceTheLogHoldsTwiceTheLastSnapshot() throws Exception {
        assertThat(snapshotAndReadNextLogSize(1_000_000)).as("max_log_size is twice the snapshot's bytes (-1)")
                .isEqualTo(-1);
    }

    @Test
    void aSmallSnapshotLeavesTheConfiguredLogSize() throws Exception {
        assertThat(snapshotAndReadNextLogSize(100)).isEqualTo(MIN_LOG_BYTES);
    }
}
