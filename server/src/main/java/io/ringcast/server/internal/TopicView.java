package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

/**
 * One view of one topic: the sessions whose subscriptions see the topic through {@link #view}, and
 * what that view has made of the topic's updates so far, shared by all of them, so the view's work
 * is done once per update ({@link ViewedUpdates}) and its frames are encoded once.
 *
 * <p>Every member has been told the same: the view's {@link #current} value when {@link #matched}
 * (a snapshot when it joined, or the updates since), or nothing or {@code UNMATCHED} when not.
 * With {@code maxRate}, {@link #current} may be {@link #held}: accepted, but not yet sent.
 *
 * <p>Sequencer thread only; pollers read {@link #subscribers} and the final fields through a
 * fan-out event.
 */
final class TopicView extends Audience {
    final Topic topic;
    final View view;

    /** Whether the topic's newest value passed the filter (and there is one). */
    boolean matched;
    /** What the view shows of the newest value that passed: its projection, or the value; null when not {@link #matched}. */
    ByteBuf current;
    /** The topic's sequence of {@link #current}. */
    long currentSequence;

    // ---- maxRate
    /** Whether {@link #current} waits for its time ({@code maxRate}): not sent yet. */
    boolean held;
    /** When it may be sent; valid while {@link #queued}. */
    long deadlineNanos;
    /** Whether the view is in {@link ViewedUpdates}' queue of held values (even when no longer {@link #held}). */
    boolean queued;
    /** When the last update went out through the view ({@link System#nanoTime()}); valid once {@link #sent}. */
    long lastSendNanos;
    boolean sent;
    /** Dropped from its topic (no member left): a queued entry is skipped. */
    boolean dropped;

    TopicView(Topic topic, View view, SubscriberSet empty) {
        super(empty);
        this.topic = topic;
        this.view = view;
    }

    @Override
    Topic topic() {
        return topic;
    }

    @Override
    int viewId() {
        return view.id;
    }

    /** Whether {@link #current} holds exactly these bytes. */
    boolean shows(ByteBuf value, int index, int length) {
        return current != null && current.readableBytes() == length
                && ByteBufUtil.equals(current, current.readerIndex(), value, index, length);
    }

    /** Takes a copy of what the view shows of update {@code sequence}, which passed the filter. */
    void accept(ByteBufAllocator alloc, ByteBuf value, int index, int length, long sequence) {
        if (current == null || current.capacity() < length) {
            release();
            current = alloc.directBuffer(length);
        }
        current.clear().writeBytes(value, index, length);
        currentSequence = sequence;
        matched = true;
    }

    /** The newest value no longer passes: nothing is shown, nothing is held. */
    void unmatch() {
        matched = false;
        held = false;
        release();
    }

    /** Releases {@link #current}. */
    void release() {
        if (current != null) {
            current.release();
            current = null;
        }
    }
}
