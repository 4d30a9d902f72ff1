package io.ringcast.client.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringcast.client.ConnectionListener;
import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Opens connections and keeps one open: tries the addresses round robin, one per attempt, each
 * attempt bounded by its share of the connect timeout ({@link #attemptTimeoutMs}: TCP connect,
 * WebSocket handshake and {@code WELCOME});
 * after a failed attempt or a dropped session waits a {@link Backoff} delay and tries the next
 * address, until {@link #shutdown}. Before the first session, gives up when the connect timeout
 * has passed. Logs one line per session start, session end and failed attempt, and tells the
 * {@link ConnectionListener}.
 *
 * <p>Thread contract: event-loop confined, except {@link #state()} and {@link #connected()}, which
 * any thread may read.
 */
final class Connector implements ConnectionObserver {
    private static final Logger LOG = LoggerFactory.getLogger(RingcastClient.class);
    /** The least an attempt is given among several addresses: a WELCOME from a busy server can take a second. */
    static final long MIN_ATTEMPT_MS = 2_000;

    private final ClientConfig config;
    private final List<URI> addresses;
    private final EventLoop eventLoop;
    private final ClientSession session;
    private final CommandProxy commands;
    private final Backoff backoff;
    private final Bootstrap bootstrap;
    /** Closes the whole client, after {@code connect()} gave up. */
    private final Runnable closeClient;
    private final CompletableFuture<Void> connected = new CompletableFuture<>();

    /** Written on the event loop only. */
    private volatile ConnectionState state = ConnectionState.NEW;
    private int nextAddress;
    private long connectDeadlineNs;
    /** The connection being attempted or open; null between attempts. */
    private ConnectionHandler current;
    /** The attempt's timeout, or the delay before the next attempt. */
    private ScheduledFuture<?> timer;
    private RingcastException lastFailure;
    private boolean shutDown;

    Connector(ClientConfig config, EventLoop eventLoop, ClientSession session, CommandProxy commands,
              Backoff backoff, Bootstrap bootstrap, Runnable closeClient) {
        this.config = config;
        this.addresses = config.addresses();
        this.eventLoop = eventLoop;
        this.session = session;
        this.commands = commands;
        this.backoff = backoff;
        this.bootstrap = bootstrap;
        this.closeClient = closeClient;
    }

    /** Any thread. */
    ConnectionState state() {
        return state;
    }

    /** Any thread: completes on the first {@code WELCOME}. */
    CompletableFuture<Void> connected() {
        return connected;
    }

    /** Starts the first attempt; once. */
    void start() {
        assert eventLoop.inEventLoop();
        if (shutDown || state != ConnectionState.NEW) {
            return;
        }
        state = ConnectionState.CONNECTING;
        connectDeadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.connectTimeoutMs());
        attempt();
    }

    /**
     * Stops for good: fails what is pending with {@code error}, closes the connection.
     *
     * @return completes once the connection's socket is closed; null when there is none (or this
     *         was done before)
     */
    ChannelFuture shutdown(RingcastException error) {
        assert eventLoop.inEventLoop();
        if (shutDown) {
            return null;
        }
        shutDown = true;
        state = ConnectionState.CLOSED;
        cancelTimer();
        session.close(error); // first: pending publishes fail as "closed", not as "connection lost"
        connected.completeExceptionally(error);
        ConnectionHandler h = current;
        return h != null ? h.closeByClient() : null;
    }

    @Override
    public void onWelcome(ConnectionHandler connection) {
        assert eventLoop.inEventLoop();
        if (connection != current) {
            return;
        }
        cancelTimer();
        backoff.reset();
        state = ConnectionState.CONNECTED;
        LOG.info("connected to {} (session {})", connection.address, connection.sessionId());
        try {
            config.connectionListener().onConnected(connection.address, connection.sessionId());
        } catch (RuntimeException e) {
            LOG.warn("connection listener threw in onConnected", e);
        }
        connected.complete(null);
        commands.scheduleDrain(); // a drain that yielded to an earlier, backed-up channel
    }

    @Override
    public void onWritable() {
        commands.scheduleDrain();
    }

    private void attempt() {
        assert eventLoop.inEventLoop();
        timer = null;
        if (shutDown) {
            return;
        }
        long timeoutMs = attemptTimeoutMs(config.connectTimeoutMs(), addresses.size());
        if (state == ConnectionState.CONNECTING) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(connectDeadlineNs - System.nanoTime());
            if (leftMs <= 0) {
                giveUp();
                return;
            }
            timeoutMs = Math.min(timeoutMs, leftMs);
        }
        URI address = addresses.get(nextAddress);
        nextAddress = (nextAddress + 1) % addresses.size();
        ConnectionHandler h = new ConnectionHandler(session, this, address.toString(), config.clientName(),
                config.credentials());
        current = h;
        ChannelFuture f = bootstrap.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) timeoutMs)
                .handler(new ClientChannelInitializer(address, config.maxFrameBytes(), timeoutMs, config.compression(),
                        config.tls(), h))
                .connect(address.getHost(), ClientChannelInitializer.port(address));
        h.connectFuture = f;
        // A failed connect closes the channel too; the connect future may complete after the close
        // (failed name resolution), and its cause is the reason, so wait for both.
        f.channel().closeFuture().addListener(closed -> {
            if (f.isDone()) {
                onConnectionEnded(h);
            } else {
                f.addListener(done -> onConnectionEnded(h));
            }
        });
        long limitMs = timeoutMs;
        timer = eventLoop.schedule(() -> h.fail("no WELCOME from the server within " + limitMs + " ms", null),
                timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * How long one attempt may take: the whole connect timeout for a single address; with several,
     * an equal share of it, {@link #MIN_ATTEMPT_MS} at least, so that an address that accepts
     * connections and never answers (a frozen node) cannot take the whole timeout from the others.
     */
    static long attemptTimeoutMs(long connectTimeoutMs, int addresses) {
        return addresses <= 1 ? connectTimeoutMs
                : Math.min(connectTimeoutMs, Math.max(MIN_ATTEMPT_MS, connectTimeoutMs / addresses));
    }

    private void onConnectionEnded(ConnectionHandler h) {
        assert eventLoop.inEventLoop();
        if (h != current) {
            return;
        }
        current = null;
        cancelTimer();
        RingcastException reason = h.disconnectReason();
        if (h.welcomed()) {
            session.detach(reason, h.endedByFatalError());
            if (reason == null) {
                LOG.info("disconnected from {}: client closed", h.address);
            } else {
                LOG.warn("disconnected from {}: {}", h.address, reason.getMessage());
            }
            try {
                config.connectionListener().onDisconnected(h.address, reason, h.closeCode());
            } catch (RuntimeException e) {
                LOG.warn("connection listener threw in onDisconnected", e);
            }
        } else if (reason != null) {
            lastFailure = reason;
            if (!shutDown) {
                LOG.warn("cannot connect to {}: {}", h.address, reason.getMessage());
            }
        }
        if (shutDown) {
            return;
        }
        if (state == ConnectionState.CONNECTING && reason != null && reason.code() == ErrorCode.AUTHENTICATION_FAILED) {
            giveUp(); // the same credentials would be refused again: connect() fails now, with the reason
            return;
        }
        if (state == ConnectionState.CONNECTED) {
            state = ConnectionState.RECONNECTING;
        }
        long delayMs = backoff.nextDelayMs();
        if (state == ConnectionState.CONNECTING) {
            // never sleep past connect()'s deadline: the attempt then gives up on time
            delayMs = Math.min(delayMs, Math.max(0,
                    TimeUnit.NANOSECONDS.toMillis(connectDeadlineNs - System.nanoTime())));
        }
        timer = eventLoop.schedule(this::attempt, delayMs, TimeUnit.MILLISECONDS);
    }

    private void giveUp() {
        RingcastException last = lastFailure;
        boolean refused = last != null && last.code() == ErrorCode.AUTHENTICATION_FAILED;
        RingcastException error = new RingcastException(refused ? "could not connect to " + addresses + ": "
                + last.getMessage() : "could not connect to " + addresses + " within "
                + config.connectTimeoutMs() + " ms" + (last == null ? "" : "; last failure: " + last.getMessage()),
                last == null ? null : last.code(), last == null ? 0 : last.closeCode(), last);
        LOG.warn("{}", error.getMessage());
        connected.completeExceptionally(error);
        closeClient.run();
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
