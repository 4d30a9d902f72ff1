package io.ringcast.client.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.Transport;
import io.ringcast.protocol.TopicPath;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link RingcastClient} on Netty.
 *
 * <p>Thread contract: the public methods may be called from any thread. They check their
 * arguments on the caller's thread, then hand a command to the {@link CommandProxy}; all state
 * behind them ({@link ClientSession}, {@link Connector}, the connections) is confined to one event
 * loop, taken from the application's group or from a one-thread group the client owns. The
 * in-flight publish counter is the one piece shared between threads (an atomic).
 */
public final class NettyRingcastClient implements RingcastClient {
    /** How long {@link #close()} waits for the event loop to finish closing. */
    static final long CLOSE_WAIT_MS = 5000;

    private final ClientConfig config;
    /** The group the client created and shuts down; null when the application lent one. */
    private final EventLoopGroup ownedGroup;
    private final EventLoop eventLoop;
    private final ClientSession session;
    private final CommandProxy commands;
    private final Connector connector;
    private final AtomicInteger inFlightPublishes = new AtomicInteger();
    private final AtomicBoolean connectCalled = new AtomicBoolean();
    private final AtomicBoolean closeCalled = new AtomicBoolean();

    public NettyRingcastClient(ClientConfig config) {
        this.config = config;
        EventLoopGroup group = config.eventLoopGroup();
        if (group == null) {
            ownedGroup = config.transport().newEventLoopGroup(1, new DefaultThreadFactory("ringcast-client", true));
            group = ownedGroup;
        } else {
            ownedGroup = null;
        }
        this.eventLoop = group.next();
        this.session = new ClientSession(eventLoop, config.addresses().size());
        this.commands = new CommandProxy(eventLoop, session);
        Bootstrap bootstrap = new Bootstrap()
                .group(eventLoop) // every connection on the same loop: the session's state never changes threads
                .channel(config.transport().socketChannelClass()) // the group's own kind of socket
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true);
        this.connector = new Connector(config, eventLoop, session, commands,
                new Backoff(config.reconnectDelayInitialMs(), config.reconnectDelayMaxMs(), new SplittableRandom()),
                bootstrap, this::close);
    }

    @Override
    public CompletableFuture<Void> connect() {
        if (closeCalled.get()) {
            return CompletableFuture.failedFuture(new RingcastException("client is closed"));
        }
        if (connectCalled.compareAndSet(false, true)) {
            try {
                eventLoop.execute(connector::start);
            } catch (RejectedExecutionException e) {
                return CompletableFuture.failedFuture(new RingcastException("client is closed", e));
            }
        }
        return connector.connected();
    }

    @Override
    public Subscription subscribe(String selector, SubscribeOptions options, UpdateListener listener) {
        Objects.requireNonNull(selector, "selector");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        Selector parsed;
        try {
            parsed = Selector.parse(selector, SubscriptionTable.PERMISSIVE_LIMITS);
        } catch (ProtocolException e) {
            throw new IllegalArgumentException(e.reason(), e);
        }
        ClientSubscription subscription = new ClientSubscription(parsed, options, listener, commands);
        if (closeCalled.get()) {
            subscription.abandon(new RingcastException("client is closed"));
        } else {
            commands.offer(new SubscriptionCommand(subscription, true));
        }
        return subscription;
    }

    @Override
    public CompletableFuture<Long> publish(String topic, byte[] value) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(value, "value");
        try {
            TopicPath.validate(topic, SubscriptionTable.PERMISSIVE_LIMITS);
        } catch (ProtocolException e) {
            return CompletableFuture.failedFuture(new RingcastException(e.reason(), ErrorCode.INVALID_PATH, 0));
        }
        if (closeCalled.get()) {
            return CompletableFuture.failedFuture(new RingcastException("client is closed"));
        }
        if (inFlightPublishes.incrementAndGet() > config.maxInFlightPublishes()) {
            inFlightPublishes.decrementAndGet();
            return CompletableFuture.failedFuture(new RingcastException(config.maxInFlightPublishes()
                    + " publishes are in flight already (maxInFlightPublishes)"));
        }
        PublishRequest request = new PublishRequest(topic, ByteBufUtil.utf8Bytes(topic), value, inFlightPublishes);
        commands.offer(request);
        return request.future;
    }

    @Override
    public CompletableFuture<Integer> remove(String selector) {
        Objects.requireNonNull(selector, "selector");
        try {
            Selector.parse(selector, SubscriptionTable.PERMISSIVE_LIMITS);
        } catch (ProtocolException e) {
            return CompletableFuture.failedFuture(new RingcastException(e.reason(), ErrorCode.INVALID_SELECTOR, 0));
        }
        if (closeCalled.get()) {
            return CompletableFuture.failedFuture(new RingcastException("client is closed"));
        }
        RemoveRequest request = new RemoveRequest(selector);
        commands.offer(request);
        return request.future;
    }

    @Override
    public ConnectionState state() {
        return closeCalled.get() ? ConnectionState.CLOSED : connector.state();
    }

    @Override
    public void close() {
        if (!closeCalled.compareAndSet(false, true)) {
            return;
        }
        RingcastException closed = new RingcastException("client closed");
        ChannelFuture socketClosed = null;
        if (eventLoop.inEventLoop()) {
            socketClosed = closeOnEventLoop(closed);
        } else {
            try {
                Future<ChannelFuture> done = eventLoop.submit(() -> closeOnEventLoop(closed));
                if (done.awaitUninterruptibly(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS) && done.isSuccess()) {
                    socketClosed = done.getNow();
                }
            } catch (RejectedExecutionException e) {
                commands.failAll(closed); // the application's group is shut down already
            }
        }
        if (ownedGroup != null) {
            // The socket is closed before its loop stops: io_uring closes it only once the read it has
            // pending is cancelled, a completion the loop must still be running to handle (stopped first,
            // the incubator's loop waits out the shutdown timeout, 5 s, and logs a rejected task).
            if (socketClosed == null || socketClosed.isDone()) {
                shutDownOwnedGroup();
            } else if (eventLoop.inEventLoop()) {
                socketClosed.addListener(f -> shutDownOwnedGroup()); // cannot wait on the loop itself
            } else {
                socketClosed.awaitUninterruptibly(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
                shutDownOwnedGroup();
            }
        }
    }

    private void shutDownOwnedGroup() {
        Future<?> terminated = ownedGroup.shutdownGracefully(0, CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
        if (!eventLoop.inEventLoop()) {
            terminated.awaitUninterruptibly(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** Shuts the connector down and fails what is still queued; the socket's close future, or null. */
    private ChannelFuture closeOnEventLoop(RingcastException closed) {
        ChannelFuture socketClosed = connector.shutdown(closed);
        commands.run(); // fails the commands still queued: the session is closed
        return socketClosed;
    }

    /** For tests: the session, to be read on the event loop. */
    ClientSession session() {
        return session;
    }

    /** For tests: the event loop the client runs on. */
    EventLoop eventLoop() {
        return eventLoop;
    }

    /** The transport the client's connections run on (never {@link Transport#AUTO}); any thread. */
    public Transport transport() {
        return config.transport();
    }
}
