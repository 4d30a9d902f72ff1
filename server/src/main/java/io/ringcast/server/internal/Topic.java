package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;

/**
 * One topic: its alias, sequence, features, subscribers, newest value and short history. Owned by
 * the sequencer thread; only the final fields and {@link #subscribers} are read elsewhere, the
 * latter only through the reference a fan-out event captured.
 *
 * <p>With the last-value cache on, the topic keeps its newest value (for snapshots and as the base
 * of the next delta) and the history: the encoded frames themselves (one reference each), not
 * copies, so a replay copies their {@code UPDATE} messages, and a frame is released when it falls
 * out. With the cache off it keeps neither, only its sequence.
 */
final class Topic {
    final int alias;
    final String path;
    final String[] segments;
    long sequence;
    SubscriberSet subscribers;
    TopicFeatures features;

    private final int historyLength;
    private ByteBuf[] historyFrames;
    /** Offset, in each history frame, of its {@code UPDATE} message (after an optional {@code TOPIC}). */
    private int[] historyUpdateOffsets;
    private int historySize;
    /** The newest value (readable bytes), one reference held; null when none is kept. */
    private ByteBuf lastValue;

    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength,
          TopicFeatures features) {
        this.alias = alias;
        this.path = path;
        this.segments = segments;
        this.subscribers = subscribers;
        this.historyLength = historyLength;
        this.features = features;
    }

    /** Applies features resolved again after a reload; turning the cache off drops what was kept. */
    void features(TopicFeatures newFeatures) {
        if (features.lastValueCache() && !newFeatures.lastValueCache()) {
            releaseHistory();
        }
        features = newFeatures;
    }

    /**
     * Records update {@link #sequence}: its frame (taking over one reference) and its full value
     * (taking over one reference). Releases both at once when the cache is off.
     */
    void record(ByteBuf frame, int updateOffset, ByteBuf value) {
        if (!features.lastValueCache()) {
            frame.release();
            value.release();
            return;
        }
        if (historyFrames == null) {
            historyFrames = new ByteBuf[historyLength];
            historyUpdateOffsets = new int[historyLength];
        }
        int slot = (int) (sequence % historyLength);
        ByteBuf evicted = historyFrames[slot];
        if (evicted != null) {
            evicted.release();
        }
        historyFrames[slot] = frame;
        historyUpdateOffsets[slot] = updateOffset;
        if (historySize < historyLength) {
            historySize++;
        }
        if (lastValue != null) {
            lastValue.release();
        }
        lastValue = value;
    }

    boolean hasValue() {
        return lastValue != null;
    }

    /** The newest value (its readable bytes); only when {@link #hasValue()}. Do not release or move it. */
    ByteBuf lastValue() {
        return lastValue;
    }

    /** Whether the history holds every update after {@code lastSeen}, so a resume can replay them. */
    boolean canReplayAfter(long lastSeen) {
        return historySize > 0 && lastSeen < sequence && lastSeen + 1 >= sequence - historySize + 1;
    }

    /** The frame of update {@code seq}, which must be within the history. */
    ByteBuf historyFrame(long seq) {
        return historyFrames[(int) (seq % historyLength)];
    }

    /** Offset of the {@code UPDATE} message of update {@code seq} in its {@link #historyFrame}. */
    int historyUpdateOffset(long seq) {
        return historyUpdateOffsets[(int) (seq % historyLength)];
    }

    /** Length of the {@code UPDATE} message of update {@code seq}. */
    int historyUpdateLength(long seq) {
        return historyFrame(seq).writerIndex() - historyUpdateOffset(seq);
    }

    /** Releases the history and the last value; nothing is kept until the next update. */
    void releaseHistory() {
        if (historyFrames != null) {
            for (int i = 0; i < historyFrames.length; i++) {
                if (historyFrames[i] != null) {
                    historyFrames[i].release();
                    historyFrames[i] = null;
                }
            }
        }
        historySize = 0;
        if (lastValue != null) {
            lastValue.release();
            lastValue = null;
        }
    }
}
