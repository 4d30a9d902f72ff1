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
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.buffer.Unpooled;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterSettings;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.TopicPath;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import javax.net.ssl.SSLException;
import java.util.concurrent.TimeUnit;

/**
 * Builds and runs one node's pipeline; the whole data path is assembled in {@link #start}:
 * <pre>
 *   I/O threads "ringcast-io-N"   SessionHandler ──► inbound ring (multi-producer, preallocated)
 *   thread "ringcast-demo"        DemoPublisher (demo.enabled) ──► the same inbound ring
 *   thread "ringcast-cluster"     (cluster.enabled) sessions' publishes go to ClusterNode instead, to their
 *                                 partition's owner; the updates every node applies come back from it,
 *                                 in partition order with the owner's sequence, into the same inbound ring
 *   thread "ringcast-sequencer"   TopicSequencer (single writer of the topic tree, encodes once)
 *                                   ──► fan-out ring (single producer)
 *   I/O threads "ringcast-io-N"   FanOutPoller per loop ──► sessions of that loop, one flush per batch
 * </pre>
 * Not thread-safe: start and stop from one thread.
 */
public final class NodeRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NodeRuntime.class);
    private static final long SHUTDOWN_FLUSH_MS = 500;

    private final ServerConfig config;
    private final ServerCounters counters = new ServerCounters();
    private EventLoopGroup acceptGroup;
    private EventLoopGroup ioGroup;
    private Channel serverChannel;
    private ChannelGroup channels;
    private BatchEventProcessor<InboundEvent> sequencerProcessor;
    private TopicSequencer sequencer;
    private Thread sequencerThread;
    private InetSocketAddress boundAddress;
    private ServerContext context;
    private RingBuffer<InboundEvent> inbound;
    private ConfigFileWatcher watcher;
    private DemoPublisher demo;
    private ExecutorService authExecutor;
    /** This node's part in the cluster ({@code cluster.enabled}), else null. */
    private ClusterNode cluster;
    private boolean closed;

    public NodeRuntime(ServerConfig config) {
        this.config = config;
    }

    /** Binds the port and starts every thread. Blocks until the node accepts connections. */
    public void start() throws InterruptedException {
        ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        ServerConfig.Pipeline pc = config.pipeline();

        acceptGroup = new NioEventLoopGroup(1, new DefaultThreadFactory("ringcast-accept"));
        ioGroup = new NioEventLoopGroup(config.server().effectiveIoThreads(), new DefaultThreadFactory("ringcast-io"));
        channels = new DefaultChannelGroup("ringcast-sessions", GlobalEventExecutor.INSTANCE);

        RingBuffer<FanOutEvent> fanOut = RingBuffer.createSingleProducer(FanOutEvent::new, pc.fanOutRingSize(),
                waitStrategy(pc));
        int loops = 0;
        for (EventExecutor ignored : ioGroup) {
            loops++;
        }
        EventLoop[] loopArray = new EventLoop[loops];
        FanOutPoller[] pollers = new FanOutPoller[loops];
        OutboundLimit outboundLimit = new OutboundLimit(config.limits().outboundQueueBytes(),
                config.limits().slowConsumerCloseGraceMs(), counters);
        int i = 0;
        for (EventExecutor executor : ioGroup) {
            loopArray[i] = (EventLoop) executor;
            pollers[i] = new FanOutPoller(i, loopArray[i], fanOut, outboundLimit, pc.flushPolicy(),
                    TimeUnit.MICROSECONDS.toNanos(pc.flushMaxDelayUs()), counters);
            i++;
        }

        inbound = RingBuffer.createMultiProducer(InboundEvent::new, pc.inboundRingSize(),
                waitStrategy(pc));
        sequencer = new TopicSequencer(new FanOutProxy(fanOut, pollers), alloc,
                new TopicSequencer.SequencerLimits(config.history().length(), config.limits().maxTopics(),
                        config.limits().publisherLedgers(), config.limits().publisherLedgersPerPrincipal()),
                new FeatureResolver(config.features(), config.limits().pathLimits()), counters,
                config.cluster().enabled());
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
        sequencerProcessor = new BatchEventProcessorBuilder().build(inbound, inbound.newBarrier(), sequencer);
        inbound.addGatingSequences(sequencerProcessor.getSequence());
        sequencerThread = new Thread(sequencerProcessor, "ringcast-sequencer");
        // the topic tree's only writer: without it nothing is sequenced or delivered any more
        sequencerThread.setUncaughtExceptionHandler((t, e) -> FatalErrors.halt("the sequencer thread, which died", e));
        sequencerThread.start();

        if (config.cluster().enabled()) {
            if (config.state().enabled()) {
                log.warn("state.file is ignored in a cluster: a node that starts takes its state from its peers");
            }
            startCluster();
        }

        SslContext tls;
        try {
            tls = tlsContext(config.security());
        } catch (SSLException | IllegalArgumentException e) {
            close();
            throw new IllegalStateException("cannot set up TLS from security.tlsCertificateFile "
                    + config.security().tlsCertificateFile() + " and security.tlsPrivateKeyFile "
                    + config.security().tlsPrivateKeyFile() + ": " + e.getMessage(), e);
        }
        Authenticator authenticator;
        try {
            authenticator = new Authenticator(config.security());
        } catch (IOException | GeneralSecurityException e) {
            close();
            throw new IllegalStateException("cannot read security.jwtRs256PublicKeyFile "
                    + config.security().jwtRs256PublicKeyFile() + ": " + e.getMessage(), e);
        }
        // bcrypt is slow by design: two threads, and a bounded queue so a login storm is refused, not queued forever
        authExecutor = new ThreadPoolExecutor(1, 2, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024),
                new DefaultThreadFactory("ringcast-auth", true));
        context = new ServerContext(config, inbound, counters, channels, pollers, loopArray, outboundLimit, tls,
                authenticator, authExecutor, cluster);
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptGroup, ioGroup)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, alloc)
                .childHandler(new ServerChannelInitializer(context));
        try {
            serverChannel = bootstrap.bind(config.server().host(), config.server().port()).sync().channel();
        } catch (Exception e) {
            close();
            if (e instanceof java.net.BindException) {
                throw new IllegalStateException("cannot listen on " + config.server().host() + ":" + config.server().port()
                        + " (server.host, server.port): " + e.getMessage(), e);
            }
            throw e;
        }
        boundAddress = (InetSocketAddress) serverChannel.localAddress();
        if (config.demo().enabled()) {
            demo = new DemoPublisher(config.demo(), inbound, alloc, cluster);
            demo.start();
        }
        log.info("Ringcast node listening on {}:{} (WebSocket {}://{}:{}{}), {} I/O threads, history {} per topic, "
                + "flush {}", config.server().host(), boundAddress.getPort(), config.security().tls() ? "wss" : "ws",
                displayHost(), boundAddress.getPort(),
                ServerChannelInitializer.WEBSOCKET_PATH, loops, config.history().length(),
                pc.flushPolicy().yamlName());
    }

    /**
     * Joins the cluster and waits until this node has caught up with every partition's owner: only
     * then does it bind its port, so no client sees a node that is still filling up.
     */
    private void startCluster() throws InterruptedException {
        ServerConfig.Cluster c = config.cluster();
        List<ClusterSettings.Member> members = new ArrayList<>();
        for (ServerConfig.Cluster.Member m : c.members()) {
            members.add(new ClusterSettings.Member(m.name(), m.host(), m.membershipPort(), m.peerPort()));
        }
        ClusterSettings settings = new ClusterSettings(c.nodeName(), members, c.partitions(), c.logLength(),
                c.replicationTimeoutMs());
        cluster = new ClusterNode(settings, this::applyFromCluster);
        try {
            cluster.start();
        } catch (InterruptedException e) {
            close();
            throw e;
        } catch (Exception e) {
            close();
            throw new IllegalStateException("cannot join the cluster as '" + c.nodeName() + "' (membership port "
                    + settings.self().membershipPort() + ", peer port " + settings.self().peerPort() + "): "
                    + e.getMessage(), e);
        }
        log.info("cluster: joined as '{}', catching up before accepting clients", c.nodeName());
        while (true) {
            try {
                cluster.ready().get(10, TimeUnit.SECONDS);
                break;
            } catch (TimeoutException e) {
                log.info("cluster: still catching up: {}", cluster.status());
            } catch (ExecutionException e) {
                close();
                throw new IllegalStateException("cluster: could not catch up", e.getCause());
            }
        }
    }

    /**
     * An update the cluster delivers, in each partition's order, with the sequence its owner gave:
     * into the inbound ring like a publish. Waits for room, which stops the cluster thread reading
     * its peers until the sequencer catches up. Cluster thread.
     */
    private void applyFromCluster(String path, long topicSequence, byte[] value) {
        String[] segments;
        try {
            segments = TopicPath.validate(path, config.limits().pathLimits());
        } catch (ProtocolException e) {
            log.error("cluster: update of '{}' not applied here ({}): are limits.maxPathBytes and maxPathDepth the "
                    + "same on every node?", path, e.reason());
            return;
        }
        long seq = inbound.next();
        InboundEvent e = inbound.get(seq);
        e.clear();
        e.kind = InboundEvent.PUBLISH;
        e.path = path;
        e.segments = segments;
        e.fixedSequence = topicSequence;
        e.receivedNanos = System.nanoTime(); // clocks of other nodes do not compare: latency from here
        e.value = Unpooled.wrappedBuffer(value);
        inbound.publish(seq);
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
        context.features = newConfig.features();
        long seq = inbound.next();
        InboundEvent e = inbound.get(seq);
        e.clear();
        e.kind = InboundEvent.FEATURES;
        e.features = resolver;
        inbound.publish(seq);
    }

    /** Watches {@code configFile} and applies changes to its {@code features} section while running. */
    public void watchConfig(Path configFile) throws IOException {
        if (watcher == null) {
            watcher = new ConfigFileWatcher(configFile, config, this::applyFeatures, counters);
        }
    }

    /**
     * Stops accepting, tells every session {@code SERVER_SHUTDOWN} (close 1001), stops the
     * sequencer and the I/O threads, and releases every pooled buffer the node holds. Idempotent.
     */
    @Override
    public void close() throws InterruptedException {
        if (closed) {
            return;
        }
        closed = true;
        log.info("Ringcast node stopping");
        if (demo != null) {
            demo.close();
        }
        if (cluster != null) {
            cluster.close(); // leave first: peers take over this node's partitions
        }
        if (watcher != null) {
            watcher.close();
        }
        if (serverChannel != null) {
            serverChannel.close().await(5, TimeUnit.SECONDS);
        }
        if (channels != null && !channels.isEmpty()) {
            CountDownLatch told = new CountDownLatch(channels.size());
            for (Channel ch : channels) {
                ch.eventLoop().execute(() -> {
                    SessionHandler handler = (SessionHandler) ch.pipeline().get("session");
                    if (handler != null) {
                        handler.shutdown();
                    }
                    told.countDown();
                });
            }
            told.await(SHUTDOWN_FLUSH_MS, TimeUnit.MILLISECONDS);
            channels.close().await(SHUTDOWN_FLUSH_MS, TimeUnit.MILLISECONDS);
        }
        if (sequencerProcessor != null) {
            sequencer.halt();
            sequencerProcessor.halt();
            sequencerThread.join(5000);
        }
        if (acceptGroup != null) {
            acceptGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        }
        if (ioGroup != null) {
            ioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        }
        if (authExecutor != null) {
            authExecutor.shutdownNow();
        }
        if (sequencer != null && !sequencerThread.isAlive()) {
            if (config.state().enabled() && !config.cluster().enabled()) {
                saveTopics(Path.of(config.state().file()));
            }
            sequencer.releaseAll();
            // publishes the sequencer never reached: their values are still held by the ring
            for (int i = 0; i < inbound.getBufferSize(); i++) {
                InboundEvent e = inbound.get(i);
                if (e.value != null) {
                    e.value.release();
                }
                e.clear();
            }
        }
        log.info("Ringcast node stopped");
    }
}
