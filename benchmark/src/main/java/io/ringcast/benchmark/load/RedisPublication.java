package io.ringcast.benchmark.load;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A publisher's connection of a {@code --target redis} run: each value leaves as
 * {@code PUBLISH channel value} on Netty's RESP encoder, pipelined (the next leaves at its paced time
 * without waiting for the last one's reply; the paced publisher bounds how many are unanswered,
 * {@link PacedPublisher#MAX_IN_FLIGHT}), and the reply, the number of clients Redis handed it to, is
 * its ack. Redis answers a connection's commands in order, so each reply completes the oldest
 * publish unanswered.
 *
 * <p>Redis pub/sub neither keeps a message nor sends one again, and this sends none again either:
 * once the connection is lost, every publish unanswered and every later one fails at once with
 * {@link #lostConnection()}'s reason, and the run fails with it ({@link RedisClients#requirePublishers}).
 * An error reply fails its publish alone.
 *
 * <p>Threads: {@link #publish} from the publisher's thread only; replies and the connection's end
 * on its event loop; {@link #connect} from the run's thread, once; {@link #closeAsync} and
 * {@link #lostConnection()} from any thread.
 */
final class RedisPublication extends ChannelInboundHandlerAdapter implements Publication {
    private final int index;
    private final URI address;
    private final RedisChannels channels;
    private final AtomicLong disconnects;
    /** The publishes sent and not answered yet, oldest first: added by the publisher, taken by the event loop. */
    private final Queue<CompletableFuture<Void>> unanswered = new ConcurrentLinkedQueue<>();
    /** Set by {@link #connect} (or, for a channel made elsewhere, when this handler is added to it). */
    private volatile Channel channel;
    /** Why the connection ended while the run went on; null while it lasts. */
    private volatile String lost;
    /** Whether the run closed the connection (then its end is no failure). */
    private volatile boolean closedByRun;

    /**
     * @param index       the publisher's index in the run, for messages
     * @param address     the {@code redis://} URL it connects to
     * @param channels    the run's channels
     * @param disconnects counted up when the connection is lost
     */
    RedisPublication(int index, URI address, RedisChannels channels, AtomicLong disconnects) {
        this.index = index;
        this.address = address;
        this.channels = channels;
        this.disconnects = disconnects;
    }

    /** Connects on {@code group}; the future completes once connected, or fails with a {@link LoadException}. Once. */
    CompletableFuture<Void> connect(EventLoopGroup group) {
        assert channel == null : "connect() twice";
        CompletableFuture<Void> connected = new CompletableFuture<>();
        ChannelFuture f = RedisClients.connect(group, address, this);
        channel = f.channel();
        f.addListener(done -> {
            if (done.isSuccess()) {
                connected.complete(null);
            } else {
                connected.completeExceptionally(new LoadException("redis publisher " + index + " cannot connect to "
                        + address + ": " + LoadException.describe(done.cause()), done.cause()));
            }
        });
        return connected;
    }

    @Override
    public CompletableFuture<Void> publish(int topic, long counter, byte[] value) {
        String why = lost;
        if (why != null) {
            return CompletableFuture.failedFuture(new LoadException(why));
        }
        CompletableFuture<Void> answer = new CompletableFuture<>();
        unanswered.add(answer); // before the write: its reply cannot come before it is here
        channel.writeAndFlush(RedisClients.publish(channels.name(topic), value), channel.voidPromise());
        if (lost != null) {
            failUnanswered(); // the connection ended after the check above: its own drain may have missed this one
        }
        return answer;
    }

    /** Why the connection ended while the run went on, or null while it lasts. Any thread. */
    String lostConnection() {
        return lost;
    }

    /** Starts closing the connection, for the end of the run; the future completes once it is closed. Any thread. */
    ChannelFuture closeAsync() {
        closedByRun = true;
        return channel.close();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (channel == null) {
            channel = ctx.channel();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof IntegerRedisMessage) {
                CompletableFuture<Void> answer = unanswered.poll();
                if (answer == null) {
                    connectionEnds(ctx, "a reply to no PUBLISH sent");
                } else {
                    answer.complete(null);
                }
            } else if (msg instanceof ErrorRedisMessage error) {
                CompletableFuture<Void> answer = unanswered.poll();
                if (answer != null) {
                    answer.completeExceptionally(new LoadException("Redis refused a PUBLISH: " + error.content()));
                }
            } else {
                connectionEnds(ctx, "an unexpected reply to PUBLISH: " + msg);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!closedByRun && lost == null) {
            disconnects.incrementAndGet();
            lost = "redis publisher " + index + " lost its connection to " + address + ": Redis pub/sub keeps no"
                    + " message and the generator sends none again, so the run cannot go on";
        }
        failUnanswered();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        connectionEnds(ctx, LoadException.describe(cause));
    }

    /** The connection cannot go on: closed, with {@code reason} as the lost connection's. Event loop. */
    private void connectionEnds(ChannelHandlerContext ctx, String reason) {
        if (lost == null && !closedByRun) {
            disconnects.incrementAndGet();
            lost = "redis publisher " + index + " to " + address + ": " + reason;
        }
        ctx.close();
    }

    /** Fails every publish unanswered with the lost connection's reason (or the run's close). Any thread. */
    private void failUnanswered() {
        String why = lost == null ? "redis publisher " + index + ": closed by the run before the reply" : lost;
        for (CompletableFuture<Void> answer; (answer = unanswered.poll()) != null; ) {
            answer.completeExceptionally(new LoadException(why));
        }
    }
}
