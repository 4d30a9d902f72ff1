package io.ringcast.benchmark.load;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.RedisDecoder;
import io.netty.handler.codec.redis.RedisEncoder;
import io.netty.handler.codec.redis.RedisMessage;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The connections of one {@code --target redis} run, one per publisher ({@link RedisPublication}) and
 * per subscriber ({@link RedisSubscriber}) as in a Ringcast run, all on the event loop group the
 * generator gives every client: a handful of threads for any number of connections, so ten thousand
 * subscribers need ten thousand sockets and no thread of their own. Client {@code i} connects to
 * {@code servers[i % n]}, and never to another (Redis clients do not fail over; servers that are not
 * one Redis Cluster do not share their pub/sub either). Every connection's pipeline is Netty's RESP
 * codec and the client ({@link #connect}). No {@code AUTH}, no {@code SELECT}: a server of defaults.
 *
 * <p>Threads: {@link #subscribe}, {@link #publication} and {@link #requirePublishers} from the run's
 * thread; {@link #close} from any thread, any number of times.
 */
final class RedisClients implements AutoCloseable {
    /** Redis's port when a URL names none. */
    static final int DEFAULT_PORT = 6379;
    /** How long {@link #close} waits for each connection to close. */
    static final long CLOSE_TIMEOUT_MS = 2000;
    private static final byte[] PUBLISH = "PUBLISH".getBytes(StandardCharsets.US_ASCII);

    private final LoadSpec spec;
    private final int runId;
    private final AtomicLong disconnects;
    private final EventLoopGroup group;
    private final RedisChannels channels;
    private final List<RedisSubscriber> subscribers = new ArrayList<>();
    private final List<RedisPublication> publications = new ArrayList<>();

    /** @param disconnects counted up when a connection is lost while the run goes on */
    RedisClients(LoadSpec spec, int runId, AtomicLong disconnects, EventLoopGroup group) {
        this.spec = spec;
        this.runId = runId;
        this.disconnects = disconnects;
        this.group = group;
        this.channels = new RedisChannels(spec);
    }

    /**
     * Subscriber {@code i}: starts connecting; the future completes once its {@code PSUBSCRIBE} is
     * confirmed, and fails with a {@link LoadException} when it cannot be.
     */
    CompletableFuture<Void> subscribe(int i, SubscriberTally tally) {
        RedisSubscriber subscriber = new RedisSubscriber(i, address(i), channels, runId, spec, tally, disconnects);
        subscribers.add(subscriber);
        return subscriber.connect(group);
    }

    /** Publisher {@code p}'s connection: starts connecting; {@link RedisPublication#connect} says when it is. */
    RedisPublication publication(int p, List<CompletableFuture<Void>> connected) {
        RedisPublication publication = new RedisPublication(p, address(p), channels, disconnects);
        publications.add(publication);
        connected.add(publication.connect(group));
        return publication;
    }

    /** @throws LoadException naming the first publisher whose connection was lost while the run went on */
    void requirePublishers() throws LoadException {
        for (RedisPublication p : publications) {
            String lost = p.lostConnection();
            if (lost != null) {
                throw new LoadException(lost);
            }
        }
    }

    private URI address(int i) {
        return URI.create(spec.addressesFor(i)[0]);
    }

    /**
     * Closes every connection, all at once, and waits until they are closed: what is unanswered then
     * fails, and each subscriber's tally may be read after it returns.
     */
    @Override
    public void close() {
        List<ChannelFuture> closing = new ArrayList<>(subscribers.size() + publications.size());
        for (RedisPublication p : publications) {
            closing.add(p.closeAsync());
        }
        for (RedisSubscriber s : subscribers) {
            closing.add(s.closeAsync()); // idempotent
        }
        for (ChannelFuture closed : closing) {
            closed.awaitUninterruptibly(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Connects to {@code address} on {@code group} ({@link LeanSubscriber#bootstrap}: the generator's
     * transport and socket options) with the whole pipeline of a Redis connection, in order:
     * {@code resp-decoder}, Netty's RESP decoder without its aggregators (a reply comes as its parts,
     * which {@code client} reads in place); {@code resp-encoder}, Netty's, for the commands; and
     * {@code client}, the subscriber or publisher.
     */
    static ChannelFuture connect(EventLoopGroup group, URI address, ChannelHandler client) {
        return LeanSubscriber.bootstrap(group)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast("resp-decoder", new RedisDecoder())
                                .addLast("resp-encoder", new RedisEncoder())
                                .addLast("client", client);
                    }
                })
                .connect(address.getHost(), address.getPort() > 0 ? address.getPort() : DEFAULT_PORT);
    }

    /** A command of ASCII words: {@code PSUBSCRIBE bench.*}. */
    static RedisMessage command(String... words) {
        List<RedisMessage> parts = new ArrayList<>(words.length);
        for (String w : words) {
            parts.add(new FullBulkStringRedisMessage(Unpooled.wrappedBuffer(w.getBytes(StandardCharsets.US_ASCII))));
        }
        return new ArrayRedisMessage(parts);
    }

    /**
     * {@code PUBLISH channel value}: the command's parts wrap the arrays given, copying nothing (the
     * encoder writes them out as they are, and neither is written to again).
     */
    static RedisMessage publish(byte[] channel, byte[] value) {
        return new ArrayRedisMessage(List.of(new FullBulkStringRedisMessage(Unpooled.wrappedBuffer(PUBLISH)),
                new FullBulkStringRedisMessage(Unpooled.wrappedBuffer(channel)),
                new FullBulkStringRedisMessage(Unpooled.wrappedBuffer(value))));
    }
}
