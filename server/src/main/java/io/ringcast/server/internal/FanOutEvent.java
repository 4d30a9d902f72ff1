package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.server.config.Conflation;

import java.util.Arrays;

/**
 * A slot of the fan-out ring: one encoded frame for many sessions ({@link #UPDATE}) or for one
 * ({@link #DIRECTED}), or a cluster's ack for one publisher ({@link #ACK}). Written by the
 * sequencer only; read by every {@link FanOutPoller}.
 * The slot holds one reference to {@link #frame}, released by the sequencer once every poller has
 * passed the slot ({@code FanOutProxy.releasePassed}), or at the latest when it reuses the slot.
 * Then too it forgets the sessions the slot was for ({@link #subscribers}, {@link #target},
 * {@link #publisher}): a poller with nothing in the slot, which may read it after that, reads only
 * {@link #kind}, {@link #sessionLoop} and {@link #subscriberLoops} ({@link #isFor}), which stay
 * until the slot is reused. Kept a whole ring, 65,536 slots pinned every session they named, each
 * with its channel and pipeline (about 2.7 kB of heap): 40,000 closed sessions, 108 MB, on a node
 * after four storms of 10,000 connections, until as many more events went through.
 */
final class FanOutEvent {
    /** A slot recycled and not yet written again. */
    static final int NONE = 0;
    static final int UPDATE = 1;
    static final int DIRECTED = 2;
    /** Cluster: a {@code PUBLISH_ACK} for {@link #publisher}, written by its poller as an update's ack. */
    static final int ACK = 3;

    int kind;
    ByteBuf frame;
    /**
     * {@link #UPDATE}: the same frame compressed for sessions that negotiated permessage-deflate,
     * or null (compression off for the topic, no such subscriber, too small, or no gain).
     */
    ByteBuf compressedFrame;
    /**
     * {@link #UPDATE}: whose stream it is: the topic's plain subscribers, or a view's
     * ({@link TopicView}); a session conflates per audience. Final fields only.
     */
    Audience audience;
    /** {@link #UPDATE}: the topic's conflation policy when the update was sequenced. */
    Conflation conflation;
    /**
     * {@link #UPDATE} with conflation on: the full value (the frame may hold a delta), for the
     * conflated frames of sessions that fell behind; else null.
     */
    ByteBuf value;
    /** {@link #UPDATE}: the topic's subscribers when the update was sequenced. */
    SubscriberSet subscribers;
    /**
     * {@link #UPDATE}: the loops with a session in {@link #subscribers}, ascending
     * ({@link SubscriberSet#loopsWithSessions}, shared, never modified); else null.
     */
    int[] subscriberLoops;
    /**
     * The loop of the one session the slot is for besides {@link #subscriberLoops}: {@link #DIRECTED}'s
     * {@link #target}, {@link #ACK}'s and {@link #UPDATE}'s {@link #publisher}; -1 for none.
     */
    int sessionLoop = -1;
    /** {@link #DIRECTED}: the one session the frame is for. */
    Session target;
    /**
     * {@link #DIRECTED}: when above 0, the frame ends a window of a streamed subscribe reply of
     * this many bytes, in flight until the frame reached the socket.
     */
    int replyWindowBytes;
    /** {@link #DIRECTED} ending a window: the reply goes on once this window reached the socket. */
    boolean replyContinues;
    /**
     * {@link #DIRECTED} ending a window with a reply's {@code SUBSCRIBED}: the poller writes what it
     * held for the session right after it.
     */
    boolean replyEndsHolding;
    /** {@link #DIRECTED}: kept with what the poller holds for the session until its streamed reply is written. */
    boolean heldForTarget;
    /** {@link #UPDATE}: the publisher to ack, or null; {@link #ACK}: the publisher. */
    Session publisher;
    int correlationId;
    /** When the publish was read ({@link System#nanoTime()}); 0 when unknown. */
    long receivedNanos;
    long sequence;

    /** {@link #UPDATE}: the bytes its frames and value take, as {@code FanOutProxy} counts them; 0 once released. */
    int heldBytes;

    /** {@link #UPDATE}: the frame for a session, the compressed one when it negotiated compression and there is one. */
    ByteBuf frameFor(boolean compressedSession) {
        return compressedSession && compressedFrame != null ? compressedFrame : frame;
    }

    /**
     * {@link #DIRECTED}: hands the frame over to the one poller it is for, which then owns its
     * reference. Left in the slot it would stay allocated until the sequencer reuses the slot, a
     * whole ring later: with subscribe replies of 64 KiB frames and little else on the ring, 65,536
     * slots pinned gigabytes of replies long written. Safe without a lock: no other poller reads a
     * directed frame, and the sequencer reads the slot again only once every poller has passed it.
     * The target's poller only.
     */
    ByteBuf takeDirectedFrame() {
        assert kind == DIRECTED;
        ByteBuf taken = frame;
        frame = null;
        return taken;
    }

    /** Makes the slot an {@link #UPDATE} for {@code subscribers}, acking {@code publisher} (or none: null). */
    void updateFor(SubscriberSet subscribers, Session publisher) {
        kind = UPDATE;
        this.subscribers = subscribers;
        subscriberLoops = subscribers.loopsWithSessions();
        this.publisher = publisher;
        sessionLoop = publisher != null ? publisher.loopIndex : -1;
    }

    /** Makes the slot a {@link #DIRECTED} frame for {@code target} alone. */
    void directedTo(Session target) {
        kind = DIRECTED;
        this.target = target;
        sessionLoop = target.loopIndex;
    }

    /** Makes the slot an {@link #ACK} for {@code publisher}. */
    void ackTo(Session publisher) {
        kind = ACK;
        this.publisher = publisher;
        sessionLoop = publisher.loopIndex;
    }

    /**
     * Whether the slot writes anything on event loop {@code loopIndex}: an update to a session of
     * it, an ack or a directed frame for one. Reads only what stays until the slot is reused.
     */
    boolean isFor(int loopIndex) {
        return sessionLoop == loopIndex
                || kind == UPDATE && Arrays.binarySearch(subscriberLoops, loopIndex) >= 0;
    }

    /** Releases what this slot holds and forgets whom it was for: the {@link #heldBytes} released. Sequencer thread. */
    int recycle() {
        int released = releaseBuffers();
        kind = NONE;
        receivedNanos = 0;
        conflation = null;
        subscriberLoops = null;
        sessionLoop = -1;
        replyWindowBytes = 0;
        replyContinues = false;
        heldForTarget = false;
        replyEndsHolding = false;
        return released;
    }

    /**
     * Releases the frames and the value and forgets the audience and the sessions, which only a
     * poller with something in the slot reads (one with nothing in it reads {@link #isFor}'s fields):
     * else a slot would keep its topic, removed or not, and its sessions, closed or not, alive until
     * reused, 65,536 topics a ring (30 MB after a million short-lived ones). The
     * {@link #heldBytes} released. Again: nothing. Sequencer thread.
     */
    int releaseBuffers() {
        int released = heldBytes;
        heldBytes = 0;
        audience = null;
        subscribers = null;
        target = null;
        publisher = null;
        if (frame != null) {
            frame.release();
            frame = null;
        }
        if (compressedFrame != null) {
            compressedFrame.release();
            compressedFrame = null;
        }
        if (value != null) {
            value.release();
            value = null;
        }
        return released;
    }
}
