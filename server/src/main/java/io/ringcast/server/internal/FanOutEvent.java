package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;

/**
 * A slot of the fan-out ring: one encoded frame for many sessions ({@link #UPDATE}) or for one
 * ({@link #DIRECTED}). Written by the sequencer only; read by every {@link FanOutPoller}.
 * The slot holds one reference to {@link #frame}, released by the sequencer when it reuses the
 * slot, which the ring allows only after every poller has passed it.
 */
final class FanOutEvent {
    static final int UPDATE = 1;
    static final int DIRECTED = 2;

    int kind;
    ByteBuf frame;
    /** {@link #UPDATE}: the topic's subscribers when the update was sequenced. */
    SubscriberSet subscribers;
    /** {@link #DIRECTED}: the one session the frame is for. */
    Session target;
    /** {@link #UPDATE}: the publisher to ack, or null. */
    Session publisher;
    int correlationId;
    long sequence;

    /** Releases the frame of the previous use of this slot. Sequencer thread. */
    void recycle() {
        if (frame != null) {
            frame.release();
            frame = null;
        }
        subscribers = null;
        target = null;
        publisher = null;
    }
}
