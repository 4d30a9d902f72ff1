package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Each update through each view of its topic ({@link TopicView}), once per view whatever its number
 * of members, after the plain update: the filter, on a change to no match one {@code UNMATCHED};
 * the projection, and nothing when it shows what the view shows already; {@code maxRate}, which
 * holds the value until its time; then one encoded frame ({@link UpdateEncoder#encodeViewed}) on the
 * fan-out ring for the view's members. Also the views' first state, when a topic's view gets its
 * first member ({@link #open}).
 *
 * <p><b>maxRate.</b> A view sends a topic at most once per {@link View#periodNanos}. An update within
 * the period after the last send waits as the view's {@link TopicView#current} ({@link TopicView#held});
 * a newer one replaces it, so the members always end on the newest value; it goes out flagged
 * {@code CONFLATED} when its time comes. The time comes through the inbound ring: {@link #flushDue}
 * runs at the end of each batch of commands and on the {@code FLUSH_HELD} command that a timer
 * ({@code armTimer}, {@link HeldViewsTimer}) sends at the earliest deadline, so a quiet topic's
 * last value does not wait for the next publish.
 *
 * <p><b>Grouped by view.</b> A view's frames do not go on the fan-out ring as they are made: the
 * views of one update have different members, so put there one after the other they would end each
 * poller's run of updates for the same sessions at every event, and every delivery would be a frame
 * of its own. They wait in {@link #pending} (at most {@link #MAX_PENDING}), and
 * {@link #publishPending} puts them on the ring view by view, each view's in the order they were
 * made, each with the members it had when it was made: a view's members on many topics are one
 * interned set, so a poller writes a view's updates of a batch as one gathered frame per member.
 * Only the order between different streams of a session changes (its plain stream, each view's),
 * which are each a subscription's own. The sequencer publishes them before any command that is not
 * a publish, so replies keep their order with every update before them, and at the end of a batch.
 *
 * <p>Sequencer thread only: the projection scratch and the queues are unguarded.
 */
final class ViewedUpdates implements AutoCloseable {
    private final ByteBufAllocator alloc;
    private final FanOutProxy fanOut;
    private final UpdateEncoder encoder;
    private final SubscriberSet empty;
    private final LongSupplier clock;
    private final LongConsumer armTimer;
    /** A projection being made; grows to the largest and stays. */
    private final ByteBuf projected;
    /** The bytes of a projection that identify it as they are ({@link TopicView#id0}); longer ones by their SHA-256. */
    private static final int ID_BYTES = 32;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    /** What identifies a projection, as {@link #identify} made it last: {@link #idBytes} as longs. */
    private final long[] id = new long[4];
    private final byte[] idBytes = new byte[ID_BYTES];
    /**
     * The projection whose output of the value being taken {@link #projected} holds now, with
     * {@link #projectedLength} and {@link #id}: the next views of the topic with the same one (side
     * by side, {@link Topic#addView}) take it as it is. Null when {@link #projected} holds anything else.
     */
    private FieldProjection projectedBy;
    private int projectedLength;
    private final MessageDigest sha256;
    /** The projection a rewind sent last; grows to the largest and stays. */
    private final ByteBuf rewound;
    /** Views holding a value for its time, earliest deadline first; a view leaves when its deadline passes. */
    private final PriorityQueue<TopicView> heldQueue =
            new PriorityQueue<>(Comparator.comparingLong((TopicView v) -> v.deadlineNanos));
    /** The deadline the timer was last armed for and has not sent its command for; {@link Long#MAX_VALUE}: none. */
    private long armedFor = Long.MAX_VALUE;

    /** The most frames that wait for {@link #publishPending}: a long batch publishes them this many at a time. */
    static final int MAX_PENDING = 256;
    /** Frames made and not yet on the fan-out ring, in the order they were made: {@code [0, pendingCount)}. */
    private final PendingFrame[] pending = new PendingFrame[MAX_PENDING];
    private int pendingCount;

    /** A view's frame waiting for {@link #publishPending}, with what its fan-out event takes over. */
    private static final class PendingFrame {
        ByteBuf frame;
        ByteBuf compressedFrame;
        ByteBuf value;
        TopicView view;
        /** The view's members when the frame was made. */
        SubscriberSet subscribers;
        long receivedNanos;
        long sequence;
        boolean published;

        void release() {
            release(frame);
            release(compressedFrame);
            release(value);
            frame = null;
            compressedFrame = null;
            value = null;
            view = null;
            subscribers = null;
        }

        private static void release(ByteBuf b) {
            if (b != null) {
                b.release();
            }
        }
    }

    /**
     * @param empty    the subscriber table's empty set ({@link SubscriberSets#empty}), a new view's
     * @param clock    {@link System#nanoTime()} in production; a test's clock in tests
     * @param armTimer asks for a {@code FLUSH_HELD} command at the given {@code clock} time
     */
    ViewedUpdates(ByteBufAllocator alloc, FanOutProxy fanOut, UpdateEncoder encoder, SubscriberSet empty,
                  LongSupplier clock, LongConsumer armTimer) {
        this.alloc = alloc;
        this.fanOut = fanOut;
        this.encoder = encoder;
        this.empty = empty;
        this.clock = clock;
        this.armTimer = armTimer;
        this.projected = alloc.directBuffer(256);
        this.rewound = alloc.directBuffer(256);
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
        for (int i = 0; i < MAX_PENDING; i++) {
            pending[i] = new PendingFrame();
        }
    }

    /**
     * The topic's view of {@code view}, made when it has none: its state is what the view shows of
     * the topic's newest value (none when the topic keeps no value), as every member joining it
     * is told by its reply.
     */
    TopicView open(Topic topic, View view) {
        TopicView v = topic.viewOf(view);
        if (v != null) {
            return v;
        }
        v = new TopicView(topic, view, empty);
        topic.addView(v);
        if (topic.hasValue()) {
            takeNewest(v);
        }
        return v;
    }

    /**
     * The topic's state was replaced (a cluster snapshot): the view takes its newest value as it
     * does when it is opened, or shows nothing when the topic keeps none. Its members are told by
     * the caller.
     */
    void refresh(TopicView v) {
        if (v.topic.hasValue()) {
            takeNewest(v);
        } else {
            v.unmatch();
        }
    }

    /** The view takes the topic's newest value, which its cache keeps, as all its views' ({@link Topic#viewedValue()}). */
    private void takeNewest(TopicView v) {
        Topic topic = v.topic;
        topic.viewedValue(topic.lastValueBuffer(), topic.lastValueIndex(), topic.lastValueLength());
        projectedBy = null;
        take(v, topic.sequence, null);
    }

    /**
     * A rewind through the view: a {@code SNAPSHOT} for the subscription of what the view shows of
     * each update of the topic from {@code from} to the newest whose value the history knows, oldest
     * first; an update that does not pass, or whose projection shows what the last one sent showed,
     * sends nothing; an {@code UNMATCHED} at the end when something was sent and the newest value does
     * not pass, so the subscription ends where the view's members are. {@code maxRate} does not
     * space a rewind out: it is the subscription's start.
     */
    void rewind(DirectedReplies replies, Session session, int subscriptionId, TopicView v, long from) {
        Topic topic = v.topic;
        View view = v.view;
        boolean passing = false;
        boolean sent = false;
        for (long s = from; s <= topic.sequence; s++) {
            if (!topic.historyValueKnown(s)) {
                continue;
            }
            ByteBuf value = topic.historyValueBuffer(s);
            int index = topic.historyValueIndex(s);
            int length = topic.historyValueLength(s);
            if (view.filter != null && !view.filter.matches(value, index, length)) {
                passing = false;
                continue;
            }
            if (view.projection != null) {
                projected.clear().ensureWritable(FieldProjection.maxBytes(length));
                int shown = view.projection.project(value, index, length, projected);
                if (passing && rewound.readableBytes() == shown && ByteBufUtil.equals(projected, 0, rewound, 0, shown)) {
                    continue;
                }
                rewound.clear().writeBytes(projected, 0, shown);
                value = rewound;
                index = 0;
                length = shown;
            }
            passing = true;
            sent = true;
            replies.snapshot(session, subscriptionId, topic, s, 0, view.id, value, index, length);
        }
        if (sent && !passing) {
            replies.unmatched(session, v, topic.sequence);
        }
    }

    /** Drops a view that has no member left; what it held is not sent. */
    void close(TopicView v) {
        assert v.subscribers.size() == 0;
        v.topic.removeView(v);
        v.dropped = true;
    }

    /**
     * Update {@code sequence} of {@code topic}, whose full value is {@code length} bytes of
     * {@code value} from {@code index}, through each of its views. {@code created}: the update made
     * the topic, and its views' members (who joined it as it was made) get its definition first,
     * whether or not their view sends the value.
     */
    void update(Topic topic, boolean created, long sequence, ByteBuf value, int index, int length,
                long receivedNanos) {
        // the topic's reference for its views keeps the value while the ring may release its own
        topic.viewedValue(value, index, length);
        projectedBy = null;
        long now = 0;
        // one read of a large value for all its views, each then reading only its fields
        ValueIndex fields = topic.viewCount() > 1 && length >= ValueIndex.MIN_VALUE_BYTES ? topic.valueIndex() : null;
        if (fields != null) {
            fields.read(value, index, length);
        }
        for (int i = 0, n = topic.viewCount(); i < n; i++) {
            TopicView v = topic.view(i);
            int change = take(v, sequence, fields);
            if (change == UNMATCHED && v.shownMatch) { // else a value held under maxRate is dropped unseen
                unmatched(v, created, sequence);
                continue;
            }
            if (change != TAKEN) {
                if (created) {
                    definition(v);
                }
                continue;
            }
            if (v.view.periodNanos > 0) {
                if (now == 0) {
                    now = clock.getAsLong();
                }
                if (v.sent && now - v.lastSendNanos < v.view.periodNanos) {
                    hold(v);
                    if (created) {
                        definition(v);
                    }
                    continue;
                }
                v.lastSendNanos = now;
                v.sent = true;
                v.held = false;
            }
            send(v, v.view.projection != null ? projected : topic.viewedValue(), created, sequence, 0, receivedNanos);
        }
        projectedBy = null;
    }

    private static final int UNMATCHED = 0;
    private static final int UNCHANGED = 1;
    private static final int TAKEN = 2;

    /**
     * Takes the topic's newest value ({@link Topic#viewedValue()}) into the view's state: whether it no longer matches, shows nothing new, or was taken.
     * {@code fields}: the value's {@link ValueIndex} when one was read, else null.
     */
    private int take(TopicView v, long sequence, ValueIndex fields) {
        View view = v.view;
        ByteBuf newest = v.topic.viewedValue();
        int index = newest.readerIndex();
        int length = newest.readableBytes();
        if (view.filter != null
                && !(fields != null ? view.filter.matches(fields) : view.filter.matches(newest, index, length))) {
            v.unmatch();
            return UNMATCHED;
        }
        if (view.projection != null) {
            if (view.projection != projectedBy) {
                projected.clear().ensureWritable(FieldProjection.maxBytes(length));
                projectedLength = fields != null ? view.projection.project(fields, projected)
                        : view.projection.project(newest, index, length, projected);
                identify(projected, projectedLength);
                projectedBy = view.projection;
            }
            if (v.shows(id[0], id[1], id[2], id[3], projectedLength)) {
                return UNCHANGED; // none of its fields changed
            }
            v.shown(id[0], id[1], id[2], id[3], projectedLength);
        }
        v.matched = true;
        v.currentSequence = sequence;
        return TAKEN;
    }

    /**
     * Fills {@link #id} with what identifies the projection in {@code length} bytes of
     * {@code shown} from 0: those bytes when they fit, else their SHA-256, a collision of which
     * nobody knows how to make, so that a changed field is never taken for the same.
     */
    private void identify(ByteBuf shown, int length) {
        if (length <= ID_BYTES) {
            Arrays.fill(idBytes, (byte) 0);
            shown.getBytes(0, idBytes, 0, length);
        } else {
            sha256.update(shown.nioBuffer(0, length));
            try {
                sha256.digest(idBytes, 0, ID_BYTES);
            } catch (DigestException e) {
                throw new IllegalStateException(e); // not reached: the array has room
            }
        }
        for (int i = 0; i < 4; i++) {
            id[i] = (long) LONGS.get(idBytes, i * Long.BYTES);
        }
    }

    /**
     * What the view shows of its topic now, as the readable bytes of the buffer returned, valid
     * until the next call: the projection of the newest value that passed (made again), or that
     * value. Only when {@link TopicView#matched}.
     */
    ByteBuf shown(TopicView v) {
        ByteBuf source = v.topic.viewedValue();
        if (v.view.projection == null) {
            return source;
        }
        projectedBy = null;
        projected.clear().ensureWritable(FieldProjection.maxBytes(source.readableBytes()));
        v.view.projection.project(source, source.readerIndex(), source.readableBytes(), projected);
        return projected;
    }

    /** A {@code SNAPSHOT} through the view of what it shows, which must be {@link TopicView#matched}. */
    void snapshot(DirectedReplies replies, Session session, int subscriptionId, TopicView v, int flags) {
        ByteBuf value = shown(v);
        replies.snapshot(session, subscriptionId, v.topic, v.currentSequence, flags, v.view.id, value,
                value.readerIndex(), value.readableBytes());
    }

    private void hold(TopicView v) {
        v.held = true;
        if (!v.queued) {
            v.queued = true;
            v.deadlineNanos = v.lastSendNanos + v.view.periodNanos;
            boolean earliest = heldQueue.isEmpty() || v.deadlineNanos < heldQueue.peek().deadlineNanos;
            heldQueue.add(v);
            if (earliest) {
                arm(v.deadlineNanos);
            }
        }
    }

    private void arm(long deadlineNanos) {
        if (deadlineNanos != armedFor) {
            armedFor = deadlineNanos;
            armTimer.accept(deadlineNanos);
        }
    }

    /**
     * Sends every held value whose time has come, flagged {@code CONFLATED}, and asks for the next
     * deadline unless the timer has it already. Cheap when nothing is held. {@code timerFired}: the
     * timer's {@code FLUSH_HELD} command, after which the timer has no deadline.
     */
    void flushDue(boolean timerFired) {
        if (timerFired) {
            armedFor = Long.MAX_VALUE;
        }
        if (heldQueue.isEmpty()) {
            return;
        }
        long now = clock.getAsLong();
        TopicView v;
        while ((v = heldQueue.peek()) != null && v.deadlineNanos - now <= 0) {
            heldQueue.poll();
            v.queued = false;
            if (v.dropped || !v.held) {
                continue; // gone, or no longer matching: nothing waits
            }
            v.held = false;
            v.lastSendNanos = now;
            send(v, shown(v), false, v.currentSequence, UpdateFlags.CONFLATED, 0);
        }
        if (v != null) {
            arm(v.deadlineNanos);
        }
    }

    /**
     * A member is about to join {@code v}: when the view holds a value under {@code maxRate} that its
     * members were not shown while they were last shown {@code UNMATCHED} (or nothing), it is sent to
     * them now, a little before its time, so that the joiner, told what the view shows, and they are
     * told the same ({@link TopicView}); otherwise a later {@code UNMATCHED} would reach only some of
     * them. Afterwards the members were shown what the view shows.
     */
    void showHeld(TopicView v) {
        if (v.held && !v.shownMatch) {
            v.held = false;
            v.lastSendNanos = clock.getAsLong();
            v.sent = true;
            send(v, shown(v), false, v.currentSequence, UpdateFlags.CONFLATED, 0);
        }
        v.shownMatch = v.matched;
    }

    /** Sends {@code shown}'s readable bytes, what the view shows now, to its members. */
    private void send(TopicView v, ByteBuf shown, boolean created, long sequence, int flags, long receivedNanos) {
        v.shownMatch = true;
        UpdateEncoder.Encoded u = encoder.encodeViewed(v, shown, created, sequence, flags);
        defer(u.frame, u.compressedFrame, u.heldValue, v, receivedNanos, sequence);
    }

    /** Keeps a frame for the view's current members until {@link #publishPending}, which it calls when full. */
    private void defer(ByteBuf frame, ByteBuf compressedFrame, ByteBuf value, TopicView v, long receivedNanos,
                       long sequence) {
        if (pendingCount == MAX_PENDING) {
            publishPending();
        }
        PendingFrame p = pending[pendingCount++];
        p.frame = frame;
        p.compressedFrame = compressedFrame;
        p.value = value;
        p.view = v;
        p.subscribers = v.subscribers;
        p.receivedNanos = receivedNanos;
        p.sequence = sequence;
        p.published = false;
    }

    /**
     * Puts the waiting frames on the fan-out ring, view by view in the order each view first made
     * one, each view's in the order they were made. A quadratic walk over at most
     * {@link #MAX_PENDING} frames, cheap next to what each frame costs to make; one view, or one
     * frame, is a single pass.
     */
    void publishPending() {
        fanOut.seal(); // the caller keeps a reference to what it still reads (see update)
        int n = pendingCount;
        try {
            for (int i = 0; i < n; i++) {
                PendingFrame first = pending[i];
                if (first.published) {
                    continue;
                }
                View view = first.view.view;
                for (int j = i; j < n; j++) {
                    PendingFrame p = pending[j];
                    if (!p.published && p.view.view == view) {
                        p.published = true;
                        ByteBuf frame = p.frame;
                        ByteBuf compressedFrame = p.compressedFrame;
                        ByteBuf value = p.value;
                        p.frame = null; // the ring's from here, even when the claim gives up
                        p.compressedFrame = null;
                        p.value = null;
                        fanOut.update(frame, compressedFrame, value, p.view, p.subscribers, null, 0, p.receivedNanos,
                                p.sequence);
                        p.view = null;
                        p.subscribers = null;
                    }
                }
            }
        } finally {
            pendingCount = 0;
            for (int i = 0; i < n; i++) {
                pending[i].release(); // frames left when the server stops in the middle
            }
        }
    }

    private void unmatched(TopicView v, boolean created, long sequence) {
        v.shownMatch = false;
        Topic topic = v.topic;
        ByteBuf frame = UpdateEncoder.frameAfterDefinition(alloc, topic, created, WireCodec.UNMATCHED_BYTES);
        WireCodec.writeUnmatched(frame, v.view.id, topic.alias, sequence);
        defer(OutboundFrame.finish(frame), null, null, v, 0, sequence);
    }

    /** The topic's definition alone, for the view's members, who joined the topic as it was made. */
    private void definition(TopicView v) {
        Topic topic = v.topic;
        ByteBuf frame = UpdateEncoder.frameAfterDefinition(alloc, topic, true, 0);
        defer(OutboundFrame.finish(frame), null, null, v, 0, topic.sequence);
    }

    @Override
    public void close() {
        for (int i = 0; i < pendingCount; i++) {
            pending[i].release();
        }
        pendingCount = 0;
        projected.release();
        rewound.release();
    }
}
