package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.util.Arrays;

/**
 * One topic: its alias, sequence, features, subscribers (plain, and through each view), newest value
 * and short history. Owned by the sequencer thread; only the final fields and {@link #subscribers}
 * are read elsewhere, the latter only through the reference a fan-out event captured.
 *
 * <p>With the last-value cache on, the topic keeps its history: each update's {@code UPDATE}
 * message and, when that holds a delta, the full value too, copied into chunks of direct memory
 * that the topic appends to and never rewrites ({@link #record}). A chunk holds many updates (a
 * few KiB, up to {@value #MAX_CHUNK_BYTES} bytes as the history grows), each update one reference
 * to it, so a chunk returns to the pool once its last update falls out. One object per chunk
 * rather than per update: a history of 4,096 updates per topic held a frame and its buffer object
 * for each (about 340 bytes each with 200-byte values, and hundreds of thousands of objects for
 * the collector to trace on a cluster node); now about the message's bytes. A replay copies the
 * messages out; a value (for snapshots, a rewind, and the newest as the base of the next delta) is
 * read where it lies.
 * It keeps each update's time too, for {@code rewindSince}. With the cache off it keeps nothing but
 * its sequence.
 */
final class Topic extends Audience {
    final int alias;
    final String path;
    final String[] segments;
    long sequence;
    TopicFeatures features;
    /** The views its subscribers see it through ({@link TopicView}), in {@code views[0..viewCount)}; null before the first. */
    private TopicView[] views;
    private int viewCount;
    /** Where the fields its views read lie in a value ({@link #valueIndex}); made again when its views change. */
    private ValueIndex valueIndex;
    private boolean valueIndexStale = true;
    /** {@link #viewedValue()}: one reference, or null. */
    private ByteBuf viewedValue;

    /** A chunk is at most this big, unless one update needs more. */
    static final int MAX_CHUNK_BYTES = 64 * 1024;
    /** {@link #valueLengths}: the value is the {@code UPDATE} message's own (it holds no delta). */
    private static final int VALUE_IN_UPDATE = -1;
    /** {@link #valueLengths}: the message holds a delta whose full value is not known (a restored history). */
    private static final int VALUE_UNKNOWN = -2;

    private final int historyLength;
    private final long historyMaxBytes;
    private final ByteBufAllocator alloc;
    /** The bytes the history's messages and full values take now. */
    private long historyBytes;
    /** The chunk each update lies in (one reference held per update), by slot ({@code sequence % historyLength}). */
    private ByteBuf[] historyChunks;
    /** Offset of each update's {@code UPDATE} message in its chunk, and its length. */
    private int[] updateOffsets;
    private int[] updateLengths;
    /**
     * Length of each update's full value, which follows its message in the chunk when the message
     * holds a delta; or {@link #VALUE_IN_UPDATE}, or {@link #VALUE_UNKNOWN}.
     */
    private int[] valueLengths;
    /** When each update was recorded, in milliseconds since the epoch; 0 when not known (a restored history). */
    private long[] historyMillis;
    /** The chunk being appended to (one reference of the topic's own), or null. */
    private ByteBuf chunk;
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

    /** With the history's chunks from Netty's default pooled allocator. */
    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength,
          long historyMaxBytes, TopicFeatures features) {
        this(alias, path, segments, subscribers, historyLength, historyMaxBytes, features,
                PooledByteBufAllocator.DEFAULT);
    }

    /**
     * @param historyLength   {@code history.length}: the most updates its history keeps
     * @param historyMaxBytes {@code history.maxBytes}: the most bytes they may take, the newest always kept
     * @param alloc           where the history's chunks come from
     */
    Topic(int alias, String path, String[] segments, SubscriberSet subscribers, int historyLength,
          long historyMaxBytes, TopicFeatures features, ByteBufAllocator alloc) {
        super(subscribers);
        this.alias = alias;
        this.path = path;
        this.segments = segments;
        this.historyLength = historyLength;
        this.historyMaxBytes = historyMaxBytes;
        this.features = features;
        this.alloc = alloc;
    }

    @Override
    Topic topic() {
        return this;
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
     * Records update {@link #sequence}: its {@code UPDATE} message, at {@code updateOffset} in
     * {@code frame} up to its end, and, when that holds a delta, {@code fullValueOfDelta}'s readable
     * bytes (null otherwise, or when not known: a restored delta), copied into the history; takes
     * over one reference of each and releases it. Only with the cache on. Its time is not known: a
     * restored update.
     */
    void record(ByteBuf frame, int updateOffset, ByteBuf fullValueOfDelta) {
        record(frame, updateOffset, fullValueOfDelta, 0);
    }

    /** The same, recorded at {@code millis} since the epoch. */
    void record(ByteBuf frame, int updateOffset, ByteBuf fullValueOfDelta, long millis) {
        assert features.lastValueCache();
        try {
            if (historyChunks == null) {
                historyChunks = new ByteBuf[historyLength];
                updateOffsets = new int[historyLength];
                updateLengths = new int[historyLength];
                valueLengths = new int[historyLength];
                historyMillis = new long[historyLength];
            }
            int updateLength = frame.writerIndex() - updateOffset;
            int valueLength = fullValueOfDelta != null ? fullValueOfDelta.readableBytes()
                    : holdsDelta(frame, updateOffset) ? VALUE_UNKNOWN : VALUE_IN_UPDATE;
            int slot = (int) (sequence % historyLength);
            forget(slot);
            ByteBuf c = chunkWithRoom(updateLength + Math.max(valueLength, 0));
            updateOffsets[slot] = c.writerIndex();
            updateLengths[slot] = updateLength;
            valueLengths[slot] = valueLength;
            c.writeBytes(frame, updateOffset, updateLength);
            if (fullValueOfDelta != null) {
                c.writeBytes(fullValueOfDelta, fullValueOfDelta.readerIndex(), valueLength);
            }
            historyChunks[slot] = c.retain();
            historyMillis[slot] = millis;
            historyBytes += bytesOf(slot);
        } finally {
            frame.release();
            if (fullValueOfDelta != null) {
                fullValueOfDelta.release();
            }
        }
        if (historySize < historyLength) {
            historySize++;
        }
        recordedSequence = sequence;
        // large values: the oldest go first, so that one topic holds at most history.maxBytes
        while (historyBytes > historyMaxBytes && historySize > 1) {
            forget((int) ((sequence - historySize + 1) % historyLength));
            historySize--;
        }
    }

    /**
     * The chunk to append {@code bytes} to: the current one while they fit, else a new one of about
     * an eighth of what the history holds (so a chunk's unused and outlived bytes stay a small part
     * of it), at least {@code bytes}, at most {@link #MAX_CHUNK_BYTES} unless {@code bytes} needs more.
     */
    private ByteBuf chunkWithRoom(int bytes) {
        if (chunk != null && chunk.writableBytes() >= bytes) {
            return chunk;
        }
        releaseChunk();
        long eighth = Math.min(historyBytes / 8, MAX_CHUNK_BYTES);
        int size = Math.max(bytes, eighth <= 1 ? 1 : Integer.highestOneBit((int) eighth - 1) << 1);
        chunk = alloc.directBuffer(size, size);
        return chunk;
    }

    private void releaseChunk() {
        if (chunk != null) {
            chunk.release();
            chunk = null;
        }
    }

    /** Releases what the history keeps in {@code slot}. */
    private void forget(int slot) {
        if (historyChunks[slot] != null) {
            historyBytes -= bytesOf(slot);
            historyChunks[slot].release();
            historyChunks[slot] = null;
        }
    }

    private long bytesOf(int slot) {
        return updateLengths[slot] + Math.max(valueLengths[slot], 0);
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
     * Whether the history knows the full value of update {@code seq} (within it): its message holds
     * it, or a copy was kept. Always, except for the older deltas of a restored history.
     */
    boolean historyValueKnown(long seq) {
        return valueLengths[(int) (seq % historyLength)] != VALUE_UNKNOWN;
    }

    /**
     * The buffer holding the full value of update {@code seq}, at {@link #historyValueIndex}; only
     * when {@link #historyValueKnown}. Its bytes there never change: a reader may keep a retained
     * slice of them.
     */
    ByteBuf historyValueBuffer(long seq) {
        return historyChunks[(int) (seq % historyLength)];
    }

    int historyValueIndex(long seq) {
        int slot = (int) (seq % historyLength);
        return valueLengths[slot] >= 0 ? updateOffsets[slot] + updateLengths[slot]
                : updateOffsets[slot] + WireCodec.UPDATE_OVERHEAD_BYTES;
    }

    int historyValueLength(long seq) {
        int slot = (int) (seq % historyLength);
        return valueLengths[slot] >= 0 ? valueLengths[slot] : updateLengths[slot] - WireCodec.UPDATE_OVERHEAD_BYTES;
    }

    /** When update {@code seq} was recorded, in milliseconds since the epoch; 0 when not known. */
    long historyMillis(long seq) {
        return historyMillis[(int) (seq % historyLength)];
    }

    private static boolean holdsDelta(ByteBuf frame, int updateOffset) {
        return (frame.getByte(updateOffset + WireCodec.UPDATE_OVERHEAD_BYTES - 1) & UpdateFlags.DELTA) != 0;
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

    /** The buffer holding the {@code UPDATE} message of update {@code seq}, which must be within the history. */
    ByteBuf historyFrame(long seq) {
        return historyChunks[(int) (seq % historyLength)];
    }

    /** Offset of the {@code UPDATE} message of update {@code seq} in its {@link #historyFrame}. */
    int historyUpdateOffset(long seq) {
        return updateOffsets[(int) (seq % historyLength)];
    }

    /** Length of the {@code UPDATE} message of update {@code seq}. */
    int historyUpdateLength(long seq) {
        return updateLengths[(int) (seq % historyLength)];
    }

    /** Releases the history and the last value; nothing is kept until the next update. */
    void releaseHistory() {
        if (historyChunks != null) {
            for (int i = 0; i < historyChunks.length; i++) {
                forget(i);
            }
        }
        releaseChunk();
        historySize = 0;
        historyBytes = 0;
    }

    /** The bytes the history takes now ({@code history.maxBytes} bounds them, beside the newest). */
    long historyBytes() {
        return historyBytes;
    }
}
