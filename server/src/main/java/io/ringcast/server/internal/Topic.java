package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.util.Arrays;

/**
 * One topic: its alias, sequence, features, subscribers (plain, and through each view), newest value
 * and short history. Owned by the sequencer thread; only the final fields and {@link #subscribers}
 * are read elsewhere, the latter only through the reference a fan-out event captured.
 *
 * <p>With the last-value cache on, the topic keeps its history: the encoded frames themselves (one
 * reference each), not copies, so a replay copies their {@code UPDATE} messages, and a frame is
 * released when it falls out. Each update's value (for snapshots, a rewind, and the newest as the
 * base of the next delta) is read from its frame, except when that frame holds a delta: then the
 * topic also keeps the copy of the full value the encoder made for it, so with deltas on a history
 * holds each value twice, once as a delta. It keeps each update's time too, for
 * {@code rewindSince}. With the cache off it keeps nothing but its sequence.
 */
final class Topic extends Audience {
    final int alias;
    final String path;
    final String[] segments;
    /** Its path's length in UTF-8, counted once: every new subscriber of the topic is sent its {@code TOPIC}. */
    private final int pathUtf8Bytes;
    long sequence;
    TopicFeatures features;
    /**
     * Tells this topic from another of the same path, made after this one was removed: a
     * {@code u32} the sequencer gives it when it creates it (docs/protocol.md, "Removing topics").
     */
    int incarnation;
    /** Removed: gone from the tree, its value released; the streamed replies that still reach it skip it. */
    boolean removed;
    /** The principal whose share of {@code limits.maxTopicsPerPrincipal} it took, given back when it goes; or null. */
    String creator;
    /** When a publish last updated it (or it was made), milliseconds since the epoch: its expiry's clock. */
    long lastPublishMillis;
    /** Its neighbours in its {@link TopicExpiry} queue, oldest first; null at the ends and outside one. */
    Topic expiryOlder;
    Topic expiryNewer;
    /** The {@code expireAfterMs} of the queue it is in, 0 when in none. */
    long expiryQueue;
    /**
     * Its neighbours in its {@link HistoryBudget}'s lists, least recently updated first, null at the
     * ends and outside: of the topics whose history holds more than the newest update, and of those
     * with a value.
     */
    Topic olderLinkOlder;
    Topic olderLinkNewer;
    boolean inOlderList;
    Topic valueLinkOlder;
    Topic valueLinkNewer;
    boolean inValueList;
    /** The views its subscribers see it through ({@link TopicView}), in {@code views[0..viewCount)}; null before the first. */
    private TopicView[] views;
    private int viewCount;
    /** Where the fields its views read lie in a value ({@link #valueIndex}); made again when its views change. */
    private ValueIndex valueIndex;
    private boolean valueIndexStale = true;
    /** {@link #viewedValue()}: one reference, or null. */
    private ByteBuf viewedValue;

    private final int historyLength;
    private final long historyMaxBytes;
    /** The node's bound on all histories ({@code history.nodeMaxBytes}), charged with every change of {@link #historyBytes}. */
    private final HistoryBudget budget;
    /** The bytes the history's frames and full values take now. */
    private long historyBytes;
    private ByteBuf[] historyFrames;
    /** Offset, in each history frame, of its {@code UPDATE} message (after an optional {@code TOPIC}). */
    private int[] historyUpdateOffsets;
    /**
     * Each update's full value when its frame holds a delta of it (one reference held); else null.
     * A restored history has none for its older deltas ({@link #historyValueKnown}).
     */
    private ByteBuf[] historyFullValues;
    /** When each update was recorded, in milliseconds since the epoch; 0 when not known (a restored history). */
    private long[] historyMillis;
    private int historySize;
    /**
     * The sequence of the newest recorded update. While an update is being sequenced,
     * {@link #sequence} is already the next one, and the value it is a delta against is this one's.
     */
    private long recordedSequence;

    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength,
          TopicFeatures features) {
        this(alias, path, segments, subscribers, historyLength, Long.MAX_VALUE, features);
    }

    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength,
          long historyMaxBytes, TopicFeatures features) {
        this(alias, path, segments, subscribers, historyLength, historyMaxBytes, HistoryBudget.unbounded(), features);
    }

    /**
     * @param historyLength   {@code history.length}: the most updates its history keeps
     * @param historyMaxBytes {@code history.maxBytes}: the most bytes they may take, the newest always kept
     * @param budget          the node's bound on all topics' histories ({@code history.nodeMaxBytes})
     */
    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength,
          long historyMaxBytes, HistoryBudget budget, TopicFeatures features) {
        super(subscribers);
        this.budget = budget;
        this.alias = alias;
        this.path = path;
        this.segments = segments;
        this.pathUtf8Bytes = ByteBufUtil.utf8Bytes(path);
        this.historyLength = historyLength;
        this.historyMaxBytes = historyMaxBytes;
        this.features = features;
    }

    @Override
    Topic topic() {
        return this;
    }

    /** Writes the topic's {@code TOPIC} message, {@link #definitionBytes()} long: the one writer of a definition. */
    void writeDefinition(ByteBuf out) {
        WireCodec.writeTopic(out, alias, path, pathUtf8Bytes, incarnation);
    }

    /** The length of its {@code TOPIC} message ({@link #writeDefinition}). */
    int definitionBytes() {
        return WireCodec.topicBytes(pathUtf8Bytes);
    }

    @Override
    int viewId() {
        return 0;
    }

    /** How many views the topic has members of. */
    int viewCount() {
        return viewCount;
    }

    /** View {@code i}, {@code 0 <= i < viewCount()}. */
    TopicView view(int i) {
        return views[i];
    }

    /** The topic's slot of {@code view}, or null. */
    TopicView viewOf(View view) {
        for (int i = 0; i < viewCount; i++) {
            if (views[i].view == view) {
                return views[i];
            }
        }
        return null;
    }

    /** The index of the paths its views read, for its large values; null when none reads the value. */
    ValueIndex valueIndex() {
        if (valueIndexStale) {
            valueIndex = ValueIndex.of(this);
            valueIndexStale = false;
        }
        return valueIndex;
    }

    /**
     * Adds a view right after the last one with the same projection, so that views sharing one are
     * side by side, and {@link ViewedUpdates} makes it once per update for all of them.
     */
    void addView(TopicView view) {
        valueIndexStale = true;
        if (views == null) {
            views = new TopicView[2];
        } else if (viewCount == views.length) {
            views = Arrays.copyOf(views, viewCount * 2);
        }
        int at = viewCount;
        for (int i = viewCount - 1; i >= 0; i--) {
            if (views[i].view.projection == view.view.projection) {
                at = i + 1;
                break;
            }
        }
        System.arraycopy(views, at, views, at + 1, viewCount - at);
        views[at] = view;
        viewCount++;
    }

    /** Drops a view no member is left in; the others keep their order. With the last, {@link #viewedValue()} goes. */
    void removeView(TopicView view) {
        valueIndexStale = true;
        for (int i = 0; i < viewCount; i++) {
            if (views[i] == view) {
                System.arraycopy(views, i + 1, views, i, viewCount - i - 1);
                views[--viewCount] = null;
                break;
            }
        }
        if (viewCount == 0) {
            releaseViewedValue();
        }
    }

    /**
     * The newest value, as its readable bytes, while the topic has views: what each view that
     * matches shows or projects. One reference, to the buffer its frame or history holds anyway,
     * for all its views. Null before the first value through a view.
     */
    ByteBuf viewedValue() {
        return viewedValue;
    }

    /** The newest value is {@code length} bytes of {@code value} from {@code index}: {@link #viewedValue()} refers to it. */
    void viewedValue(ByteBuf value, int index, int length) {
        releaseViewedValue();
        viewedValue = value.retainedSlice(index, length);
    }

    void releaseViewedValue() {
        if (viewedValue != null) {
            viewedValue.release();
            viewedValue = null;
        }
    }

    /** Applies features resolved again after a reload; turning the cache off drops what was kept. */
    void features(TopicFeatures newFeatures) {
        if (features.lastValueCache() && !newFeatures.lastValueCache()) {
            releaseHistory();
        }
        features = newFeatures;
    }

    /**
     * Records update {@link #sequence}: its frame (taking over one reference) and, when the frame
     * holds a delta, a copy of the full value (taking over one reference; null otherwise). Only with
     * the cache on. Its time is not known: a restored update.
     */
    void record(ByteBuf frame, int updateOffset, ByteBuf fullValueOfDelta) {
        record(frame, updateOffset, fullValueOfDelta, 0);
    }

    /** The same, recorded at {@code millis} since the epoch. */
    void record(ByteBuf frame, int updateOffset, ByteBuf fullValueOfDelta, long millis) {
        assert features.lastValueCache();
        if (historyFrames == null) {
            allocateHistory(1);
        } else if (historySize == historyFrames.length && historySize < historyLength) {
            growHistory();
        }
        int slot = slot(sequence);
        forget(slot);
        historyFrames[slot] = frame;
        historyUpdateOffsets[slot] = updateOffset;
        historyFullValues[slot] = fullValueOfDelta;
        historyMillis[slot] = millis;
        charge(bytesOf(slot));
        if (historySize < historyLength) {
            historySize++;
            budget.count(1);
        }
        recordedSequence = sequence;
        // large values: the oldest go first, so that one topic holds at most history.maxBytes
        while (historyBytes > historyMaxBytes && historySize > 1) {
            forgetOldestUpdate();
        }
        budget.recorded(this);
    }

    /**
     * Lets the oldest update of the history go, unless only the newest is left: for
     * {@code history.maxBytes}, and for the node's {@link HistoryBudget}. Whether one went.
     */
    boolean forgetOldestUpdate() {
        if (historySize <= 1) {
            return false;
        }
        forget(slot(recordedSequence - historySize + 1));
        historySize--;
        budget.count(-1);
        return true;
    }

    /** The history's bytes changed by {@code change}: the topic's count and the node's. */
    private void charge(long change) {
        historyBytes += change;
        budget.charge(change);
    }

    /**
     * The history's arrays, of {@code capacity} slots. They start at one and double as updates come,
     * up to {@code history.length}: a topic updated once (most of a million short-lived ones) keeps
     * one slot, not 64 (1.8 KB each).
     */
    private void allocateHistory(int capacity) {
        historyFrames = new ByteBuf[capacity];
        historyUpdateOffsets = new int[capacity];
        historyFullValues = new ByteBuf[capacity];
        historyMillis = new long[capacity];
    }

    /** Doubles the history's arrays (at most to {@code history.length}), each update moved to its slot there. */
    private void growHistory() {
        ByteBuf[] frames = historyFrames;
        int[] offsets = historyUpdateOffsets;
        ByteBuf[] fullValues = historyFullValues;
        long[] millis = historyMillis;
        int old = frames.length;
        allocateHistory(Math.min(historyLength, old * 2));
        for (long seq = recordedSequence - historySize + 1; seq <= recordedSequence; seq++) {
            int from = (int) (seq % old);
            int to = slot(seq);
            historyFrames[to] = frames[from];
            historyUpdateOffsets[to] = offsets[from];
            historyFullValues[to] = fullValues[from];
            historyMillis[to] = millis[from];
        }
    }

    /** The slot of update {@code seq} in the history's arrays. */
    private int slot(long seq) {
        return (int) (seq % historyFrames.length);
    }

    /** Releases what the history keeps in {@code slot}. */
    private void forget(int slot) {
        charge(-bytesOf(slot));
        release(historyFrames, slot);
        release(historyFullValues, slot);
    }

    private long bytesOf(int slot) {
        return (historyFrames[slot] == null ? 0 : historyFrames[slot].writerIndex())
                + (historyFullValues[slot] == null ? 0 : historyFullValues[slot].readableBytes());
    }

    private static void release(ByteBuf[] buffers, int slot) {
        if (buffers[slot] != null) {
            buffers[slot].release();
            buffers[slot] = null;
        }
    }

    boolean hasValue() {
        return historySize > 0;
    }

    /** How many updates the history holds: the newest ones, up to {@link #sequence}, between sequencing runs. */
    int historySize() {
        return historySize;
    }

    /** The buffer holding the newest value, at {@link #lastValueIndex()}; only when {@link #hasValue()}. */
    ByteBuf lastValueBuffer() {
        return historyValueBuffer(recordedSequence);
    }

    int lastValueIndex() {
        return historyValueIndex(recordedSequence);
    }

    int lastValueLength() {
        return historyValueLength(recordedSequence);
    }

    /**
     * Whether the history knows the full value of update {@code seq} (within it): its frame holds
     * it, or a copy was kept. Always, except for the older deltas of a restored history.
     */
    boolean historyValueKnown(long seq) {
        int slot = slot(seq);
        return historyFullValues[slot] != null || !holdsDelta(slot);
    }

    /** The buffer holding the full value of update {@code seq}, at {@link #historyValueIndex}; only when {@link #historyValueKnown}. */
    ByteBuf historyValueBuffer(long seq) {
        int slot = slot(seq);
        return historyFullValues[slot] != null ? historyFullValues[slot] : historyFrames[slot];
    }

    int historyValueIndex(long seq) {
        int slot = slot(seq);
        return historyFullValues[slot] != null ? historyFullValues[slot].readerIndex()
                : historyUpdateOffsets[slot] + WireCodec.UPDATE_OVERHEAD_BYTES;
    }

    int historyValueLength(long seq) {
        int slot = slot(seq);
        return historyFullValues[slot] != null ? historyFullValues[slot].readableBytes()
                : historyFrames[slot].writerIndex() - historyValueIndex(seq);
    }

    /** When update {@code seq} was recorded, in milliseconds since the epoch; 0 when not known. */
    long historyMillis(long seq) {
        return historyMillis[slot(seq)];
    }

    private boolean holdsDelta(int slot) {
        ByteBuf frame = historyFrames[slot];
        return (frame.getByte(historyUpdateOffsets[slot] + WireCodec.UPDATE_OVERHEAD_BYTES - 1) & UpdateFlags.DELTA) != 0;
    }

    /**
     * The first update a subscription that rewinds starts from: the oldest of the last
     * {@code lastUpdates} (0: no such bound) recorded at or after {@code sinceMillis} (-1: no such
     * bound) whose value is known, but never after the newest, which a rewind always ends with.
     * Only when {@link #hasValue()}.
     */
    long rewindFrom(int lastUpdates, long sinceMillis) {
        long from = sequence - historySize + 1;
        if (lastUpdates > 0) {
            from = Math.max(from, sequence - lastUpdates + 1);
        }
        while (from < sequence && (sinceMillis >= 0 && historyMillis(from) < sinceMillis || !historyValueKnown(from))) {
            from++;
        }
        return from;
    }

    /** Whether the history holds every update after {@code lastSeen}, so a resume can replay them. */
    boolean canReplayAfter(long lastSeen) {
        return historySize > 0 && lastSeen < sequence && lastSeen + 1 >= sequence - historySize + 1;
    }

    /** The frame of update {@code seq}, which must be within the history. */
    ByteBuf historyFrame(long seq) {
        return historyFrames[slot(seq)];
    }

    /** Offset of the {@code UPDATE} message of update {@code seq} in its {@link #historyFrame}. */
    int historyUpdateOffset(long seq) {
        return historyUpdateOffsets[slot(seq)];
    }

    /** Length of the {@code UPDATE} message of update {@code seq}. */
    int historyUpdateLength(long seq) {
        return historyFrame(seq).writerIndex() - historyUpdateOffset(seq);
    }

    /** Releases the history and the last value; nothing is kept until the next update. */
    void releaseHistory() {
        if (historyFrames != null) {
            for (int i = 0; i < historyFrames.length; i++) {
                release(historyFrames, i);
                release(historyFullValues, i);
            }
        }
        budget.count(-historySize);
        historySize = 0;
        charge(-historyBytes);
        budget.released(this);
    }

    /** The bytes the history takes now ({@code history.maxBytes} bounds them, beside the newest). */
    long historyBytes() {
        return historyBytes;
    }
}
