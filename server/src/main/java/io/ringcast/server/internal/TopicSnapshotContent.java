package io.ringcast.server.internal;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.protocol.PathLimits;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.EOFException;
import java.io.IOException;
import java.util.List;
import java.util.function.Predicate;

/**
 * This node's part of the cluster's Raft snapshots: every topic's sequence and last value, which the
 * sequencer keeps and the log's state machine does not. Not the history: a node that takes a
 * snapshot over (a lagging member, or one restarting from its snapshot and log) keeps, of a topic
 * the snapshot moved, the snapshot's value and what it applies after; its subscribers resuming from
 * before are told of a gap with the value, as past any history. Written as {@code u32 length}
 * then that many bytes in {@link TopicStateFile}'s format.
 *
 * <p>Thread contract: {@link #write} and {@link #read} on the Raft engine's apply thread, between
 * entries ({@link SnapshotContent}). The sequencer thread owns the topics, so each sends it a
 * {@link TopicSnapshotRequest} through the inbound ring ({@link SequencerProxy#snapshotTopics}) and
 * waits for the answer, blocking the engine as a full ring does. The ring is FIFO and every update
 * the engine applied went into it before: a capture is the topics after the last entry applied, and
 * once a take-over is answered, every update applied afterwards follows it.
 *
 * <p>All or nothing: the snapshot's bytes are read and checked whole on the engine thread, so a
 * damaged one fails with an {@link IOException} naming what is wrong before the sequencer is asked
 * anything, and the node keeps its topics as they were.
 */
final class TopicSnapshotContent implements SnapshotContent {
    private final SequencerProxy inbound;
    private final PathLimits pathLimits;
    /** The topics of the Raft group this content belongs to ({@link #ofTopics}); every topic by default. */
    private final Predicate<String> inGroup;

    TopicSnapshotContent(SequencerProxy inbound, PathLimits pathLimits) {
        this(inbound, pathLimits, path -> true);
    }

    private TopicSnapshotContent(SequencerProxy inbound, PathLimits pathLimits, Predicate<String> inGroup) {
        this.inbound = inbound;
        this.pathLimits = pathLimits;
        this.inGroup = inGroup;
    }

    /** The content of one Raft group's snapshots: its topics are captured and taken over, the others left alone. */
    @Override
    public SnapshotContent ofTopics(Predicate<String> inGroup) {
        return new TopicSnapshotContent(inbound, pathLimits, inGroup);
    }

    /** Captures the group's topics (every topic by default), on the sequencer thread, and writes them. Engine thread. */
    @Override
    public void write(DataOutput out) throws IOException {
        capture().writeTo(out);
    }

    /**
     * Asks the sequencer for the group's topics as they are after the last entry applied (the
     * request queues behind every update applied before it) without waiting for them: the writer
     * waits, on its own thread. Engine thread.
     */
    @Override
    public Captured capture() {
        TopicSnapshotRequest capture = TopicSnapshotRequest.capture(inGroup);
        inbound.snapshotTopics(capture);
        return out -> {
            PiecedBytes topics = capture.await();
            if (topics.size() > Integer.MAX_VALUE) {
                throw new IOException("the snapshot's topics take " + topics.size() + " bytes, more than its format's 2 GiB");
            }
            out.writeInt((int) topics.size());
            topics.writeTo(out);
        };
    }

    /** Reads and checks the snapshot's topics, then has the sequencer take them over, and waits until it has. Engine thread. */
    @Override
    public void read(DataInput in) throws IOException {
        PiecedBytes bytes = readTopicBytes(in);
        List<TopicStateFile.SavedTopic> topics;
        try {
            topics = TopicStateFile.readFrom(new DataInputStream(bytes.inputStream()), bytes.size());
        } catch (IOException e) {
            throw new IOException("the snapshot's topics are damaged (" + e.getMessage() + "); none taken over", e);
        }
        TopicSnapshotRequest takeOver = TopicSnapshotRequest.takeOver(topics, pathLimits, inGroup);
        inbound.snapshotTopics(takeOver);
        takeOver.await();
    }

    /**
     * The length-prefixed bytes, in pieces: the input's size is unknown here, so a length is trusted
     * only as far as bytes arrive, and the bytes are never copied to grow (an array doubled as they
     * came held up to twice a snapshot's topics at once, on a node whose heap may be near its mark).
     */
    private static PiecedBytes readTopicBytes(DataInput in) throws IOException {
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            throw new IOException("the snapshot ends before its topics", e);
        }
        if (length < 0) {
            throw new IOException("the snapshot's topics claim a negative length: " + length);
        }
        PiecedBytes bytes = new PiecedBytes();
        try {
            bytes.readFrom(in, length);
        } catch (EOFException e) {
            throw new IOException("the snapshot's topics are truncated: " + length + " bytes claimed, fewer there", e);
        }
        return bytes;
    }
}
