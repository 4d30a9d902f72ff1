package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.TopicPath;
import io.ringcast.server.internal.ReceivedFrames.Received;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.config.ServerConfig;
import io.ringcast.testkit.Await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The node's core without sockets or threads: a real {@link TopicSequencer}, fan-out ring and one
 * {@link FanOutPoller} per "loop", with sessions on {@link EmbeddedChannel}s. The test thread plays
 * every thread: it hands the sequencer its commands, then {@link #deliver}s, which runs each
 * poller on its loop (an embedded loop runs its tasks when asked), so what each session received
 * can be read back with {@link #received}.
 */
final class EmbeddedNode implements AutoCloseable {
    static final int LOOPS = 2;

    final ServerCounters counters = new ServerCounters();
    /** The sequencer's heap guard, of a 100-MB heap refusing past 80%: not listening, a test tells it of collections. */
    final HeapGuard heap = new HeapGuard(100L << 20, 80, counters);
    final TopicSequencer sequencer;
    private final EmbeddedChannel[] loopChannels = new EmbeddedChannel[LOOPS];
    private final List<EmbeddedChannel> sessionChannels = new ArrayList<>();
    private final InboundEvent event = new InboundEvent();
    /** Sessions whose streamed reply's last window was written: they asked for the next, in order. */
    private final List<Session> continuing = new ArrayList<>();
    private final ServerConfig config;
    /** How many saved topics a {@link #restoring} node took over. */
    final int restoredTopics;
    /** The {@link #inbound} ring, once asked for, and how far the test thread has run it. */
    private RingBuffer<InboundEvent> inboundRing;
    private final Sequence inboundConsumed = new Sequence();
    /** The node's views, as a session's subscribe takes them ({@link #view}). */
    final Views views;
    /** What the sessions' subscribe requests keep, charged as an event loop charges it ({@link #subscribe}). */
    final SubscribeMemory subscribeMemory;
    /** The sequencer's clock, moved by the test ({@link #advanceNanos}). */
    private long nowNanos = 1_000_000_000L;
    /** The times the sequencer asked to be told held views may be due ({@link HeldViewsTimer#arm}), in order. */
    final List<Long> heldDeadlines = new ArrayList<>();
    /** {@code REPLY_TURN} commands the sequencer asked for and {@link #continueReplies} has not run yet. */
    private int replyTurnsAsked;
    /** {@link #startBatch}: the commands run are not the end of a batch. */
    private boolean batching;

    EmbeddedNode() {
        this("{}");
    }

    /** A node on the embedded defaults overridden by {@code yaml} (features, limits, history). */
    EmbeddedNode(String yaml) {
        this(yaml, false);
    }

    EmbeddedNode(String yaml, boolean clusterMode) {
        this(yaml, clusterMode, null, ByteBufAllocator.DEFAULT);
    }

    /** A node whose sequencer allocates its frames from {@code allocator} (a {@link TrackingAllocator}, say). */
    static EmbeddedNode allocatingFrom(String yaml, ByteBufAllocator allocator) {
        return new EmbeddedNode(yaml, false, null, allocator);
    }

    /**
     * A node that first takes over the {@code saved} topics, as a node does at start before its
     * sequencer thread runs ({@link TopicSequencer#restore}); {@link #restoredTopics} says how many.
     */
    static EmbeddedNode restoring(String yaml, List<TopicStateFile.SavedTopic> saved) {
        return new EmbeddedNode(yaml, false, saved, ByteBufAllocator.DEFAULT);
    }

    /**
     * A node whose sequencer thread ran {@code commands} and ended, as at a graceful stop, so that
     * it may {@link #save}. Only delivering and reading what sessions received may follow.
     */
    static EmbeddedNode stoppedAfter(String yaml, Consumer<EmbeddedNode> commands) throws InterruptedException {
        EmbeddedNode[] node = new EmbeddedNode[1];
        Throwable[] failure = new Throwable[1];
        Thread sequencerThread = new Thread(() -> {
            try {
                node[0] = new EmbeddedNode(yaml);
                commands.accept(node[0]);
            } catch (Throwable t) {
                failure[0] = t;
            }
        }, "embedded-sequencer");
        sequencerThread.start();
        sequencerThread.join();
        if (failure[0] != null) {
            if (node[0] != null) {
                node[0].close();
            }
            throw new AssertionError("the commands failed on the sequencer thread", failure[0]);
        }
        return node[0];
    }

    private EmbeddedNode(String yaml, boolean clusterMode, List<TopicStateFile.SavedTopic> saved,
                         ByteBufAllocator allocator) {
        config = ConfigLoader.fromYaml(yaml);
        RingBuffer<FanOutEvent> ring = RingBuffer.createSingleProducer(FanOutEvent::new, 1024);
        FanOutPoller[] pollers = new FanOutPoller[LOOPS];
        OutboundLimit limit = new OutboundLimit(config.limits().outboundQueueBytes(),
                config.limits().slowConsumerCloseGraceMs(), counters);
        for (int i = 0; i < LOOPS; i++) {
            loopChannels[i] = new EmbeddedChannel();
            pollers[i] = new FanOutPoller(i, loopChannels[i].eventLoop(), ring, limit,
                    FlushPolicy.END_OF_BATCH, 0, counters);
        }
        views = new Views(config.limits().maxViews(), config.limits().maxViewsPerPrincipal());
        subscribeMemory = new SubscribeMemory(config.limits().subscribeBytesPerSession(),
                config.limits().subscribeBytesPerPrincipal());
        sequencer = new TopicSequencer(new FanOutProxy(ring, pollers), allocator,
                TopicSequencer.SequencerLimits.of(config),
                new FeatureResolver(config.features(), config.limits().pathLimits()), counters, clusterMode, views,
                subscribeMemory, () -> nowNanos, deadline -> heldDeadlines.add(deadline), () -> {
                    replyTurnsAsked++;
                    return true;
                }, heap);
        restoredTopics = saved == null ? 0 : sequencer.restore(saved, config.limits().pathLimits());
        sequencer.onStart();
    }

    /** Saves every topic to {@code file}, as a node does at a graceful stop: see {@link #stoppedAfter}. */
    int save(Path file) throws IOException {
        return sequencer.save(file);
    }

    ServerConfig config() {
        return config;
    }

    /** A welcomed session on {@code loop} that may read and publish everything. */
    Session session(int loop) {
        return session(loop, false);
    }

    Session session(int loop, boolean compressed) {
        Session s = session(sessionChannels, loop, compressed);
        s.continueReplies = () -> continuing.add(s);
        return s;
    }

    /**
     * A welcomed session that may read and publish everything, owned by loop {@code loop}, on a new
     * channel added to {@code channels}, whose owner finishes them.
     */
    static Session session(List<EmbeddedChannel> channels, int loop, boolean compressed) {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        channels.add(ch);
        Session s = new Session(channels.size(), ch.pipeline().firstContext(), loop, compressed);
        s.permissions = Permissions.ALL;
        s.welcomed = true;
        return s;
    }

    /** Publishes {@code value} to {@code path} as {@code publisher} (null: no publisher to ack). */
    void publish(Session publisher, int correlationId, String path, String value) {
        InboundEvent e = command(InboundEvent.PUBLISH, publisher, correlationId);
        e.path = path;
        e.segments = segments(path);
        e.value = Unpooled.copiedBuffer(value, StandardCharsets.UTF_8);
        run(e);
    }

    /** A {@code REPUBLISH}: applied unless the publisher's ledger knows it. */
    void republish(Session publisher, int correlationId, String path, String value) {
        republish(publisher, correlationId, path, value, false);
    }

    /** A {@code REPUBLISH} past {@code limits.publishRatePerSession}: the ledger answers it, it is not applied. */
    void republishOverRate(Session publisher, int correlationId, String path, String value) {
        republish(publisher, correlationId, path, value, true);
    }

    private void republish(Session publisher, int correlationId, String path, String value, boolean overRate) {
        InboundEvent e = command(InboundEvent.PUBLISH, publisher, correlationId);
        e.republish = true;
        e.overRate = overRate;
        e.path = path;
        e.segments = segments(path);
        e.value = Unpooled.copiedBuffer(value, StandardCharsets.UTF_8);
        run(e);
    }

    /** A cluster node applying update {@code sequence} its partition's owner gave. */
    void apply(String path, long sequence, String value) {
        InboundEvent e = command(InboundEvent.PUBLISH, null, 0);
        e.fixedSequence = sequence;
        e.path = path;
        e.segments = segments(path);
        e.value = Unpooled.copiedBuffer(value, StandardCharsets.UTF_8);
        run(e);
    }

    /** A cluster node acking a publish of {@code publisher} that the log applied with {@code sequence}. */
    void clusterAck(Session publisher, int correlationId, long sequence) {
        command(InboundEvent.CLUSTER_ACK, publisher, correlationId).fixedSequence = sequence;
        run(event);
    }

    void subscribe(Session session, int subscriptionId, String selector) {
        subscribe(session, subscriptionId, selector, Map.of());
    }

    void subscribe(Session session, int subscriptionId, String selector, Map<String, Long> resume) {
        subscribe(session, subscriptionId, selector, resume, null, SubscribeOptions.NONE);
    }

    /** One use of the view of {@code options}, as a session's {@code SUBSCRIBE} takes it on its I/O thread. */
    View view(SubscribeOptions options) {
        View view = views.acquire(options, Permissions.ALL.who());
        assertThat(view).as("a view for " + options).isNotNull();
        return view;
    }

    /** A subscription through the view of {@code options} ({@link #view}). */
    void subscribe(Session session, int subscriptionId, String selector, SubscribeOptions options) {
        subscribe(session, subscriptionId, selector, Map.of(), options);
    }

    /** A subscription with {@code options}: through their view when they make one ({@link #view}). */
    void subscribe(Session session, int subscriptionId, String selector, Map<String, Long> resume,
                   SubscribeOptions options) {
        subscribe(session, subscriptionId, selector, resume, options.makesView() ? view(options) : null, options);
    }

    private void subscribe(Session session, int subscriptionId, String selector, Map<String, Long> resume, View view,
                           SubscribeOptions options) {
        InboundEvent e = command(InboundEvent.SUBSCRIBE, session, subscriptionId);
        try {
            e.selector = Selector.parse(selector, PathLimits.DEFAULT);
        } catch (ProtocolException ex) {
            throw new IllegalArgumentException(ex);
        }
        e.resume = resume;
        e.view = view;
        e.options = options;
        assertThat(subscribeMemory.charge(session, SubscribeMemory.requestBytes(resume)).passed())
                .as("subscribe requests' memory charged as an event loop does").isTrue();
        run(e);
    }

    /** Moves the sequencer's clock on. */
    void advanceNanos(long nanos) {
        nowNanos += nanos;
    }

    /** The timer's {@code FLUSH_HELD} command, as {@link HeldViewsTimer} sends it at a deadline. */
    void flushHeld() {
        run(command(InboundEvent.FLUSH_HELD, null, 0));
    }

    /** A {@code REMOVE} of {@code session} (null: of the node itself, every match). */
    void remove(Session session, int correlationId, String selector) {
        InboundEvent e = command(InboundEvent.REMOVE, session, correlationId);
        try {
            e.selector = Selector.parse(selector, PathLimits.DEFAULT);
        } catch (ProtocolException ex) {
            throw new IllegalArgumentException(ex);
        }
        run(e);
    }

    void unsubscribe(Session session, int subscriptionId) {
        run(command(InboundEvent.UNSUBSCRIBE, session, subscriptionId));
    }

    void closeSession(Session session) {
        run(command(InboundEvent.SESSION_CLOSED, session, 0));
    }

    /** A hot reload of the {@code features} section to what {@code yaml} gives. */
    void reloadFeatures(String yaml) {
        ServerConfig reloaded = ConfigLoader.fromYaml(yaml);
        InboundEvent e = command(InboundEvent.FEATURES, null, 0);
        e.features = new FeatureResolver(reloaded.features(), reloaded.limits().pathLimits());
        run(e);
    }

    private InboundEvent command(int kind, Session session, int id) {
        event.clear();
        event.kind = kind;
        event.session = session;
        event.id = id;
        return event;
    }

    private void run(InboundEvent e) {
        sequencer.onEvent(e, 0, !batching);
    }

    /**
     * The commands from here until {@link #endBatch} are one batch of the sequencer's, as a burst
     * of them read off the inbound ring is: what it does at the end of a batch waits until then.
     */
    void startBatch() {
        batching = true;
    }

    /** Ends the batch {@link #startBatch} began, with a command of nothing: the end of a batch's work runs. */
    void endBatch() {
        batching = false;
        run(command(InboundEvent.REPLY_TURN, null, 0));
    }

    // ------------------------------------------------------------------ an inbound ring fed by other threads

    /**
     * A proxy onto an inbound ring of this node, for code under test that sends the sequencer
     * commands from a thread of its own (the cluster's); the test thread, playing the sequencer,
     * runs them with {@link #runInbound}.
     */
    SequencerProxy inbound() {
        if (inboundRing == null) {
            inboundRing = RingBuffer.createMultiProducer(InboundEvent::new, 64);
            inboundRing.addGatingSequences(inboundConsumed);
        }
        return new SequencerProxy(inboundRing);
    }

    /**
     * Waits until another thread has put {@code commands} more commands into the {@link #inbound}
     * ring, and runs them here, in order, as the sequencer thread does.
     */
    void runInbound(int commands) {
        for (int i = 0; i < commands; i++) {
            long next = inboundConsumed.get() + 1;
            Await.until(() -> inboundRing.isAvailable(next), Duration.ofSeconds(5), Duration.ofMillis(1),
                    () -> "command " + next + " in the inbound ring");
            sequencer.onEvent(inboundRing.get(next), next, true);
            inboundConsumed.set(next);
        }
    }

    /** Whether the {@link #inbound} ring holds a command not run yet. */
    boolean inboundPending() {
        return inboundRing != null && inboundRing.getCursor() > inboundConsumed.get();
    }

    private static String[] segments(String path) {
        try {
            return TopicPath.validate(path, PathLimits.DEFAULT);
        } catch (ProtocolException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * Runs every poller on its loop: what the sequencer put on the fan-out ring reaches the sessions;
     * a streamed subscribe reply is produced to its end, window by window, as a client reading at
     * once would receive it.
     */
    void deliver() {
        do {
            deliverWindow();
        } while (continueReplies() > 0);
    }

    /**
     * Runs every poller once: a streamed reply's window reaches its session, which asks for the next
     * ({@link #continueReplies}), as a client that read the window would.
     */
    void deliverWindow() {
        for (EmbeddedChannel loop : loopChannels) {
            loop.runPendingTasks();
        }
    }

    /**
     * Hands the sequencer the requests for the next window of the sessions whose last window was
     * written ({@link InboundEvent#CONTINUE_REPLIES}), and the turns it asked for
     * ({@link InboundEvent#REPLY_TURN}); returns how many.
     */
    int continueReplies() {
        List<Session> asked = new ArrayList<>(continuing);
        continuing.clear();
        for (Session s : asked) {
            run(command(InboundEvent.CONTINUE_REPLIES, s, 0));
        }
        int turns = 0;
        for (; replyTurnsAsked > 0; turns++) {
            replyTurnsAsked--;
            run(command(InboundEvent.REPLY_TURN, null, 0));
        }
        return asked.size() + turns;
    }

    /** Decodes what {@code session} was written since the last call, without running anything. */
    static List<Received> drained(Session session) {
        return ReceivedFrames.drain((EmbeddedChannel) session.channel);
    }

    /** Delivers, then decodes what {@code session} was written since the last call. */
    List<Received> received(Session session) {
        deliver();
        return ReceivedFrames.drain((EmbeddedChannel) session.channel);
    }

    /** Stops the core and releases every frame: paranoid leak detection then checks the test. */
    @Override
    public void close() {
        deliver();
        sequencer.halt();
        sequencer.releaseAll();
        if (inboundRing != null) {
            new SequencerProxy(inboundRing).releaseUnconsumed();
        }
        for (EmbeddedChannel ch : sessionChannels) {
            ReceivedFrames.drain(ch);
            ch.finishAndReleaseAll();
        }
        for (EmbeddedChannel ch : loopChannels) {
            ch.finishAndReleaseAll();
        }
    }
}
