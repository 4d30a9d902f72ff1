package io.ringcast.server.internal;

import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;

import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * The sequencer's end of the fan-out ring, and the only code that claims its slots: an update for
 * a topic's subscribers, a frame directed to one session, or a cluster's ack. Sequencer thread
 * only, except {@link #halt}.
 *
 * <p>A full ring is waited out, never dropped: the slowest poller is then a whole ring behind,
 * the inbound ring fills behind the sequencer, and publishers' sockets stop being read. So are
 * more than {@link #maxBytes} of updates' frames and values on the ring, not yet written by every
 * poller ({@link #bytes}): bounded by slots alone, the frames in flight were the ring's size times
 * a frame's, 200 MB of views' frames of 3 kB values when the pollers fell behind (issue 29).
 *
 * <p>A wake reaches only the pollers with something to write since the last one: the loops of an
 * update's subscribers and of its publisher, a directed frame's target, an ack's publisher. Waking
 * an idle event loop costs a system call here and a thread's wake-up there, so a topic with a few
 * subscribers on a machine of many loops wakes a few, not all. A poller left asleep still gates the
 * ring: once the ring is half full, a wake goes to every poller, so that those behind skip what had
 * nothing for them and give the slots back.
 */
final class FanOutProxy {
    /** Within one long inbound batch, wake the pollers this often so fan-out starts early. */
    private static final int WAKE_EVERY_EVENTS = 256;
    private static final long FULL_RING_PARK_NS = 20_000;

    private final RingBuffer<FanOutEvent> ring;
    private final FanOutPoller[] pollers;
    private int publishedSinceWake;
    /** Which pollers have something on the ring since the last wake; {@link #dueList} lists them. */
    private final boolean[] due;
    private final int[] dueList;
    private int dueCount;
    /** Per poller, the last slot with something for its loop: a poller reads no other slot's frames. */
    private final long[] lastDueSlot;
    private volatile boolean halted;
    /** The last slot whose frames were released: each poller with something in it had passed it. */
    private long releasedThrough = -1;
    /**
     * The last slot the sequencer is done with ({@link #seal}): it may still read a frame of a later
     * one, made by the command it handles now, which a poller may have written already.
     */
    private long sealedThrough = -1;
    /** {@code pipeline.fanOutRingBytes}: the most bytes of updates on the ring before a claim waits. */
    private final long maxBytes;
    /** Bytes of updates' frames and values the ring's slots hold now. */
    private long bytes;
    /** {@link #bytes}, for the gauge; written by the sequencer, read by any thread. */
    private volatile long reportedBytes;

    /** A ring whose updates are bounded by its slots alone (tests, benchmarks). */
    FanOutProxy(RingBuffer<FanOutEvent> ring, FanOutPoller[] pollers) {
        this(ring, pollers, Long.MAX_VALUE);
    }

    /** @param maxBytes {@code pipeline.fanOutRingBytes} */
    FanOutProxy(RingBuffer<FanOutEvent> ring, FanOutPoller[] pollers, long maxBytes) {
        this.maxBytes = maxBytes;
        this.ring = ring;
        this.pollers = pollers;
        this.due = new boolean[pollers.length];
        this.dueList = new int[pollers.length];
        this.lastDueSlot = new long[pollers.length];
        Arrays.fill(lastDueSlot, -1);
    }

    /** The number of pollers, one per event loop: the width of every {@link SubscriberSet}. */
    int loops() {
        return pollers.length;
    }

    /**
     * Puts an encoded update on the ring for {@code topic}'s current subscribers, and the ack for its
     * publisher (if any). The ring takes over the update's frames and held value.
     */
    void update(UpdateEncoder.Encoded update, Topic topic, InboundEvent publish, long sequence) {
        update(update.frame, update.compressedFrame, update.heldValue, topic, topic.subscribers, publish.session,
                publish.id, publish.receivedNanos, sequence);
    }

    /**
     * Puts a frame on the ring for {@code subscribers}, {@code audience}'s members when the frame was
     * made: an update ({@code value}, the
     * full value for conflation, or null when the frame holds it or conflation is off), or a message
     * about the audience's stream without a value (a view's {@code UNMATCHED}, a topic's definition),
     * which supersedes what a member's conflation holds of it. Acks {@code publisher}'s
     * {@code correlationId} when a publisher is given. The ring takes over the frames and the value.
     */
    void update(ByteBuf frame, ByteBuf compressedFrame, ByteBuf value, Audience audience, SubscriberSet subscribers,
                Session publisher, int correlationId, long receivedNanos, long sequence) {
        // a value sliced from the frame takes no memory of its own
        int held = bytesOf(frame) + bytesOf(compressedFrame) + (value != null && value.unwrap() == frame ? 0 : bytesOf(value));
        long slot = claim(frame, compressedFrame, value, held);
        FanOutEvent ev = ring.get(slot);
        ev.updateFor(subscribers, publisher);
        ev.heldBytes = held;
        bytes += held;
        ev.frame = frame;
        ev.compressedFrame = compressedFrame;
        // null only when the frame holds the full value: see FanOutPoller.deliverOrHold
        ev.value = value;
        ev.audience = audience;
        ev.conflation = audience.topic().features.conflation();
        ev.correlationId = correlationId;
        ev.receivedNanos = receivedNanos;
        ev.sequence = sequence;
        for (int loop : subscribers.loopsWithSessions()) {
            due(loop, slot);
        }
        if (publisher != null) {
            due(publisher.loopIndex, slot);
        }
        commit(slot);
    }

    /** Puts {@code frame} on the ring for {@code target} alone; the ring takes it over. */
    void directed(Session target, ByteBuf frame) {
        directed(target, frame, false);
    }

    /**
     * The same; {@code held}: the target's poller keeps it with the updates it holds for the
     * target until its streamed subscribe reply is written ({@link SubscriberSet#holds}).
     */
    void directed(Session target, ByteBuf frame, boolean held) {
        putDirected(target, frame, held, 0, false, false);
    }

    /**
     * The last frame of a window of a streamed subscribe reply ({@code windowBytes} of messages):
     * its poller writes it with a listener that tells the session once it reached the socket
     * (asking for the next window when {@code continues}), and, when it ends with a reply's
     * {@code SUBSCRIBED} ({@code replied}), writes what it held for the session right after it.
     */
    void replyWindowEnd(Session target, ByteBuf frame, int windowBytes, boolean continues, boolean replied) {
        assert windowBytes > 0;
        putDirected(target, frame, false, windowBytes, continues, replied);
    }

    private void putDirected(Session target, ByteBuf frame, boolean held, int windowBytes, boolean continues,
                             boolean replied) {
        long slot = claim(frame, null, null, 0);
        FanOutEvent ev = ring.get(slot);
        ev.directedTo(target);
        ev.frame = frame;
        ev.heldForTarget = held;
        ev.replyWindowBytes = windowBytes;
        ev.replyContinues = continues;
        ev.replyEndsHolding = replied;
        due(target.loopIndex, slot);
        commit(slot);
    }

    /**
     * The ack of a publish the cluster applied, for {@code publisher} alone: written by its poller
     * as a single node's ack (with the update), in order with the updates before it.
     */
    void ack(Session publisher, int correlationId, long sequence) {
        long slot = claim(null, null, null, 0);
        FanOutEvent ev = ring.get(slot);
        ev.ackTo(publisher);
        ev.correlationId = correlationId;
        ev.sequence = sequence;
        due(publisher.loopIndex, slot);
        commit(slot);
    }

    private void due(int loopIndex, long slot) {
        // a proxy without pollers (a ring nobody reads: tests of what goes on it) has nobody to wake
        if (loopIndex < due.length) {
            lastDueSlot[loopIndex] = slot;
            if (!due[loopIndex]) {
                due[loopIndex] = true;
                dueList[dueCount++] = loopIndex;
            }
        }
    }

    /**
     * A free slot, its previous use released, once the ring has room for {@code heldBytes} more of
     * updates (or holds nothing the sequencer is done with: one command's frames always go on).
     * When the server stops while it waits, releases what the ring would have taken over and throws.
     */
    private long claim(ByteBuf frame, ByteBuf compressedFrame, ByteBuf value, int heldBytes) {
        while (true) {
            if (heldBytes > 0 && bytes + heldBytes > maxBytes) {
                releasePassed(sealedThrough);
            }
            if (heldBytes == 0 || bytes + heldBytes <= maxBytes || releasedThrough >= sealedThrough) {
                try {
                    long slot = ring.tryNext();
                    bytes -= ring.get(slot).recycle();
                    return slot;
                } catch (InsufficientCapacityException full) {
                    // waited out below
                }
            }
            wakePollers();
            if (halted) {
                release(frame);
                release(compressedFrame);
                release(value);
                throw new IllegalStateException("server stopping");
            }
            LockSupport.parkNanos(FULL_RING_PARK_NS);
        }
    }

    private static int bytesOf(ByteBuf buf) {
        return buf == null ? 0 : buf.capacity();
    }

    /**
     * The sequencer is done with every frame on the ring so far: it keeps its own reference to any
     * it goes on using (a topic's history). Called before each command and before the views' frames
     * go on the ring, so that a long batch releases what the pollers wrote as it goes.
     */
    void seal() {
        sealedThrough = ring.getCursor();
    }

    /** Bytes of updates on the ring now, for {@code /metrics}; any thread. */
    long bytes() {
        return reportedBytes;
    }

    private static void release(ByteBuf buf) {
        if (buf != null) {
            buf.release();
        }
    }

    private void commit(long slot) {
        ring.publish(slot);
        if (++publishedSinceWake >= WAKE_EVERY_EVENTS) {
            releasePassed(sealedThrough);
            wakePollers();
        }
    }

    /**
     * Wakes the pollers with something on the ring since the last wake, or every poller once the
     * ring is half full: at the end of each inbound batch, every {@value #WAKE_EVERY_EVENTS} events
     * within one, and while the ring is full.
     */
    void wakePollers() {
        publishedSinceWake = 0;
        reportedBytes = bytes;
        // Dekker pattern with FanOutPoller.run: we store the ring cursor then read each poller's
        // 'scheduled' flag; a poller clears the flag then reads the cursor. The cursor store is a
        // release store, which a later load may overtake: without this fence we could read a stale
        // 'scheduled' while the poller reads the old cursor, and the update would wait for the next wake.
        VarHandle.fullFence();
        if (ring.remainingCapacity() < ring.getBufferSize() / 2) {
            for (FanOutPoller p : pollers) {
                p.wake();
            }
        } else {
            for (int i = 0; i < dueCount; i++) {
                pollers[dueList[i]].wake();
            }
        }
        for (int i = 0; i < dueCount; i++) {
            due[dueList[i]] = false;
        }
        dueCount = 0;
    }

    /**
     * The end of an inbound batch: releases what the pollers are done with ({@link #releasePassed}),
     * then wakes them. Only here, between two inbound events: the sequencer may still use a buffer
     * it has put on the ring while it handles the event that made it (it keeps the frame in the
     * topic's history after, for one), and a poller may write that slot at once. Sequencer thread.
     */
    void endOfBatch() {
        seal();
        releasePassed(sealedThrough);
        wakePollers();
    }

    /**
     * Releases the frames and values of every slot that each poller with something in it has
     * passed, and forgets the sessions it was for. A poller writes retained duplicates and copies,
     * and reads a slot's frames and sessions no more once its sequence is past it; a poller with
     * nothing in a slot reads only which loops it is for ({@link FanOutEvent#isFor}, which stays
     * until the slot is reused), so a loop left asleep does not hold them. Left to the
     * slot's reuse, a frame would stay allocated a whole ring later: one publisher of 1 MB values
     * pinned 1 MB a publish, up to the ring's size times the value's (issue 29). A ring nobody
     * reads (tests of what goes on it) keeps its frames. Only slots up to {@code through}, which
     * the sequencer is done with ({@link #seal}). Sequencer thread.
     */
    private void releasePassed(long through) {
        if (pollers.length == 0) {
            return;
        }
        long cursor = ring.getCursor();
        long passed = Math.min(through, cursor);
        for (int i = 0; i < pollers.length; i++) {
            long read = pollers[i].passed();
            if (read < lastDueSlot[i]) {
                passed = Math.min(passed, read);
            }
        }
        // a slot a whole ring before the cursor holds a newer event now (released when claimed)
        long from = Math.max(releasedThrough + 1, cursor - ring.getBufferSize() + 1);
        for (long slot = from; slot <= passed; slot++) {
            bytes -= ring.get(slot).releaseBuffers();
        }
        releasedThrough = Math.max(releasedThrough, passed);
    }

    /** Tells a sequencer blocked on a full ring to give up: the server is stopping. Any thread. */
    void halt() {
        halted = true;
    }

    /** Releases every frame the ring's slots still hold. Only after the sequencer and every poller stopped. */
    void releaseAll() {
        for (int i = 0; i < ring.getBufferSize(); i++) {
            ring.get(i).recycle();
        }
    }
}
