package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.WireCodec;

/**
 * One topic: its alias, sequence, subscribers and short history. Owned by the sequencer thread;
 * only {@link #subscribers} is read elsewhere, and only through the reference a fan-out event
 * captured.
 *
 * <p>The history holds the encoded frames themselves (one reference each), not copies of the
 * values: the newest is the last value, a replay copies their {@code UPDATE} messages, and a
 * frame is released when it falls out of the history.
 */
final class Topic {
    final int alias;
    final String path;
    final String[] segments;
    long sequence;
    SubscriberSet subscribers;

    private final ByteBuf[] historyFrames;
    /** Offset, in each history frame, of its {@code UPDATE} message (after an optional {@code TOPIC}). */
    private final int[] historyUpdateOffsets;
    private int historySize;

    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength) {
        this.alias = alias;
        this.path = path;
        this.segments = segments;
        this.subscribers = subscribers;
        this.historyFrames = new ByteBuf[historyLength];
        this.historyUpdateOffsets = new int[historyLength];
    }

    /** Records the frame of update {@link #sequence}, taking over one reference to it. */
    void appendHistory(ByteBuf frame, int updateOffset) {
        int slot = (int) (sequence % historyFrames.length);
        ByteBuf evicted = historyFrames[slot];
        if (evicted != null) {
            evicted.release();
        }
        historyFrames[slot] = frame;
        historyUpdateOffsets[slot] = updateOffset;
        if (historySize < historyFrames.length) {
            historySize++;
        }
    }

    boolean hasValue() {
        return historySize > 0;
    }

    /** The oldest sequence still in the history, or {@code sequence + 1} when it is empty. */
    long oldestInHistory() {
        return sequence - historySize + 1;
    }

    /** The frame of update {@code seq}, which must be within the history. */
    ByteBuf historyFrame(long seq) {
        return historyFrames[(int) (seq % historyFrames.length)];
    }

    /** Offset of the {@code UPDATE} message of update {@code seq} in its {@link #historyFrame}. */
    int historyUpdateOffset(long seq) {
        return historyUpdateOffsets[(int) (seq % historyFrames.length)];
    }

    /** Length of the {@code UPDATE} message of update {@code seq}. */
    int historyUpdateLength(long seq) {
        return historyFrame(seq).writerIndex() - historyUpdateOffset(seq);
    }

    /** Index of the newest value in {@link #historyFrame}({@link #sequence}). */
    int lastValueIndex() {
        return historyUpdateOffset(sequence) + WireCodec.UPDATE_OVERHEAD_BYTES;
    }

    int lastValueLength() {
        return historyFrame(sequence).writerIndex() - lastValueIndex();
    }

    /** Releases every history frame; the topic is unusable afterwards. */
    void releaseHistory() {
        for (int i = 0; i < historyFrames.length; i++) {
            if (historyFrames[i] != null) {
                historyFrames[i].release();
                historyFrames[i] = null;
            }
        }
        historySize = 0;
    }
}
