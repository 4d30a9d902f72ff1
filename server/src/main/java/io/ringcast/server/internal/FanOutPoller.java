package io.ringcast.server.internal;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.FlushPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One reader of the fan-out ring per Netty event loop, running <em>on</em> that loop, with its own
 * sequence gating the ring. Woken by the sequencer, it drains what is available (bounded, so
 * socket I/O on the loop is not starved), writes a retained duplicate of each shared frame to every
 * session of its loop that is subscribed, and acks publishers of its loop (with their update, or,
 * in a cluster, from an ack of its own after the update). No lock, no copy, no
 * allocation per subscriber beyond Netty's pooled duplicate.
 *
 * <p><b>Smart batching.</b> Consecutive updates of one drained batch that go to the same sessions
 * (the same {@link SubscriberSet} instance: {@link SubscriberSets} keeps one per distinct set) form
 * a <em>run</em>: their messages are copied once into one gathered frame, of at most
 * {@link OutboundFrame#GATHERED_PAYLOAD_BYTES}, which every session of the run gets as one write and
 * one WebSocket frame. At low load a batch holds one update and its own frame goes out as it is, so
 * latency does not rise; as load rises, batches grow and the cost per update falls. A session that
 * needs each update apart (a compressed frame of its own, or updates held by conflation) gets them
 * one by one, in the same order. Anything else on the ring (a directed frame, an ack, a conflated
 * topic's update) ends the run first, so every session's order is the ring's.
 *
 * <p><b>Streamed subscribe replies.</b> The last frame of each window of a streamed reply
 * ({@link Subscriptions}) is written with a listener that asks the sequencer for the next window
 * once the socket took it. Updates of topics a session joined while its reply streams (held members
 * of their {@link SubscriberSet}), and its acks and refusals behind them, are kept for it and
 * written right after the reply's {@code SUBSCRIBED}, so that a client sees nothing of a new
 * subscription's topics between its {@code SUBSCRIBE} and {@code SUBSCRIBED}, as when the reply is
 * sent at once.
 *
 * <p>When it flushes is the {@link FlushPolicy}: after every write, or once per session at the end
 * of each drained batch. With {@link FlushPolicy#MAX_DELAY} it also paces its drains:
 * a drain that would follow the previous one within {@code flushMaxDelayNs} waits, on a timer, for
 * the rest of that time, so under load each drain gathers that long's updates into one frame and
 * one system call per session, while an update after a quiet spell goes out at once. A waiting
 * poller keeps {@link #scheduled} set, so the sequencer does not wake its loop meanwhile. With
 * {@link FlushPolicy#ADAPTIVE} (the default) that time is {@link #ADAPTIVE_INTERVAL_PER_FLUSH} times
 * what the last drain's flushes took, up to {@code flushMaxDelayNs}: the loop spends at most about
 * half its time in the system calls that write to its sessions' sockets, the part of a drain's
 * cost that gathering saves, and the rest gathers updates for the next drain. A quiet loop's flushes
 * take microseconds, so its updates go out at once; a loaded one's take longer (more sessions to
 * write to), so it waits longer and writes more updates per frame and per system call. Timed on the
 * flushes, not the whole drain: a drain's handling of each update grows with the updates gathered,
 * so a wait proportional to it grew its next drain and its next wait, up to the ceiling
 * (docs/benchmarks.md: p99 12 to 51 ms at 100 subscribers x 10,000/s); a flush costs mostly
 * its system call, whatever it carries.
 */
final class FanOutPoller implements Runnable, EventPoller.Handler<FanOutEvent> {
    private static final Logger log = LoggerFactory.getLogger(FanOutPoller.class);
    /** Events handled per run before yielding the loop to socket I/O. */
    private static final int MAX_EVENTS_PER_RUN = 4096;
    /**
     * With {@link FlushPolicy#ADAPTIVE}: the least time from one drain's start to the next, as a
     * multiple of how long the last drain's flushes took: 2 keeps the loop in those system calls at
     * most half its time. A larger multiple gathers more and costs latency: at 100 subscribers x
     * 5,000 updates/s, 2, 4 and 8 took 1.6, 1.2 and 0.9 µs of server CPU per delivery at p99 5, 6-9
     * and 10 ms, end-of-batch 1.8 µs at 5-6 ms (docs/benchmarks.md); 2 is the one that costs no latency.
     */
    static final int ADAPTIVE_INTERVAL_PER_FLUSH = 2;
    /**
     * With {@link FlushPolicy#ADAPTIVE}: a wait shorter than this is not worth a timer (its wake-up
     * costs more than it saves); the drain runs at once.
     */
    static final long ADAPTIVE_MIN_WAIT_NS = 20_000;

    final int loopIndex;
    private final EventLoop loop;
    private final RingBuffer<FanOutEvent> ring;
    private final EventPoller<FanOutEvent> poller;
    private final OutboundLimit outboundLimit;
    private final ServerCounters counters;
    private final FlushPolicy flushPolicy;
    private final long flushMaxDelayNs;
    private final LongSupplier nanoClock;
    /** With {@link FlushPolicy#MAX_DELAY} or {@link FlushPolicy#ADAPTIVE}: when the last drain started. */
    private long lastDrainNs;
    /** How long the last drain's flushes took: {@link FlushPolicy#ADAPTIVE}'s measure of the load. */
    private long lastFlushesTookNs;
    /** The next run drains without pacing: it is the paced one, or it continues a drain cut by the budget. */
    private boolean drainAtOnce;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final ArrayList<Session> dirty = new ArrayList<>();
    /** Sessions of this loop with updates held back by conflation. */
    private final ArrayList<Session> draining = new ArrayList<>();
    private int budget;
    private long deliveriesInRun;
    private long bytesInRun;
    private long framesInRun;
    /**
     * The open run's subscribers, or null. Its updates are the events between ring sequences
     * {@link #runFirst} and {@link #runLast} (all still in this poll) that carry this set: the
     * others between them had nothing for this loop.
     */
    private SubscriberSet runSubscribers;
    private long runFirst;
    private long runLast;
    private int runUpdates;
    private int runPayloadBytes;
    /** Whether an update of the open run has a compressed frame: compressed sessions then take them one by one. */
    private boolean runCompressed;

    FanOutPoller(int loopIndex, EventLoop loop, RingBuffer<FanOutEvent> ring, OutboundLimit outboundLimit,
                 FlushPolicy flushPolicy, long flushMaxDelayNs, ServerCounters counters) {
        this(loopIndex, loop, ring, outboundLimit, flushPolicy, flushMaxDelayNs, counters, System::nanoTime);
    }

    /** @param nanoClock the time {@link FlushPolicy#MAX_DELAY} paces drains by: the loop's scheduler's clock */
    FanOutPoller(int loopIndex, EventLoop loop, RingBuffer<FanOutEvent> ring, OutboundLimit outboundLimit,
                 FlushPolicy flushPolicy, long flushMaxDelayNs, ServerCounters counters, LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.loopIndex = loopIndex;
        this.loop = loop;
        this.ring = ring;
        this.poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
        this.outboundLimit = outboundLimit;
        this.counters = counters;
        this.flushPolicy = flushPolicy;
        this.flushMaxDelayNs = flushMaxDelayNs;
        this.lastDrainNs = nanoClock.getAsLong() - flushMaxDelayNs; // the first drain goes at once
    }

    /** The last slot of the ring this poller is done with: it reads none up to it again. Any thread. */
    long passed() {
        return poller.getSequence().get();
    }

    /** Schedules a drain on the loop unless one is pending. Any thread; cheap when already scheduled. */
    void wake() {
        if (!scheduled.get() && scheduled.compareAndSet(false, true)) {
            loop.execute(this);
        }
    }

    @Override
    public void run() {
        assert loop.inEventLoop();
        if (paced()) {
            return;
        }
        scheduled.set(false); // before draining: an event published from now on wakes us again
        VarHandle.fullFence(); // the flag's store before the cursor's load: see FanOutProxy.wakePollers
        budget = MAX_EVENTS_PER_RUN;
        try {
            poller.poll(this);
        } catch (Throwable e) {
            runSubscribers = null; // its slots are no longer ours once poll returned
            FatalErrors.haltIfFatal(e, "fan-out poller " + loopIndex);
            log.error("fan-out poller {} failed", loopIndex, e);
        }
        try {
            if (!draining.isEmpty()) {
                drainConflated();
            }
            long flushStart = nanoClock.getAsLong();
            flushDirty(); // empty with IMMEDIATE
            lastFlushesTookNs = nanoClock.getAsLong() - flushStart; // read by ADAPTIVE alone; two clock reads a run
        } finally {
            if (deliveriesInRun != 0) {
                counters.deliveries.add(deliveriesInRun);
                counters.deliveredBytes.add(bytesInRun);
                counters.deliveredFrames.add(framesInRun);
                deliveriesInRun = 0;
                bytesInRun = 0;
                framesInRun = 0;
            }
            if (budget <= 0) {
                drainAtOnce = true;
                wake(); // more may be waiting; continue after the loop's pending I/O
            }
        }
    }

    private void flushDirty() {
        // size() each time: a flush can make a channel writable, and the drain that triggers can
        // mark a session dirty again while we iterate
        for (int i = 0; i < dirty.size(); i++) {
            Session s = dirty.get(i);
            s.dirty = false;
            s.ctx.flush();
        }
        dirty.clear();
    }

    /**
     * With {@link FlushPolicy#MAX_DELAY} or {@link FlushPolicy#ADAPTIVE}, whether this run waits:
     * when the previous drain started less than {@link #leastIntervalNs} ago, it runs again, at once,
     * when that time is up. Otherwise notes the start of the drain about to run.
     */
    private boolean paced() {
        if (flushPolicy != FlushPolicy.MAX_DELAY && flushPolicy != FlushPolicy.ADAPTIVE) {
            return false;
        }
        long now = nanoClock.getAsLong();
        if (!drainAtOnce) {
            long waitNs = lastDrainNs + leastIntervalNs() - now;
            if (waitNs > (flushPolicy == FlushPolicy.ADAPTIVE ? ADAPTIVE_MIN_WAIT_NS : 0)) {
                drainAtOnce = true;
                loop.schedule(this, waitNs, TimeUnit.NANOSECONDS);
                return true;
            }
        }
        drainAtOnce = false;
        lastDrainNs = now;
        return false;
    }

    /** The least time from one drain's start to the next: the policy's delay, or what the load asks for. */
    private long leastIntervalNs() {
        return flushPolicy == FlushPolicy.MAX_DELAY ? flushMaxDelayNs
                : Math.min(flushMaxDelayNs, lastFlushesTookNs * ADAPTIVE_INTERVAL_PER_FLUSH);
    }

    @Override
    public boolean onEvent(FanOutEvent ev, long sequence, boolean endOfBatch) {
        if (nothingForThisLoop(ev)) {
            return endOfBatchOrBudget(endOfBatch); // the open run goes on
        }
        boolean batchable = ev.kind == FanOutEvent.UPDATE && ev.conflation == Conflation.OFF
                && !ev.subscribers.forLoop(loopIndex).isEmpty();
        int payloadBytes = batchable ? OutboundFrame.payloadBytes(ev.frame) : 0;
        if (runSubscribers != null && !(batchable && ev.subscribers == runSubscribers
                && runPayloadBytes + payloadBytes <= OutboundFrame.GATHERED_PAYLOAD_BYTES)) {
            closeRun();
        }
        if (batchable) {
            if (runSubscribers == null) {
                runSubscribers = ev.subscribers;
                runFirst = sequence;
                runUpdates = 0;
                runPayloadBytes = 0;
                runCompressed = false;
            }
            runLast = sequence;
            runUpdates++;
            runPayloadBytes += payloadBytes;
            runCompressed |= ev.compressedFrame != null;
        } else if (ev.kind == FanOutEvent.UPDATE) {
            for (Session[] chunk : ev.subscribers.forLoop(loopIndex).chunks()) {
                for (Session s : chunk) {
                    if (ev.subscribers.holds(s)) {
                        holdForReply(s, ev.frameFor(s.compressed), 1);
                    } else {
                        deliverOrHold(s, ev);
                    }
                }
            }
            observeAndAck(ev);
        } else if (ev.kind == FanOutEvent.ACK) {
            ackIfOfThisLoop(ev);
        } else if (ev.heldForTarget) { // directed to a session of this loop (nothingForThisLoop)
            holdDirected(ev.target, ev.takeDirectedFrame());
        } else if (ev.replyWindowBytes > 0) {
            deliverReplyWindowEnd(ev, ev.takeDirectedFrame());
        } else {
            Session target = ev.target;
            deliverDirected(target, ev.takeDirectedFrame(), target.ctx.voidPromise());
        }
        return endOfBatchOrBudget(endOfBatch);
    }

    /**
     * An event that writes nothing on this loop: an update for none of its sessions and no publisher
     * of it, an ack or a reply for another loop's session. Such a slot's sessions may be forgotten
     * meanwhile ({@link FanOutEvent#releaseBuffers}): only the loops it is for are read.
     */
    private boolean nothingForThisLoop(FanOutEvent ev) {
        return !ev.isFor(loopIndex);
    }

    /** Counts the event against the budget; at the end of the drain, writes the open run. Whether to go on. */
    private boolean endOfBatchOrBudget(boolean endOfBatch) {
        boolean more = --budget > 0;
        if (endOfBatch || !more) {
            closeRun(); // the slots are the ring's again once poll returns
        }
        return more;
    }

    /**
     * Writes the open run: one frame to each session, gathered when the run holds several updates,
     * or each update on its own to a session that needs them apart; then the run's acks, after their updates.
     */
    private void closeRun() {
        SubscriberSet set = runSubscribers;
        if (set == null) {
            return;
        }
        runSubscribers = null;
        ChunkedSessions sessions = set.forLoop(loopIndex);
        ByteBuf gathered = runUpdates == 1 ? null : gatheredFrame(set, sessions.first().ctx.alloc());
        ByteBuf frame = gathered != null ? gathered : ring.get(runFirst).frame;
        try {
            for (Session[] chunk : sessions.chunks()) {
                for (Session s : chunk) {
                    boolean heldForReply = set.holds(s);
                    if (s.compressed && runCompressed
                            || !heldForReply && s.conflation != null && !s.conflation.isEmpty()) {
                        for (long q = runFirst; q <= runLast; q++) {
                            FanOutEvent ev = ring.get(q);
                            if (ev.subscribers != set) {
                                continue;
                            }
                            if (heldForReply) {
                                holdForReply(s, ev.frameFor(s.compressed), 1);
                            } else {
                                deliverOrHold(s, ev);
                            }
                        }
                    } else if (heldForReply) {
                        holdForReply(s, frame, runUpdates);
                    } else {
                        deliver(s, frame, runUpdates);
                    }
                }
            }
        } finally {
            if (gathered != null) {
                gathered.release();
            }
        }
        for (long q = runFirst; q <= runLast; q++) {
            FanOutEvent ev = ring.get(q);
            if (ev.subscribers == set) {
                observeAndAck(ev);
            }
        }
    }

    /** One frame holding the messages of every update of the open run, in order; one reference. */
    private ByteBuf gatheredFrame(SubscriberSet set, ByteBufAllocator alloc) {
        ByteBuf gathered = OutboundFrame.allocate(alloc, runPayloadBytes);
        for (long q = runFirst; q <= runLast; q++) {
            FanOutEvent ev = ring.get(q);
            if (ev.subscribers == set) {
                OutboundFrame.appendPayload(gathered, ev.frame);
            }
        }
        return OutboundFrame.finish(gathered);
    }

    /** After an update's writes: the latency from its publish (when it went to anyone here) and its ack. */
    private void observeAndAck(FanOutEvent ev) {
        if (ev.receivedNanos != 0 && !ev.subscribers.forLoop(loopIndex).isEmpty()) {
            counters.publishToWrite.observe((System.nanoTime() - ev.receivedNanos) / 1e9);
        }
        ackIfOfThisLoop(ev);
    }

    /**
     * One update to one session: held back when the session must conflate it, else its own frame
     * (the compressed one for a session that negotiated compression, where there is one).
     */
    private void deliverOrHold(Session s, FanOutEvent ev) {
        if (!s.acceptsWrites()) {
            return;
        }
        if (s.mustConflate(ev.conflation, ev.audience)) {
            if (ev.value != null) {
                if (s.conflation == null) {
                    s.conflation = new ConflationBuffer();
                }
                if (s.conflation.put(ev, s.compressed)) {
                    counters.conflatedUpdates.increment();
                }
                if (!s.draining) {
                    s.draining = true;
                    draining.add(s);
                }
                return;
            }
            // the event carries no separate value when its frame holds the full value (conflation was
            // reloaded off while this session held an update of the topic), or no value at all (a
            // view's UNMATCHED, a definition): either supersedes what is held of the stream
            if (s.conflation != null) {
                s.conflation.discard(ev.audience);
            }
        }
        deliver(s, ev.frameFor(s.compressed), 1);
    }

    /** Writes held updates of every session of this loop that can take them now. */
    private void drainConflated() {
        for (int i = draining.size() - 1; i >= 0; i--) {
            Session s = draining.get(i);
            if (!s.acceptsWrites()) {
                s.releaseConflated();
            } else if (s.channel.isWritable()) {
                drain(s);
            }
            if (s.conflation.isEmpty()) {
                s.draining = false;
                draining.set(i, draining.get(draining.size() - 1));
                draining.remove(draining.size() - 1);
            }
        }
    }

    /**
     * {@code s}'s channel became writable again ({@link SessionHandler}): sends what it holds. Its
     * loop only. Netty reports writability from inside a flush, possibly our own flush loop, so the
     * drain runs as a task of its own rather than in the middle of that loop.
     */
    void onWritable(Session s) {
        assert loop.inEventLoop();
        if (s.conflation != null && !s.conflation.isEmpty()) {
            loop.execute(() -> {
                drain(s);
                flushDirty();
            });
        }
    }

    /** Writes what {@code s} holds while its channel is writable. */
    private void drain(Session s) {
        if (s.conflation == null || !s.acceptsWrites()) {
            return;
        }
        int written = s.conflation.drainTo(s);
        if (written > 0) {
            deliveriesInRun += written;
            framesInRun += written;
            bytesInRun += s.conflation.drainedBytes();
            markDirty(s);
        }
    }

    /**
     * The last frame of a window of a streamed subscribe reply: written with a listener (one per
     * window) that takes the window off {@link ServerCounters#subscribeReplyWindowBytes} once the
     * socket took it, and asks the sequencer for the next window when the reply goes on. A session
     * that takes no more writes asks for nothing: its close drops the reply.
     */
    private void deliverReplyWindowEnd(FanOutEvent ev, ByteBuf frame) {
        Session s = ev.target;
        if (!s.acceptsWrites()) {
            frame.release();
            counters.replyWindowWritten(ev.replyWindowBytes);
            s.releaseHeldForReply();
            return;
        }
        ChannelPromise written = s.ctx.newPromise();
        written.addListener(new ReplyWindowWritten(s, ev.replyWindowBytes, ev.replyContinues, counters));
        deliverDirected(s, frame, written);
        if (ev.replyEndsHolding) {
            writeHeldForReply(s);
        }
    }

    /** A directed frame kept for {@code s}'s streamed reply ({@link #holdForReply}); takes over {@code frame}. */
    private void holdDirected(Session s, ByteBuf frame) {
        if (!s.acceptsWrites()) {
            frame.release();
            return;
        }
        s.holdForReply(frame);
        outboundLimit.closeIfOver(s, s.heldForReplyBytes);
    }

    /**
     * Keeps {@code frame} (a retained duplicate of it) for {@code s} until its streamed reply's
     * {@code SUBSCRIBED} is written: an update of a topic it joined while the reply streams, or an
     * ack or refusal behind one. It counts against {@code limits.outboundQueueBytes} as if queued.
     */
    private void holdForReply(Session s, ByteBuf frame, int updates) {
        if (!s.acceptsWrites()) {
            return;
        }
        s.holdForReply(frame.retainedDuplicate());
        deliveriesInRun += updates;
        framesInRun++;
        bytesInRun += frame.readableBytes();
        outboundLimit.closeIfOver(s, s.heldForReplyBytes);
    }

    /** Writes what {@link #holdForReply} kept for {@code s}, in order: its reply's {@code SUBSCRIBED} was just written. */
    private void writeHeldForReply(Session s) {
        ArrayDeque<ByteBuf> held = s.heldForReply;
        if (held == null) {
            return;
        }
        s.heldForReply = null;
        s.heldForReplyBytes = 0;
        for (ByteBuf frame; (frame = held.poll()) != null; ) {
            if (s.acceptsWrites()) {
                s.ctx.write(frame, s.ctx.voidPromise());
            } else {
                frame.release();
            }
        }
        markDirty(s);
        outboundLimit.closeIfOver(s);
    }

    /** Takes a written window off the gauge, and asks for the next one. The session's event loop. */
    private record ReplyWindowWritten(Session session, int bytes, boolean continues, ServerCounters counters)
            implements ChannelFutureListener {
        @Override
        public void operationComplete(ChannelFuture future) {
            counters.replyWindowWritten(bytes);
            if (continues && future.isSuccess() && session.acceptsWrites()) {
                session.continueReplies.run();
            }
        }
    }

    /** Writes {@code frame}, shared, holding {@code updates} updates, to {@code s}. */
    private void deliver(Session s, ByteBuf frame, int updates) {
        if (!s.acceptsWrites()) {
            return;
        }
        s.writeShared(frame, s.ctx.voidPromise());
        wrote(s, frame.readableBytes(), updates);
    }

    /** Writes a directed frame (one reply) to {@code s}, taking over its reference. */
    private void deliverDirected(Session s, ByteBuf frame, ChannelPromise promise) {
        if (!s.acceptsWrites()) {
            frame.release();
            return;
        }
        int bytes = frame.readableBytes();
        s.ctx.write(frame, promise);
        wrote(s, bytes, 1);
    }

    /** Counts a write of {@code bytes} holding {@code updates} updates (or one reply), and checks the session's queue. */
    private void wrote(Session s, int bytes, int updates) {
        deliveriesInRun += updates;
        framesInRun++;
        bytesInRun += bytes;
        markDirty(s);
        outboundLimit.closeIfOver(s);
    }

    /** Acks the event's publisher, if any, when it is a session of this loop still open (a closed one is skipped). */
    private void ackIfOfThisLoop(FanOutEvent ev) {
        Session publisher = ev.publisher;
        if (publisher != null && publisher.loopIndex == loopIndex && publisher.acceptsWrites()) {
            ack(publisher, ev.correlationId, ev.sequence);
        }
    }

    private void ack(Session publisher, int correlationId, long sequence) {
        ByteBuf frame = OutboundFrame.allocate(publisher.ctx.alloc(), WireCodec.PUBLISH_ACK_BYTES);
        WireCodec.writePublishAck(frame, correlationId, sequence);
        if (publisher.heldForReply != null) {
            // behind an update held for the publisher's streamed reply, or a held ack: acks keep their order
            publisher.holdForReply(OutboundFrame.finish(frame));
            outboundLimit.closeIfOver(publisher, publisher.heldForReplyBytes);
            return;
        }
        publisher.ctx.write(OutboundFrame.finish(frame), publisher.ctx.voidPromise());
        markDirty(publisher);
        outboundLimit.closeIfOver(publisher); // a publisher that reads no acks is a slow consumer too
    }

    private void markDirty(Session s) {
        if (flushPolicy == FlushPolicy.IMMEDIATE) {
            s.ctx.flush();
            return;
        }
        if (!s.dirty) {
            s.dirty = true;
            dirty.add(s);
        }
    }
}
