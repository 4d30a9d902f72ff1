package io.ringcast.benchmark.load;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.net.URI;
import java.util.concurrent.CompletableFuture;

/**
 * A subscriber that is the last handler of a connection of the generator's own, without a client
 * library: a {@link LeanSubscriber} (Ringcast's protocol) or a {@link RedisSubscriber} (RESP). What
 * they do alike: start connecting ({@link #connecting}), say when their subscription is confirmed
 * ({@link #subscribed()}), stop at the first thing they cannot check honestly ({@link #fail}: the
 * tally fails, so the run is not clean; the start fails if it had not come; the connection closes),
 * and close at the run's end ({@link #closeAsync}), after which the connection's end is no failure.
 *
 * <p>Threads: {@link #connecting} from the run's thread, once; {@link #subscribed()} and
 * {@link #closeAsync} from any thread, any number of times; everything else on the channel's event
 * loop, one call at a time, as Netty calls a handler. The tally is written on that loop only.
 */
abstract class ChannelSubscriber extends ChannelInboundHandlerAdapter {
    /** Its name in every message: {@code lean subscriber 3}. */
    private final String name;
    /** The URL it connects to. */
    final URI address;
    /** Where every value goes. */
    final SubscriberTally tally;
    /** Completes once the subscription is confirmed, or fails with why the subscriber could not start. */
    final CompletableFuture<Void> subscribed = new CompletableFuture<>();

    /** Set by {@link #connecting} (or, for a channel made elsewhere, when this handler is added to it). */
    private volatile Channel channel;

    // ------------------------------------------------------------------ event loop only
    ChannelHandlerContext ctx;
    /** Failed or closed by the run: every message from now on is ignored. */
    boolean stopped;
    /** Whether the run closed the connection (then its end is no failure). */
    boolean closedByRun;

    ChannelSubscriber(String name, URI address, SubscriberTally tally) {
        this.name = name;
        this.address = address;
        this.tally = tally;
    }

    /**
     * Starts with {@code connecting}, the connect of a channel whose pipeline ends with this: if it
     * cannot be made, the start fails ({@link #failStart}) with a {@link LoadException} that names
     * the address. Once.
     */
    final void connecting(ChannelFuture connecting) {
        channel = connecting.channel(); // set already if the channel was registered by now (handlerAdded)
        connecting.addListener(done -> {
            if (!done.isSuccess()) {
                failStart(new LoadException(name + " cannot connect to " + address + ": "
                        + LoadException.describe(done.cause()), done.cause()));
            }
        });
    }

    /**
     * Fails what the run waits for before the subscriber runs: its subscription, and whatever a
     * subclass waits for first (overriding this, and calling it). Any thread.
     */
    void failStart(LoadException why) {
        subscribed.completeExceptionally(why);
    }

    /** Completes once the subscription is confirmed. Any thread. */
    final CompletableFuture<Void> subscribed() {
        return subscribed;
    }

    /** Whether a connection was started ({@link #connecting}) or this handler added to one. Any thread. */
    final boolean hasChannel() {
        return channel != null;
    }

    /** Starts closing the connection, for the end of the run; the future completes once it is closed. Any thread. */
    final ChannelFuture closeAsync() {
        Channel ch = channel;
        ch.eventLoop().execute(() -> {
            closedByRun = true;
            ch.close(); // through the whole pipeline: a WebSocket sends its close frame first
        });
        return ch.closeFuture();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (channel == null) {
            channel = ctx.channel();
        }
    }

    /**
     * The subscriber cannot go on checking: counted as a failure (the run is not clean) with
     * {@code reason}, which the message prefixes with its name; the start fails if it had not come
     * yet, and the connection is closed. The first reason wins.
     */
    final void fail(String reason) {
        if (stopped) {
            return;
        }
        stopped = true;
        String message = name + ": " + reason;
        tally.fail(message);
        failStart(new LoadException(message));
        ctx.close();
    }
}
