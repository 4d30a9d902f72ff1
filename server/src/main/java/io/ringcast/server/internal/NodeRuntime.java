package io.ringcast.server.internal;

import com.lmax.disruptor.BatchEventProcessor;
import com.lmax.disruptor.BatchEventProcessorBuilder;
import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.internal.PlatformDependent;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.log.PublishRefusals;
import io.ringcast.protocol.Transport;
import io.ringcast.server.config.EnvOverrides;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLException;
import java.util.concurrent.TimeUnit;

/**
 * Builds and runs one node's pipeline; the whole data path is assembled in {@link #start}, each
 * stage by a method of its own:
 * <pre>
 *   I/O threads "ringcast-io-N"   SessionHandler ──► SequencerProxy ──► inbound ring (multi-producer,
 *                                 preallocated; the proxy is the only code that claims its slots)
 *   thread "ringcast-demo"        DemoPublisher (demo.enabled) ──► the same proxy and ring
 *   Raft engine threads           (cluster.enabled) sessions' publishes go to ClusterNode instead: batched
 *                                 into entries of the Raft group's log ("ringcast-cluster-batcher-g0");
 *                                 each committed entry's updates come back on the engine's runner thread,
 *                                 in log order with the log's sequence, into the same inbound ring; the
 *                                 acks of this node's publishes follow their updates into it, once this
 *                                 node applied their entry ("ringcast-cluster-answers-g0")
 *   thread "ringcast-held-views"  HeldViewsTimer ──► the same proxy and ring (FLUSH_HELD, at a maxRate deadline)
 *   thread "ringcast-sequencer"   TopicSequencer (single writer of the topic tree, encodes once, and once
 *                                 per view of a topic: ViewedUpdates) ──► fan-out ring (single producer)
 *   I/O threads "ringcast-io-N"   FanOutPoller per loop ──► sessions of that loop, one flush per batch
 * </pre>
 * Not thread-safe: start and stop from one thread.
 */
public final class NodeRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NodeRuntime.class);
    private static final long SHUTDOWN_FLUSH_MS = 500;

    private final ServerConfig config;
    private final ServerCounters counters = new ServerCounters();
    /** {@code server.transport} resolved: what the event loops and sockets run on. */
    private Transport transport;
    private EventLoopGroup acceptGroup;
    private EventLoopGroup ioGroup;
    private EventLoop[] ioLoops;
    private Channel serverChannel;
    private OpenSessions sessions;
    private BatchEventProcessor<InboundEvent> sequencerProcessor;
    private TopicSequencer sequencer;
    /** The node's distinct subscription views ({@code limits.maxViews}). */
    private Views views;
    private SubscribeMemory subscribeMemory;
    /** Refuses new sessions, subscriptions and topics while the heap is past {@code limits.heapRefusePercent}. */
    private HeapGuard heapGuard = HeapGuard.OFF;
    /** Sends {@code FLUSH_HELD} when a view's held value is due ({@code maxRate}), on {@link #heldViewsTimerThread}. */
    private HeldViewsTimer heldViewsTimer;
    private Thread heldViewsTimerThread;
    private Thread sequencerThread;
    private InetSocketAddress boundAddress;
    private ServerChannelInitializer pipeline;
    private SequencerProxy inbound;
    private ConfigFileWatcher watcher;
    private DemoPublisher demo;
    private Login login;
    /** This node's part in the cluster ({@code cluster.enabled}), else null. */
    private ClusterNode cluster;
    private boolean closed;

    public NodeRuntime(ServerConfig config) {
        this.config = config;
    }

    /**
     * Binds the port and starts every thread, stage by stage in the order data flows backwards: a
     * stage is running before the one that feeds it. Blocks until the node accepts connections.
     */
    public void start() throws InterruptedException {
        startEventLoops();
        OutboundLimit outboundLimit = new OutboundLimit(config.limits().outboundQueueBytes(),
                config.limits().slowConsumerCloseGraceMs(), counters);
        RingBuffer<FanOutEvent> fanOut = RingBuffer.createSingleProducer(FanOutEvent::new,
                config.pipeline().fanOutRingSize(), waitStrategy(config.pipeline()));
        FanOutPoller[] pollers = fanOutPollers(fanOut, outboundLimit);
        heapGuard = new HeapGuard(Runtime.getRuntime().maxMemory(), config.limits().heapRefusePercent(), counters)
                .start();
        sessions = new OpenSessions(new DefaultChannelGroup("ringcast-sessions", GlobalEventExecutor.INSTANCE),
                counters, ioLoops, pollers, config.limits().maxConnectionsPerPrincipal(),
                config.limits().maxSubscriptionsWithin(Runtime.getRuntime().maxMemory()),
                config.limits().maxSubscriptionsPerPrincipalWithin(Runtime.getRuntime().maxMemory()), heapGuard);
        startSequencer(fanOut, pollers);
        ioLoops[0].scheduleAtFixedRate(new DirectMemoryGuard(PlatformDependent.maxDirectMemory(), sessions.channels(),
                outboundLimit), DirectMemoryGuard.CHECK_MS, DirectMemoryGuard.CHECK_MS, TimeUnit.MILLISECONDS);
        if (config.cluster().enabled()) {
            startCluster();
        }
        pipeline = channelPipeline(outboundLimit);
        bind(pipeline);
        if (config.demo().enabled()) {
            demo = new DemoPublisher(config.demo(), inbound, PooledByteBufAllocator.DEFAULT, cluster);
            demo.start();
        }
        log.info("Ringcast node listening on {}:{} (WebSocket {}://{}:{}{}), {} I/O threads on {} (server.transport {}), "
                + "history {} per topic, flush {}", config.server().host(), boundAddress.getPort(),
                config.security().tls() ? "wss" : "ws", displayHost(), boundAddress.getPort(),
                ServerChannelInitializer.WEBSOCKET_PATH, ioLoops.length, transport.configName(),
                config.server().transport().configName(), config.history().length(),
                config.pipeline().flushPolicy().yamlName());
    }

    /**
     * The acceptor thread and the I/O threads {@code ringcast-io-N}, which also read the fan-out ring,
     * on the transport {@code server.transport} names or, for {@code auto}, the first available one.
     * Throws {@link IllegalStateException} naming the key and the native library's reason when the
     * transport named is not available (a config from {@code ConfigLoader} was refused for it already).
     */
    private void startEventLoops() {
        transport = config.server().transport().resolve("key 'server.transport'");
        acceptGroup = transport.newEventLoopGroup(1, new DefaultThreadFactory("ringcast-accept"));
        ioGroup = transport.newEventLoopGroup(config.server().effectiveIoThreads(), new DefaultThreadFactory("ringcast-io"));
        List<EventLoop> loops = new ArrayList<>();
        for (EventExecutor executor : ioGroup) {
            loops.add((EventLoop) executor);
        }
        ioLoops = loops.toArray(new EventLoop[0]);
    }

    /** The readers of the fan-out ring (whose single producer is the sequencer), one on each I/O loop. */
    private FanOutPoller[] fanOutPollers(RingBuffer<FanOutEvent> fanOut, OutboundLimit outboundLimit) {
        ServerConfig.Pipeline pc = config.pipeline();
        FanOutPoller[] pollers = new FanOutPoller[ioLoops.length];
        for (int i = 0; i < ioLoops.length; i++) {
            pollers[i] = new FanOutPoller(i, ioLoops[i], fanOut, outboundLimit, pc.flushPolicy(),
                    TimeUnit.MICROSECONDS.toNanos(pc.flushMaxDelayUs()), counters);
        }
        return pollers;
    }

    /**
     * The inbound ring (multi-producer) and its one consumer, the {@link TopicSequencer} on thread
     * {@code ringcast-sequencer}, with the topics a previous run saved ({@code state.file}).
     */
    private void startSequencer(RingBuffer<FanOutEvent> fanOut, FanOutPoller[] pollers) throws InterruptedException {
        ServerConfig.Pipeline pc = config.pipeline();
        RingBuffer<InboundEvent> ring = RingBuffer.createMultiProducer(InboundEvent::new, pc.inboundRingSize(),
                waitStrategy(pc));
        inbound = new SequencerProxy(ring);
        counters.readQueuesOf(sessions.channels(), ring);
        views = new Views(config.limits().maxViews(), config.limits().maxViewsPerPrincipal());
        subscribeMemory = new SubscribeMemory(config.limits().subscribeBytesPerSession(),
                config.limits().subscribeBytesPerPrincipal());
        counters.subscribeMemoryOf(subscribeMemory);
        counters.viewsOf(views);
        heldViewsTimer = new HeldViewsTimer(inbound::tryFlushHeld);
        FanOutProxy fanOutProxy = new FanOutProxy(fanOut, pollers, pc.fanOutRingBytes());
        counters.fanOutOf(fanOutProxy);
        sequencer = new TopicSequencer(fanOutProxy, PooledByteBufAllocator.DEFAULT,
                TopicSequencer.SequencerLimits.of(config),
                new FeatureResolver(config.features(), config.limits().pathLimits()), counters,
                config.cluster().enabled(), views, subscribeMemory, System::nanoTime, heldViewsTimer::arm,
                inbound::tryReplyTurn, heapGuard);
        if (config.state().enabled() && !config.cluster().enabled()) {
            try {
                restoreTopics(Path.of(config.state().file()));
            } catch (IOException e) {
                sequencer.releaseAll();
                sequencer = null;
                close();
                throw new IllegalStateException("cannot restore topics from state.file " + config.state().file()
                        + ": " + e.getMessage() + "; move the file away to start empty", e);
            }
        }
        sequencerProcessor = new BatchEventProcessorBuilder().build(ring, ring.newBarrier(), sequencer);
        ring.addGatingSequences(sequencerProcessor.getSequence());
        sequencerThread = new Thread(sequencerProcessor, "ringcast-sequencer");
        // the topic tree's only writer: without it nothing is sequenced or delivered any more
        sequencerThread.setUncaughtExceptionHandler((t, e) -> FatalErrors.halt("the sequencer thread, which died", e));
        sequencerThread.start();
        heldViewsTimerThread = new Thread(heldViewsTimer, "ringcast-held-views");
        heldViewsTimerThread.setDaemon(true);
        heldViewsTimerThread.start();
    }

    /** Joins the cluster ({@link ClusterLink}); the port is bound only once this node has caught up. */
    private void startCluster() throws InterruptedException {
        if (config.state().enabled()) {
            log.warn("state.file is ignored in a cluster: a node's state is its Raft log in cluster.dataDir");
        }
        try {
            cluster = ClusterLink.join(config.cluster(), config.limits(), inbound);
        } catch (InterruptedException | IllegalStateException e) {
            close();
            throw e;
        }
    }

    /**
     * Every connection's pipeline ({@link ServerChannelInitializer}) and what its handlers use: TLS,
     * the login, the endpoints' view of the node and the sessions' services.
     */
    private ServerChannelInitializer channelPipeline(OutboundLimit outboundLimit) throws InterruptedException {
        SslContext tls;
        try {
            tls = tlsContext(config.security());
        } catch (SSLException | IllegalArgumentException e) {
            close();
            throw new IllegalStateException("cannot set up TLS from security.tlsCertificateFile "
                    + config.security().tlsCertificateFile() + " and security.tlsPrivateKeyFile "
                    + config.security().tlsPrivateKeyFile() + ": " + e.getMessage(), e);
        }
        try {
            login = new Login(new Authenticator(config.security()));
        } catch (IOException | GeneralSecurityException e) {
            close();
            throw new IllegalStateException("cannot read security.jwtRs256PublicKeyFile "
                    + config.security().jwtRs256PublicKeyFile() + ": " + e.getMessage(), e);
        }
        HttpEndpointHandler.NodeView endpoints = new HttpEndpointHandler.NodeView(counters,
                new ServerMetrics(counters, cluster), System.currentTimeMillis(), config.demo().enabled(), cluster,
                transport);
        ClusterRoute route = cluster == null ? null
                : new ClusterRoute(cluster, inbound, config.cluster().replicationTimeoutMs(),
                        new PublishRefusals(config.limits().maxTopics(), config.limits().publisherLedgers(),
                                config.limits().publisherLedgersPerPrincipal()), heapGuard);
        if (route != null) {
            sequencer.logRemovalsThrough(route); // the leaders of topics' groups log their expiry
        }
        SessionServices sessionServices = new SessionServices(config.limits(), config.session().idleTimeoutMs(),
                sessions, inbound, new SubscribeChecks(config.limits().maxSubscriptionsPerSession(),
                        config.limits().maxViewsPerSession(), config.history().length(), views, subscribeMemory), login,
                route, outboundLimit, counters);
        return new ServerChannelInitializer(config, tls, counters, endpoints, sessionServices);
    }

    /** Listens on {@code server.host}:{@code server.port}. */
    private void bind(ServerChannelInitializer initializer) throws InterruptedException {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptGroup, ioGroup)
                .channel(transport.serverChannelClass())
                // as deep as the system allows (net.core.somaxconn): thousands of clients connecting
                // at once (a restart, a failover) overflowed 1,024, and each dropped SYN waits 1-3 s
                .option(ChannelOption.SO_BACKLOG, NetUtil.SOMAXCONN)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childHandler(initializer);
        int sendBuffer = config.limits().socketSendBufferBytes();
        if (sendBuffer > 0) {
            // bounded: a client that reads nothing otherwise takes up to 4 MiB of kernel memory,
            // which the sequencer fills with subscribe replies at full speed, and its slowness
            // (limits.outboundQueueBytes, conflation) shows only once that is full
            bootstrap.childOption(ChannelOption.SO_SNDBUF, sendBuffer);
        }
        try {
            serverChannel = bootstrap.bind(config.server().host(), config.server().port()).sync().channel();
        } catch (Exception e) {
            close();
            // NIO says java.net.BindException; epoll and io_uring their own IOException, NativeIoException
            if (e instanceof IOException) {
                throw new IllegalStateException("cannot listen on " + config.server().host() + ":" + config.server().port()
                        + " (server.host, server.port): " + e.getMessage(), e);
            }
            throw e;
        }
        boundAddress = (InetSocketAddress) serverChannel.localAddress();
    }

    /** This node's part in the cluster, or null for a single node. */
    public ClusterNode cluster() {
        return cluster;
    }

    /**
     * Takes over the topics the previous run saved, then deletes the file: a crash after this start
     * must not bring back values older than ones clients have seen since.
     */
    private void restoreTopics(Path file) throws IOException {
        if (!Files.exists(file)) {
            log.info("state: no {} to restore, starting empty", file);
            return;
        }
        List<TopicStateFile.SavedTopic> saved = TopicStateFile.read(file);
        int restored = sequencer.restore(saved, config.limits().pathLimits());
        Files.delete(file);
        log.info("state: restored {} topics from {} (file removed until the next graceful stop)", restored, file);
    }

    private void saveTopics(Path file) {
        try {
            int saved = sequencer.save(file);
            log.info("state: saved {} topics to {}", saved, file);
        } catch (IOException e) {
            log.error("state: could not save topics to {}; the next start begins empty", file, e);
        }
    }

    private static SslContext tlsContext(ServerConfig.Security security) throws SSLException {
        if (!security.tls()) {
            return null;
        }
        return SslContextBuilder.forServer(new File(security.tlsCertificateFile()), new File(security.tlsPrivateKeyFile()))
                .build();
    }

    private String displayHost() {
        String h = config.server().host();
        return h.equals("0.0.0.0") || h.equals("::") ? "localhost" : h;
    }

    private static WaitStrategy waitStrategy(ServerConfig.Pipeline pc) {
        switch (pc.waitStrategy()) {
            case SLEEPING: return new SleepingWaitStrategy();
            case YIELDING: return new YieldingWaitStrategy();
            case BUSY_SPIN: return new BusySpinWaitStrategy();
            case BLOCKING:
            default: return new BlockingWaitStrategy();
        }
    }

    /** The port the node listens on (the real one when the config says 0). */
    public int port() {
        return boundAddress.getPort();
    }

    /** The WebSocket URL clients on this machine use. */
    public String webSocketUrl() {
        return (config.security().tls() ? "wss://" : "ws://")
                + (displayHost().equals("localhost") ? "127.0.0.1" : displayHost()) + ":" + port()
                + ServerChannelInitializer.WEBSOCKET_PATH;
    }

    public ServerCounters counters() {
        return counters;
    }

    /**
     * Applies the {@code features} of {@code newConfig} (validated; its other sections are
     * ignored): new connections see it at once, topics from the sequencer's next command on. Any
     * thread; it waits for a slot of the inbound ring.
     */
    public void applyFeatures(ServerConfig newConfig) {
        FeatureResolver resolver = new FeatureResolver(newConfig.features(), config.limits().pathLimits());
        pipeline.useFeatures(newConfig.features());
        inbound.reloadFeatures(resolver);
    }

    /**
     * Watches {@code configFile} and applies changes to its {@code features} section while running,
     * with {@code overrides} set over each reload as over the file at start.
     */
    public void watchConfig(Path configFile, EnvOverrides overrides) throws IOException {
        if (watcher == null) {
            watcher = new ConfigFileWatcher(configFile, overrides, config, this::applyFeatures, counters);
        }
    }

    /**
     * Stops accepting, tells every session {@code SERVER_SHUTDOWN} (close 1001), stops the
     * sequencer and the I/O threads, and releases every pooled buffer the node holds. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        log.info("Ringcast node stopping");
        if (demo != null) {
            demo.close();
        }
        if (cluster != null) {
            cluster.close(); // leave first: peers see it gone at once, and elect a leader if it led
        }
        heapGuard.close();
        if (watcher != null) {
            watcher.close();
        }
        if (serverChannel != null) {
            serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        if (sessions != null) {
            sessions.shutdownAll(SHUTDOWN_FLUSH_MS);
        }
        if (heldViewsTimerThread != null) { // started with the sequencer: a failed start may not have got so far
            heldViewsTimer.stop();
            StoppingThreads.join(heldViewsTimerThread);
        }
        if (sequencerProcessor != null) {
            sequencer.halt();
            sequencerProcessor.halt();
            StoppingThreads.join(sequencerThread);
        }
        stopEventLoops();
        if (login != null) {
            login.close();
        }
        if (sequencer != null && !sequencerThread.isAlive()) {
            releaseTopics();
        }
        log.info("Ringcast node stopped");
    }

    private void stopEventLoops() {
        if (acceptGroup != null) {
            acceptGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        if (ioGroup != null) {
            ioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    /**
     * Saves the topics ({@code state.file}) and releases every buffer the sequencer and the inbound
     * ring hold: only once the sequencer thread has stopped.
     */
    private void releaseTopics() {
        if (config.state().enabled() && !config.cluster().enabled()) {
            saveTopics(Path.of(config.state().file()));
        }
        sequencer.releaseAll();
        inbound.releaseUnconsumed(); // publishes the sequencer never reached: their values are still held by the ring
    }
}
