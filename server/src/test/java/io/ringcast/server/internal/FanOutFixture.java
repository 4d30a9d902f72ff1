package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.FlushPolicy;

import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The fan-out side of a node without sockets: a real fan-out ring, one real {@link FanOutPoller}
 * per loop index, and sessions on {@link EmbeddedChannel}s ({@link Peer}), fed as the
 * {@link TopicSequencer} feeds the ring ({@link #update}, {@link #directed}).
 *
 * <p>Each loop index is the {@code EmbeddedEventLoop} of a channel of its own: {@link #drain}
 * wakes that loop's poller and runs what the loop was given. Everything runs on the test thread,
 * which plays the sequencer and every event loop in turn.
 */
final class FanOutFixture implements AutoCloseable {
    static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    static final int RING_SIZE = 8192;
    /** A value that deflate shrinks to a fraction, for the compressed paths. */
    /** A frame of one {@code UPDATE} of {@code t} holding {@code value}: what the sequencer encodes, without it. */
    static ByteBuf updateFrame(Topic t, long sequence, String value) {
        ByteBuf payload = Unpooled.copiedBuffer(value, StandardCharsets.UTF_8);
        ByteBuf frame = OutboundFrame.allocate(ByteBufAllocator.DEFAULT, 64 + payload.readableBytes());
        WireCodec.writeUpdate(frame, t.alias, sequence, 0, payload, 0, payload.readableBytes());
        return OutboundFrame.finish(frame);
    }

    static final String COMPRESSIBLE_VALUE = "{\"bid\":1.08412,\"ask\":1.08415}".repeat(20);
    /** {@code limits.slowConsumerCloseGraceMs} of this fixture's {@link OutboundLimit}. */
    static final long SLOW_CONSUMER_GRACE_MS = 1_000;

    final ServerCounters counters = new ServerCounters();
    final RingBuffer<FanOutEvent> ring = RingBuffer.createSingleProducer(FanOutEvent::new, RING_SIZE);
    final FanOutPoller[] pollers;
    private final EmbeddedChannel[] loops;
    /** Each loop's clock as its poller reads it: it moves with the loop's frozen scheduler clock ({@link #advanceTime}). */
    private final long[] clockNanos;
    /** What each flush of a session on the loop costs, in the loop's time ({@link #eachFlushTakes}). */
    private final long[] flushCostNanos;
    /** What each write to a session of the loop costs, in the loop's time ({@link #eachWriteTakes}). */
    private final long[] writeCostNanos;
    private final List<Peer> peers = new ArrayList<>();
    private long nextSessionId = 1;

    /** {@code loops} pollers flushing at the end of each batch, with no outbound limit. */
    FanOutFixture(int loops) {
        this(loops, FlushPolicy.END_OF_BATCH, 0, Long.MAX_VALUE);
    }

    FanOutFixture(int loops, FlushPolicy flushPolicy, long flushMaxDelayNs, long outboundQueueBytes) {
        this.loops = new EmbeddedChannel[loops];
        this.pollers = new FanOutPoller[loops];
        this.clockNanos = new long[loops];
        this.flushCostNanos = new long[loops];
        this.writeCostNanos = new long[loops];
        OutboundLimit limit = new OutboundLimit(outboundQueueBytes, SLOW_CONSUMER_GRACE_MS, counters);
        for (int i = 0; i < loops; i++) {
            this.loops[i] = new EmbeddedChannel();
            this.loops[i].freezeTime(); // the poller's timers fire when a test advances the clock
            int loopIndex = i;
            pollers[i] = new FanOutPoller(i, this.loops[i].eventLoop(), ring, limit, flushPolicy, flushMaxDelayNs,
                    counters, () -> clockNanos[loopIndex]);
        }
    }

    // ------------------------------------------------------------------ sessions

    /** A session of loop {@code loopIndex} that did not negotiate compression. */
    Peer session(int loopIndex) {
        return session(loopIndex, false);
    }

    Peer session(int loopIndex, boolean compressed) {
        Peer peer = new Peer(nextSessionId++, loopIndex, compressed, pollers[loopIndex],
                () -> spend(loopIndex, flushCostNanos[loopIndex]), () -> spend(loopIndex, writeCostNanos[loopIndex]));
        peers.add(peer);
        return peer;
    }

    /** The time of a system call or a write passes, as the poller sees it; no timer runs meanwhile. */
    private void spend(int loopIndex, long cost) {
        if (cost > 0) {
            clockNanos[loopIndex] += cost;
            loops[loopIndex].advanceTimeBy(cost, TimeUnit.NANOSECONDS);
        }
    }

    /** A topic as the sequencer creates it (no subscribers of its own: each event carries its set). */
    Topic topic(int alias, String path) {
        return topic(alias, path, SubscriberSet.empty(loops.length));
    }

    /** The same, with {@code subscribers} to begin with (say, an empty set several audiences share). */
    Topic topic(int alias, String path, SubscriberSet subscribers) {
        return new Topic(alias, path, path.split("/"), subscribers, 4, new TopicFeatures(true, false, false, Conflation.OFF));
    }

    /** The subscriber set of exactly these peers' sessions. */
    SubscriberSet subscribers(Peer... members) {
        List<Session> sessions = new ArrayList<>();
        for (Peer p : members) {
            sessions.add(p.session);
        }
        return SubscriberSet.of(sessions, loops.length);
    }

    // ------------------------------------------------------------------ the sequencer's side

    /** Starts an {@code UPDATE} event of {@code topic} at {@code sequence}; {@link Update#publish} puts it on the ring. */
    Update update(Topic topic, long sequence, String value) {
        return new Update(topic, sequence, value);
    }

    /**
     * Puts a {@code DIRECTED} frame for {@code target} on the ring, its messages written by
     * {@code messages}, as the sequencer sends a subscribe reply. Returns the frame (the ring's reference).
     */
    ByteBuf directed(Peer target, Consumer<ByteBuf> messages) {
        ByteBuf frame = OutboundFrame.allocate(ALLOC, 64);
        messages.accept(frame);
        OutboundFrame.finish(frame);
        long slot = ring.next();
        FanOutEvent ev = claim(slot, frame);
        ev.directedTo(target.session);
        ring.publish(slot);
        return frame;
    }

    /** The slot's event, its previous use recycled as the sequencer does, holding {@code frame}. */
    private FanOutEvent claim(long slot, ByteBuf frame) {
        FanOutEvent ev = ring.get(slot);
        ev.recycle();
        ev.frame = frame;
        return ev;
    }

    /** One update as {@code TopicSequencer.publish} puts it on the fan-out ring. */
    final class Update {
        private final Topic topic;
        private final long sequence;
        private final String value;
        private SubscriberSet subscribers = SubscriberSet.empty(loops.length);
        private Conflation conflation = Conflation.OFF;
        private boolean compress;
        private boolean defineTopic;
        private String delta;
        private Peer publisher;
        private int correlationId;

        private Update(Topic topic, long sequence, String value) {
            this.topic = topic;
            this.sequence = sequence;
            this.value = value;
        }

        Update to(Peer... members) {
            subscribers = subscribers(members);
            return this;
        }

        Update to(SubscriberSet set) {
            subscribers = set;
            return this;
        }

        /** The topic's conflation policy; not off, the event carries the full value, as the sequencer's does. */
        Update conflation(Conflation policy) {
            conflation = policy;
            return this;
        }

        /** Also a compressed frame for sessions that negotiated permessage-deflate (a real {@link FrameCompressor}). */
        Update compressed() {
            compress = true;
            return this;
        }

        /** The frame starts with the topic's {@code TOPIC} message, as the first frame of a new topic does. */
        Update definingTopic() {
            defineTopic = true;
            return this;
        }

        /**
         * The frame holds {@code deltaPayload} flagged {@code DELTA} instead of the value, which the
         * event then carries separately whatever the conflation policy (as the sequencer does).
         */
        Update asDelta(String deltaPayload) {
            delta = deltaPayload;
            return this;
        }

        Update ackingTo(Peer publisher, int correlationId) {
            this.publisher = publisher;
            this.correlationId = correlationId;
            return this;
        }

        /** Encodes the frame once and publishes the event; returns the frame (the ring slot's reference). */
        ByteBuf publish() {
            ByteBuf valueBuf = ALLOC.buffer().writeBytes(value.getBytes(StandardCharsets.UTF_8));
            ByteBuf payload = delta == null ? valueBuf : ALLOC.buffer().writeBytes(delta.getBytes(StandardCharsets.UTF_8));
            int flags = delta == null ? 0 : UpdateFlags.DELTA;
            ByteBuf frame = OutboundFrame.allocate(ALLOC, 256 + payload.readableBytes());
            if (defineTopic) {
                WireCodec.writeTopic(frame, topic.alias, topic.path);
            }
            int valueIndex = frame.writerIndex() + WireCodec.UPDATE_OVERHEAD_BYTES;
            WireCodec.writeUpdate(frame, topic.alias, sequence, flags, payload,
                    payload.readerIndex(), payload.readableBytes());
            OutboundFrame.finish(frame);
            ByteBuf held;
            if (delta != null) {
                held = valueBuf; // the full value, copied, as for a delta frame
                payload.release();
            } else {
                held = conflation != Conflation.OFF ? frame.retainedSlice(valueIndex, valueBuf.readableBytes()) : null;
                valueBuf.release();
            }
            ByteBuf compressedFrame = null;
            if (compress) {
                FrameCompressor compressor = new FrameCompressor(6, 0);
                compressedFrame = compressor.compress(ALLOC, frame);
                compressor.close();
                if (compressedFrame == null) {
                    throw new IllegalArgumentException("value '" + value + "' does not compress; use a longer one");
                }
            }
            long slot = ring.next();
            FanOutEvent ev = claim(slot, frame);
            ev.updateFor(subscribers, publisher == null ? null : publisher.session);
            ev.compressedFrame = compressedFrame;
            ev.correlationId = correlationId;
            ev.sequence = sequence;
            ev.audience = topic;
            ev.conflation = conflation;
            ev.value = held;
            ring.publish(slot);
            return frame;
        }
    }

    /** The event most recently put on the ring (until the sequencer, that is the test, reuses its slot). */
    FanOutEvent lastEvent() {
        return ring.get(ring.getCursor());
    }

    // ------------------------------------------------------------------ the loops' side

    /** Wakes loop {@code loopIndex}'s poller and runs that loop's tasks: the poller drains all it can. */
    void drain(int loopIndex) {
        pollers[loopIndex].wake();
        loops[loopIndex].runPendingTasks();
    }

    void drainAll() {
        for (int i = 0; i < loops.length; i++) {
            drain(i);
        }
    }

    /** Runs the tasks loop {@code loopIndex} was given (such as a drain on writability), without waking its poller. */
    void runTasks(int loopIndex) {
        loops[loopIndex].runPendingTasks();
    }

    /** Whether loop {@code loopIndex} has a task queued (a poller that rescheduled itself). */
    boolean hasPendingTasks(int loopIndex) {
        return loops[loopIndex].hasPendingTasks();
    }

    /** From now on, each flush to a session of loop {@code loopIndex} moves that loop's clock on by {@code nanos}. */
    void eachFlushTakes(int loopIndex, long nanos) {
        flushCostNanos[loopIndex] = nanos;
    }

    /** From now on, each write to a session of loop {@code loopIndex} (a frame, before any flush) moves that loop's clock on by {@code nanos}. */
    void eachWriteTakes(int loopIndex, long nanos) {
        writeCostNanos[loopIndex] = nanos;
    }

    /** Moves loop {@code loopIndex}'s clock on and runs the timers that came due. */
    void advanceTime(int loopIndex, long nanos) {
        clockNanos[loopIndex] += nanos;
        loops[loopIndex].advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
        loops[loopIndex].runScheduledPendingTasks();
    }

    /** Releases the ring slots' references, as the sequencer does when it stops. */
    void releaseRing() {
        for (int i = 0; i < ring.getBufferSize(); i++) {
            ring.get(i).recycle();
        }
    }

    @Override
    public void close() {
        try {
            for (Peer p : peers) {
                p.session.releaseConflated();
                p.session.conflation = null;
                p.channel.finishAndReleaseAll();
            }
        } finally {
            releaseRing();
        }
        for (EmbeddedChannel loop : loops) {
            loop.finishAndReleaseAll();
        }
    }

    // ------------------------------------------------------------------ a session's far end

    /**
     * One session on an {@link EmbeddedChannel}, and the client at its far end. Its pipeline is a
     * {@link ReadGate} (counts the flushes the server asks for; while {@link #stopReading stalled},
     * keeps them from the channel, so written frames stay queued as on a socket nobody reads) and
     * the session's own context, which tells its poller when the channel becomes writable, as
     * {@link SessionHandler} does.
     */
    static final class Peer {
        final Session session;
        final EmbeddedChannel channel;
        private final ReadGate gate;

        private Peer(long id, int loopIndex, boolean compressed, FanOutPoller poller, Runnable onFlush,
                     Runnable onWrite) {
            gate = new ReadGate(onFlush, onWrite);
            Session[] self = new Session[1];
            channel = new EmbeddedChannel(gate, new ChannelInboundHandlerAdapter() {
                @Override
                public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
                    if (self[0] != null && ctx.channel().isWritable()) {
                        poller.onWritable(self[0]);
                    }
                    super.channelWritabilityChanged(ctx);
                }

                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
                    // writes on the void promise fail here once the channel is closed, as in SessionHandler
                    if (!(cause instanceof ClosedChannelException)) {
                        super.exceptionCaught(ctx, cause);
                    }
                }
            });
            channel.freezeTime();
            session = new Session(id, channel.pipeline().lastContext(), loopIndex, compressed);
            self[0] = session;
        }

        /** The client stops reading: flushes no longer take frames off the channel's outbound buffer. */
        Peer stopReading() {
            gate.stalled = true;
            return this;
        }

        /**
         * The client reads again: what was flushed but held leaves the outbound buffer (the channel
         * may become writable, which tells the poller).
         */
        Peer startReading() {
            gate.stalled = false;
            gate.ctx.flush();
            channel.runPendingTasks();
            return this;
        }

        /** The channel turns unwritable once more than {@code bytes} are queued, writable again below half. */
        Peer highWaterMark(int bytes) {
            channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(bytes / 2, bytes));
            return this;
        }

        /** Flushes the server asked for on this channel so far, whether or not the client read them. */
        int flushes() {
            return gate.flushes;
        }

        /** Bytes queued on the channel and not taken by the client, as {@link OutboundLimit} measures them. */
        long pendingBytes() {
            return session.pendingOutboundBytes();
        }

        /** The frames the client received since the last read, decoded, every buffer released. */
        List<ReceivedFrames.Frame> frames() {
            return ReceivedFrames.readAll(channel);
        }

        /** The messages the client received since the last read, in order, across frames. */
        List<String> messages() {
            List<String> out = new ArrayList<>();
            for (ReceivedFrames.Frame f : frames()) {
                out.addAll(f.messages());
            }
            return out;
        }

        /** The client closes the connection. */
        void disconnect() {
            channel.close();
            channel.runPendingTasks();
        }

        /** Moves this channel's clock on and runs its due timers (such as the slow consumer's close). */
        void advanceTime(long millis) {
            channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
            channel.runScheduledPendingTasks();
        }
    }

    /** Counts flushes and, while stalled, swallows them: the frames stay in the outbound buffer. */
    static final class ReadGate extends ChannelOutboundHandlerAdapter {
        private final Runnable onFlush;
        private final Runnable onWrite;
        boolean stalled;
        int flushes;
        ChannelHandlerContext ctx;

        ReadGate(Runnable onFlush, Runnable onWrite) {
            this.onFlush = onFlush;
            this.onWrite = onWrite;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            onWrite.run();
            ctx.write(msg, promise);
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            onFlush.run();
            if (!stalled) {
                ctx.flush();
            }
        }
    }
}
