package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.Transport;
import io.ringcast.server.config.Features;
import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.config.ServerConfig;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The node's real fan-out core (the {@link TopicSequencer}, the fan-out ring, one
 * {@link FanOutPoller} per reader thread, the encode-once frames) without sockets, for the
 * benchmark module. Each subscriber is a channel whose pipeline head releases what is written to
 * it, so what is measured is sequencing, encoding once, the ring and the per-subscriber
 * retained-duplicate writes, not the kernel.
 *
 * <p>The calling thread plays the sequencer thread: construct, {@link #publish} and
 * {@link #close} from one thread. Readers run on their own threads, as event loops do in a node.
 */
public final class FanOutHarness implements AutoCloseable {
    private final EventLoopGroup readers;
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final TopicSequencer sequencer;
    private final ServerCounters counters = new ServerCounters();
    private final InboundEvent event = new InboundEvent();
    private final String[] paths;
    private final String[][] segments;
    private final ByteBuf payload;
    private long valueCounter;
    private boolean closed;

    /**
     * @param subscribers  sessions, each subscribed to {@code #}, spread over the readers
     * @param readerThreads fan-out readers (event loops in a node)
     * @param topics       topics, created up front so runs measure the steady state
     * @param payloadBytes bytes of each update's value
     * @param ringSize     fan-out ring entries (a power of two)
     */
    public FanOutHarness(int subscribers, int readerThreads, int topics, int payloadBytes, int ringSize)
            throws InterruptedException {
        this(subscribers, readerThreads, topics, payloadBytes, ringSize, ServerConfig.defaults().features(), false);
    }

    /**
     * As above, with the toggles of {@code features} for every topic, and subscribers that
     * negotiated compression or not. Each update's value differs from the previous one in its first
     * 8 bytes (a counter), the rest being fixed JSON-like text, as a price tick does.
     */
    public FanOutHarness(int subscribers, int readerThreads, int topics, int payloadBytes, int ringSize,
                         Features features, boolean compressedSessions) throws InterruptedException {
        // the event loops a node's default (server.transport auto) gives: NIO's and the native transports'
        // task queues alike do not allocate per wake-up
        readers = Transport.AUTO.resolve("transport").newEventLoopGroup(readerThreads,
                new DefaultThreadFactory("fan-out-reader"));
        EventLoop[] loops = new EventLoop[readerThreads];
        int n = 0;
        for (EventExecutor e : readers) {
            loops[n++] = (EventLoop) e;
        }
        RingBuffer<FanOutEvent> ring = RingBuffer.createSingleProducer(FanOutEvent::new, ringSize);
        FanOutPoller[] pollers = new FanOutPoller[readerThreads];
        for (int i = 0; i < readerThreads; i++) {
            pollers[i] = new FanOutPoller(i, loops[i], ring, new OutboundLimit(Long.MAX_VALUE, 0, counters),
                    FlushPolicy.END_OF_BATCH, 0, counters);
        }
        sequencer = new TopicSequencer(new FanOutProxy(ring, pollers), PooledByteBufAllocator.DEFAULT,
                new TopicSequencer.SequencerLimits(8, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Integer.MAX_VALUE, 4096, 1024,
                        Integer.MAX_VALUE),
                new FeatureResolver(features, PathLimits.DEFAULT), counters, false);
        sequencer.onStart();

        Selector everything;
        try {
            everything = Selector.parse("#", PathLimits.DEFAULT);
        } catch (ProtocolException e) {
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < subscribers; i++) {
            EmbeddedChannel ch = new EmbeddedChannel(new Discard(), new ChannelInboundHandlerAdapter());
            channels.add(ch);
            Session s = new Session(i + 1, ch.pipeline().lastContext(), i % readerThreads, compressedSessions);
            s.permissions = Permissions.ALL;
            event.clear();
            event.kind = InboundEvent.SUBSCRIBE;
            event.session = s;
            event.id = 1;
            event.selector = everything;
            event.resume = Map.of();
            event.options = SubscribeOptions.NONE;
            sequencer.subscribeMemory().charge(s, SubscribeMemory.requestBytes(event.resume));
            sequencer.onEvent(event, 0, true);
        }

        paths = new String[topics];
        segments = new String[topics][];
        for (int t = 0; t < topics; t++) {
            paths[t] = "bench/t" + t;
            segments[t] = new String[]{"bench", "t" + t};
        }
        payload = PooledByteBufAllocator.DEFAULT.directBuffer(payloadBytes);
        byte[] text = "{\"symbol\":\"EURUSD\",\"bid\":1.08412,\"ask\":1.08415,\"venue\":\"XLON\"}"
                .getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < payloadBytes; i++) {
            payload.writeByte(text[i % text.length]);
        }
        for (int t = 0; t < topics; t++) {
            publish(t, true);
        }
        awaitDelivered((long) topics * subscribers + subscribers); // creations plus subscribe replies
    }

    /** Sequences, encodes and fans out one update of topic {@code topic} (0 .. topics-1). */
    public void publish(int topic, boolean endOfBatch) {
        event.kind = InboundEvent.PUBLISH;
        event.session = null;
        event.path = paths[topic];
        event.segments = segments[topic];
        if (payload.readableBytes() >= Long.BYTES) {
            payload.setLong(0, ++valueCounter); // the sequencer has copied the previous value by now
        }
        event.value = payload.retainedSlice();
        sequencer.onEvent(event, 0, endOfBatch);
    }

    /** Frames written to subscribers so far (updates and subscribe replies). */
    public long delivered() {
        return counters.deliveries();
    }

    /** Waits until {@code total} frames have been written to subscribers. */
    public void awaitDelivered(long total) {
        while (counters.deliveries() < total) {
            Thread.onSpinWait();
        }
    }

    /** Stops the readers and releases every buffer; a second call does nothing. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sequencer.halt();
        // uninterruptibly (the interrupt is kept): the buffers below must not be released under running readers
        readers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        sequencer.releaseAll();
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        payload.release();
    }

    /** The pipeline head of a benchmark subscriber: releases every write, flushes nothing. */
    private static final class Discard extends ChannelOutboundHandlerAdapter {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            // nothing leaves
        }
    }
}
