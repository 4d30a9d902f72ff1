package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

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
 * <p>Sequencer thread only: the projection scratch and the queue are unguarded.
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
    /** Views holding a value for its time, earliest deadline first; a view leaves when its deadline passes. */
    private final PriorityQueue<TopicView> heldQueue =
            new PriorityQueue<>(Comparator.comparingLong((TopicView v) -> v.deadlineNanos));
    /** The deadline the timer was last armed for and has not sent its command for; {@link Long#MAX_VALUE}: none. */
    private long armedFor = Long.MAX_VALUE;

    /**
     * @param clock    {@link System#nanoTime()} in production; a test's clock in tests
     * @param armTimer asks for a {@code FLUSH_HELD} command at the given {@code clock} time
     */
    ViewedUpdates(ByteBufAllocator alloc, FanOutProxy fanOut, UpdateEncoder encoder, LongSupplier clock,
                  LongConsumer armTimer) {
        this.alloc = alloc;
        this.fanOut = fanOut;
        this.encoder = encoder;
        this.empty = SubscriberSet.empty(fanOut.loops());
        this.clock = clock;
        this.armTimer = armTimer;
        this.projected = alloc.directBuffer(256);
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
            take(v, topic.lastValueBuffer(), topic.lastValueIndex(), topic.lastValueLength(), topic.sequence);
        }
        return v;
    }

    /**
     * The topic's state was replaced (a cluster snapshot): the view takes its newest value as it
     * does when it is opened, or shows nothing when the topic keeps none. Its members are told by
     * the caller.
     */
    void refresh(TopicView v) {
        Topic topic = v.topic;
        if (topic.hasValue()) {
            take(v, topic.lastValueBuffer(), topic.lastValueIndex(), topic.lastValueLength(), topic.sequence);
        } else {
            v.unmatch();
        }
    }

    /** Drops a view that has no member left; what it held is not sent. */
    void close(TopicView v) {
        assert v.subscribers.size() == 0;
        v.topic.removeView(v);
        v.dropped = true;
        v.release();
    }

    /**
     * Update {@code sequence} of {@code topic}, whose full value is {@code length} bytes of
     * {@code value} from {@code index}, through each of its views. {@code created}: the update made
     * the topic, and its views' members (who joined it as it was made) get its definition first,
     * whether or not their view sends the value.
     */
    void update(Topic topic, boolean created, long sequence, ByteBuf value, int index, int length,
                long receivedNanos) {
        long now = 0;
        for (int i = 0, n = topic.viewCount(); i < n; i++) {
            TopicView v = topic.view(i);
            boolean wasMatched = v.matched;
            int change = take(v, value, index, length, sequence);
            if (change == UNMATCHED && wasMatched) {
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
            send(v, created, sequence, 0, receivedNanos);
        }
    }

    private static final int UNMATCHED = 0;
    private static final int UNCHANGED = 1;
    private static final int TAKEN = 2;

    /** Takes the value into the view's state: whether it no longer matches, shows nothing new, or was taken. */
    private int take(TopicView v, ByteBuf value, int index, int length, long sequence) {
        View view = v.view;
        if (view.filter != null && !view.filter.matches(value, index, length)) {
            v.unmatch();
            return UNMATCHED;
        }
        ByteBuf shown = value;
        int shownIndex = index;
        int shownLength = length;
        if (view.projection != null) {
            projected.clear().ensureWritable(FieldProjection.maxBytes(length));
            shown = projected;
            shownIndex = 0;
            shownLength = view.projection.project(value, index, length, projected);
            if (v.matched && v.shows(shown, shownIndex, shownLength)) {
                return UNCHANGED; // none of its fields changed
            }
        }
        v.accept(alloc, shown, shownIndex, shownLength, sequence);
        return TAKEN;
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
            send(v, false, v.currentSequence, UpdateFlags.CONFLATED, 0);
        }
        if (v != null) {
            arm(v.deadlineNanos);
        }
    }

    private void send(TopicView v, boolean created, long sequence, int flags, long receivedNanos) {
        UpdateEncoder.Encoded u = encoder.encodeViewed(v, created, sequence, flags);
        fanOut.update(u.frame, u.compressedFrame, u.heldValue, v, null, 0, receivedNanos, sequence);
    }

    private void unmatched(TopicView v, boolean created, long sequence) {
        Topic topic = v.topic;
        ByteBuf frame = OutboundFrame.allocate(alloc,
                (created ? WireCodec.topicBytes(topic.path) : 0) + WireCodec.UNMATCHED_BYTES);
        if (created) {
            WireCodec.writeTopic(frame, topic.alias, topic.path);
        }
        WireCodec.writeUnmatched(frame, v.view.id, topic.alias, sequence);
        fanOut.update(OutboundFrame.finish(frame), null, null, v, null, 0, 0, sequence);
    }

    /** The topic's definition alone, for the view's members, who joined the topic as it was made. */
    private void definition(TopicView v) {
        Topic topic = v.topic;
        ByteBuf frame = OutboundFrame.allocate(alloc, WireCodec.topicBytes(topic.path));
        WireCodec.writeTopic(frame, topic.alias, topic.path);
        fanOut.update(OutboundFrame.finish(frame), null, null, v, null, 0, 0, topic.sequence);
    }

    @Override
    public void close() {
        projected.release();
    }
}
