package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.ClusterStatus;
import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLog;
import org.jgroups.protocols.raft.Log;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.raft.util.LogCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A group's state machine as the engine sees it: the {@link TopicLog}, plus catch-up barriers. A
 * barrier is an entry of one byte, {@link #BARRIER}, that changes nothing; the member that applies
 * it answers with its commit index at that moment, which covers every entry committed before the
 * barrier was appended. A node that has just joined submits one (it goes to the leader) and is
 * caught up once its own commit index reaches the answer ({@link io.ringcast.cluster.ClusterNode#ready()}).
 * Every other entry goes to the {@link TopicLog} untouched.
 *
 * <p>It also sets when the next snapshot is taken: once the log holds twice the bytes of the last
 * snapshot, or {@code minLogBytes}, whichever is more. When snapshots held every topic's history
 * they could be far larger than the log they replaced (60 MB against 16 MB in the cluster bench);
 * taken at a fixed log size, they stalled the engine thread of every node for a second, every 14 s,
 * and wrote more than the log. This way snapshots cost at most half the bytes the log does, and the
 * log stays bounded (twice the state, or {@code minLogBytes}).
 *
 * <p>Thread contract: the engine's runner thread, as {@link TopicLog}; but a snapshot the
 * {@link SegmentedLog} writes is recorded on its worker thread ({@link #lastSnapshot} is volatile,
 * the next log size goes to the engine through {@code nextMaxLogSize}, on the runner).
 */
public final class BarrierLog implements ReloadableStateMachine {
    /** A barrier entry's only byte: no {@code TopicLogCodec} entry format starts with it. */
    static final byte BARRIER = 0;

    private static final Logger logger = LoggerFactory.getLogger(BarrierLog.class);

    private final TopicLog log;
    private final Supplier<RAFT> raft;
    private final long minLogBytes;
    /** The last snapshot written here; read by any thread ({@code /health}). */
    private volatile ClusterStatus.Snapshot lastSnapshot;
    /**
     * The engine's next {@code max_log_size}, once a snapshot was written (0: none new): set where
     * the snapshot was written, given to the engine on its own thread at the next entry applied.
     */
    private final AtomicLong nextMaxLogSize = new AtomicLong();

    /**
     * @param raft        the group's engine, to read the commit index when a barrier is applied and
     *                    to set its {@code max_log_size}; may give null before start
     * @param minLogBytes log bytes before a snapshot at least ({@code cluster.snapshotLogBytes})
     */
    public BarrierLog(TopicLog log, Supplier<RAFT> raft, long minLogBytes) {
        this.log = Objects.requireNonNull(log, "log");
        this.raft = Objects.requireNonNull(raft, "raft");
        this.minLogBytes = minLogBytes;
    }

    /** The entry to submit as a barrier. */
    public static byte[] barrier() {
        return new byte[] {BARRIER};
    }

    /** The commit index a barrier's response carries. */
    public static long commitIndexOf(byte[] response) {
        if (response == null || response.length != Long.BYTES) {
            throw new IllegalArgumentException("not a barrier's response: "
                    + (response == null ? "null" : response.length + " bytes"));
        }
        return ByteBuffer.wrap(response).getLong();
    }

    @Override
    public byte[] apply(byte[] data, int offset, int length, boolean serializeResponse) {
        applyNextMaxLogSize();
        if (length == 1 && data[offset] == BARRIER) {
            if (!serializeResponse) {
                return null;
            }
            RAFT r = raft.get();
            return ByteBuffer.allocate(Long.BYTES).putLong(r == null ? 0 : r.commitIndex()).array();
        }
        return log.apply(data, offset, length, serializeResponse);
    }

    /**
     * Takes the snapshot: only a capture here (a copy of the topics' sequences and the ledgers, and
     * the sequencer asked for the topics), handed to the group's {@link SegmentedLog}, whose worker
     * thread writes it; the engine's thread goes back to replicating and applying at once. Once it
     * is written, the next one comes at twice its size of log (see the class comment).
     */
    @Override
    public void writeContentTo(DataOutput out) throws IOException {
        long startNs = System.nanoTime();
        RAFT r = raft.get();
        SegmentedLog segmented = segmentedLogOf(r);
        long index = r.commitIndex();
        SnapshotContent.Captured captured = log.capture();
        long heldMillis = (System.nanoTime() - startNs) / 1_000_000;
        out.write(segmented.deferContent(captured,
                (bytes, millis) -> written(bytes, heldMillis + millis, heldMillis, index)));
    }

    /** Records a snapshot written (on the log's worker thread): the next once the log holds twice its bytes. */
    private void written(long bytes, long totalMillis, long heldMillis, long index) {
        lastSnapshot = new ClusterStatus.Snapshot(bytes, totalMillis, System.currentTimeMillis(), index);
        long next = Math.max(minLogBytes, 2 * bytes);
        nextMaxLogSize.set(next);
        logger.info("cluster: snapshot of {} bytes at commit index {} written in {} ms (the engine's thread held {} "
                + "ms of it); the next once the log holds {} bytes", bytes, index, totalMillis, heldMillis, next);
    }

    /** The engine's thread: hands it the next snapshot's log size once one was written. */
    private void applyNextMaxLogSize() {
        if (nextMaxLogSize.get() != 0) {
            long next = nextMaxLogSize.getAndSet(0);
            RAFT r = raft.get();
            if (r != null && next != 0) {
                r.maxLogSize(next);
            }
        }
    }

    /** The group's log, ours ({@link RaftStack} names it; the engine wraps it in its cache). */
    private static SegmentedLog segmentedLogOf(RAFT r) {
        Log log = r == null ? null : r.log();
        if (log instanceof LogCache cache) {
            log = cache.log();
        }
        if (log instanceof SegmentedLog segmented) {
            return segmented;
        }
        throw new IllegalStateException("a snapshot of a group whose log is not a SegmentedLog: " + log);
    }

    /** The last snapshot written on this node since it started, or null. Any thread. */
    public ClusterStatus.Snapshot lastSnapshot() {
        return lastSnapshot;
    }

    @Override
    public void readContentFrom(DataInput in) throws IOException {
        log.readContentFrom(in);
    }

    @Override
    public void reset() {
        log.reset();
    }
}
