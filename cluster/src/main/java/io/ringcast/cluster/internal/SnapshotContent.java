package io.ringcast.cluster.internal;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/**
 * The node's own part of a group's snapshot: what the log's state machine ({@link TopicLog}) does
 * not keep itself, above all the topics' last values and history, which the server's sequencer
 * keeps (one store of last values). {@link TopicLog} calls it right after writing or reading its
 * own part, in the same stream.
 *
 * <p>Thread contract: called on the engine's apply thread only, the thread that also applies
 * committed entries ({@link TopicLog}); between two entries, never during one. What {@link #write}
 * writes must be what the node holds after the last entry applied, and {@link #read} must leave the
 * node exactly as that, so entries applied afterwards act alike on every node.
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

    /** Writes the node's part, after the state machine's own. */
    void write(DataOutput out) throws IOException;

    /**
     * Replaces the node's part with the one read, after the state machine's own part was read (and
     * before the state machine replaces its own with it). All or nothing: if it throws, it should
     * leave the node's part as it was; the state machine then keeps its own part as it was too.
     */
    void read(DataInput in) throws IOException;
}
