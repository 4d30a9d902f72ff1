package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.ClusterStatus;
import io.ringcast.cluster.internal.TopicLog;
import org.jgroups.protocols.raft.RAFT;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Objects;
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
 * snapshot, or {@code minLogBytes}, whichever is more. A snapshot holds every topic's history, so
 * it can be far larger than the log it replaces (60 MB against 16 MB in the cluster bench); taken
 * at a fixed log size, it stalled the engine thread of every node (they reach the size together)
 * for a second, every 14 s, and wrote more than the log. This way snapshots cost at most half the
 * bytes the log does, and the log stays bounded (twice the state, or {@code minLogBytes}).
 *
 * <p>Thread contract: the engine's runner thread, as {@link TopicLog}.
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
        if (length == 1 && data[offset] == BARRIER) {
            if (!serializeResponse) {
                return null;
            }
            RAFT r = raft.get();
            return ByteBuffer.allocate(Long.BYTES).putLong(r == null ? 0 : r.commitIndex()).array();
        }
        return log.apply(data, offset, length, serializeResponse);
    }

    /** Writes the snapshot, then moves the next one to twice its size of log (see the class comment). */
    @Override
    public void writeContentTo(DataOutput out) throws IOException {
        long startNs = System.nanoTime();
        CountingOutput counted = new CountingOutput(out);
        DataOutputStream data = new DataOutputStream(counted);
        log.writeContentTo(data);
        data.flush();
        RAFT r = raft.get();
        long millis = (System.nanoTime() - startNs) / 1_000_000;
        long index = r == null ? 0 : r.commitIndex();
        lastSnapshot = new ClusterStatus.Snapshot(counted.bytes, millis, System.currentTimeMillis(), index);
        if (r != null) {
            long next = Math.max(minLogBytes, 2 * counted.bytes);
            r.maxLogSize(next);
            logger.info("cluster: snapshot of {} bytes at commit index {} written in {} ms; the next once the log "
                    + "holds {} bytes", counted.bytes, index, millis, next);
        }
    }

    /** The last snapshot written on this node since it started, or null. Any thread. */
    public ClusterStatus.Snapshot lastSnapshot() {
        return lastSnapshot;
    }

    /** Passes bytes on to a {@link DataOutput}, counting them. */
    private static final class CountingOutput extends OutputStream {
        private final DataOutput out;
        long bytes;

        CountingOutput(DataOutput out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            bytes++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            bytes += len;
        }
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
