package io.ringcast.cluster;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.function.Predicate;

/**
 * The node's own part of a group's snapshot: what the group's state machine does not keep itself
 * (it keeps each topic's last sequence and the duplicate ledgers), above all the topics' last
 * values and history, which the server's sequencer keeps (one store of last values). The state
 * machine calls it right after writing or reading its own part, in the same stream. Given to
 * {@link ClusterNode}, beside the {@link UpdateSink}.
 *
 * <p>Thread contract: called on the engine's apply thread only, the thread that also applies
 * committed entries and calls the {@link UpdateSink}; between two entries, never during one. What
 * {@link #write} writes must be what the node holds after the last entry applied, and {@link #read}
 * must leave the node exactly as that, so entries applied afterwards act alike on every node. A
 * snapshot of no more entries than the node applied is not read at all.
 */
public interface SnapshotContent {

    /** No content of the node's own: the snapshot is the state machine's part alone. */
    SnapshotContent NONE = new SnapshotContent() {
        @Override
        public void write(DataOutput out) {
        }

        @Override
        public void read(DataInput in) {
        }
    };

    /**
     * The part of this content that concerns the topics {@code inGroup} accepts: what a group's
     * snapshot holds when the topics are spread over several groups. {@link #read} then replaces
     * those topics only. The default serves a content of no topics of its own.
     */
    default SnapshotContent ofTopics(Predicate<String> inGroup) {
        return this;
    }

    /** Writes the node's part, after the state machine's own. */
    void write(DataOutput out) throws IOException;

    /**
     * Takes the node's part as it is now (the apply thread, between entries), to be written later
     * on another thread: what lets a snapshot be written while the group applies on. The default
     * writes it into memory at once; an implementation may do less here, as long as what
     * {@link Captured#writeTo} writes is the part as of this call.
     */
    default Captured capture() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        write(new DataOutputStream(bytes));
        byte[] captured = bytes.toByteArray();
        return out -> out.write(captured);
    }

    /** A part taken by {@link #capture}; written once, on any thread. */
    @FunctionalInterface
    interface Captured {
        /** Writes the part as it was when captured, waiting for it if it is still being taken. */
        void writeTo(DataOutput out) throws IOException;
    }

    /**
     * Replaces the node's part with the one read, after the state machine's own part was read (and
     * before the state machine replaces its own with it). All or nothing: if it throws, it should
     * leave the node's part as it was; the state machine then keeps its own part as it was too.
     */
    void read(DataInput in) throws IOException;
}
