package io.ringcast.cluster.internal;

import org.jgroups.protocols.raft.RAFT;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
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
 * <p>Thread contract: the engine's runner thread, as {@link TopicLog}.
 */
public final class BarrierLog implements ReloadableStateMachine {
    /** A barrier entry's only byte: no {@link TopicLogCodec} entry format starts with it. */
    static final byte BARRIER = 0;

    private final TopicLog log;
    private final Supplier<RAFT> raft;

    /** @param raft the group's engine, to read the commit index when a barrier is applied; may give null before start */
    public BarrierLog(TopicLog log, Supplier<RAFT> raft) {
        this.log = Objects.requireNonNull(log, "log");
        this.raft = Objects.requireNonNull(raft, "raft");
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

    @Override
    public void writeContentTo(DataOutput out) throws IOException {
        log.writeContentTo(out);
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
