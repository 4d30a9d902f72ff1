package io.ringcast.benchmark.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.redis.ArrayHeaderRedisMessage;
import io.netty.handler.codec.redis.BulkStringHeaderRedisMessage;
import io.netty.handler.codec.redis.BulkStringRedisContent;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.LastBulkStringRedisContent;
import io.netty.util.ReferenceCountUtil;
import io.ringcast.client.UpdateKind;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A subscriber of a {@code --target redis} run: one connection on the generator's event loops with
 * Netty's RESP codec ({@link RedisClients#connect}), that sends {@code PSUBSCRIBE bench.*} once
 * connected, is confirmed by the {@code psubscribe} reply, and hands the value of every
 * {@code pmessage} push to its {@link SubscriberTally}, which makes the same checks as for Ringcast's
 * subscribers. The value's header names its topic, which must be the one of the channel it came on.
 * Redis has no sequence of its own: the tally is given the count of messages this connection
 * received, which only rises (as JetStream's stream sequence, it counts every channel, so the tally's
 * {@code sequenceGaps} mean nothing here).
 *
 * <p>Lean, as a {@link LeanSubscriber}: Netty's decoder is used without its aggregators, so a push
 * comes as its parts, the array's header, then each element (a bulk string as its header, then its
 * content: in one piece when it arrived whole, the usual case, else in chunks, which this gathers
 * into a buffer of its own kept for the next). This reads them as they come, in place: per message
 * it allocates none of a copy of the value, an aggregated array or a string, only the decoder's own
 * small holders of each part.
 *
 * <p>What it cannot check honestly fails it ({@link SubscriberTally#fail}), and the run is not clean:
 * a lost connection (Redis keeps nothing for a subscriber that is away and sends nothing again; it
 * also closes a subscriber that lets its {@code client-output-buffer-limit pubsub} fill), an error
 * reply, a push other than these two, and a value of this run on a channel not its topic's.
 *
 * <p>Threads: as every {@link ChannelSubscriber}'s: {@link #connect} from the run's thread, once;
 * {@link #closeAsync} from any thread, any number of times; everything else on the channel's event
 * loop, one call at a time, as Netty calls a handler. The tally is written on that loop only.
 */
final class RedisSubscriber extends ChannelSubscriber {
    /** What {@link #fail} says of a lost connection. */
    static final String NO_RESEND = "Redis pub/sub keeps no message for a subscriber that is away and sends"
            + " none again, so a lost connection fails the run";

    /** The first element of a message a pattern matched. */
    private static final ByteBuf PMESSAGE = ascii("pmessage");
    /** The first element of the reply to {@code PSUBSCRIBE}. */
    private static final ByteBuf PSUBSCRIBE = ascii("psubscribe");

    /** What an array being read is, from its first element. */
    private enum Push {
        /** {@code pmessage}, pattern, channel, value. */
        PMESSAGE,
        /** {@code psubscribe}, pattern, the connection's subscriptions now (an integer). */
        PSUBSCRIBE,
        /** Anything else: a failure once read. */
        OTHER
    }

    private final RedisChannels channels;
    private final int runId;
    /** The run's count of lost connections. */
    private final AtomicLong disconnects;
    /** Each value's header, read in place. */
    private final ValueHeader header;

    // ------------------------------------------------------------------ event loop only
    /** Elements of the array being read still to come; 0 between pushes. */
    private long elementsLeft;
    /** The position, in its array, of the next element. */
    private int element;
    private Push push;
    /** The first element of an {@link Push#OTHER} push, for the failure that names it. */
    private String otherKind;
    /** The topic of the channel of the {@code pmessage} being read. */
    private int channelTopic;
    /** A bulk string that comes in chunks, gathered; made at the first such string, then reused. */
    private ByteBuf chunks;
    /** Whether the bulk string being read came in chunks so far. */
    private boolean chunked;
    /** Messages received: the sequence handed to the tally. */
    private long received;

    /**
     * @param index       the subscriber's index in the run, for messages
     * @param address     the {@code redis://} URL it connects to
     * @param channels    the run's channels
     * @param runId       the run's id in every value's header
     * @param spec        the run: the values' format
     * @param tally       where every value goes
     * @param disconnects counted up when the connection is lost
     */
    RedisSubscriber(int index, URI address, RedisChannels channels, int runId, LoadSpec spec, SubscriberTally tally,
                    AtomicLong disconnects) {
        super("redis subscriber " + index, address, tally);
        this.channels = channels;
        this.runId = runId;
        this.disconnects = disconnects;
        this.header = new ValueHeader(spec.valueFormat());
    }

    /**
     * Connects on {@code group} and subscribes; the future completes on the {@code psubscribe} reply
     * and fails, with a {@link LoadException}, when the connection or the subscription is refused.
     * Once.
     */
    CompletableFuture<Void> connect(EventLoopGroup group) {
        connecting(RedisClients.connect(group, address, this));
        return subscribed;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(RedisClients.command("PSUBSCRIBE", RedisChannels.PATTERN), ctx.voidPromise());
        ctx.fireChannelActive();
    }

    /** Every part is released here, whatever it is. */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (stopped) {
                return;
            }
            if (msg instanceof ArrayHeaderRedisMessage array) {
                startArray(array);
            } else if (msg instanceof BulkStringHeaderRedisMessage) {
                chunked = false;
            } else if (msg instanceof LastBulkStringRedisContent last) { // a whole bulk string too: $-1 and $0
                if (chunked) {
                    chunks.writeBytes(last.content(), last.content().readerIndex(), last.content().readableBytes());
                    bulkString(chunks);
                    chunks.clear();
                    chunked = false;
                } else {
                    bulkString(last.content());
                }
            } else if (msg instanceof BulkStringRedisContent part) {
                if (chunks == null) {
                    chunks = Unpooled.buffer(part.content().readableBytes() * 2);
                }
                chunks.writeBytes(part.content(), part.content().readerIndex(), part.content().readableBytes());
                chunked = true;
            } else if (msg instanceof IntegerRedisMessage integer) {
                integer(integer.value());
            } else if (msg instanceof ErrorRedisMessage error) {
                fail("Redis answered with an error: " + error.content());
            } else {
                fail("unexpected reply from Redis: " + msg);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void startArray(ArrayHeaderRedisMessage array) {
        if (elementsLeft > 0) {
            fail("an array inside a push, which Redis pub/sub never sends");
            return;
        }
        elementsLeft = Math.max(0, array.length()); // a null array (-1) is no push
        element = 0;
        push = Push.OTHER;
        otherKind = null;
        channelTopic = RedisChannels.NOT_A_RUN_CHANNEL;
    }

    /** An element of the push being read; {@code bytes} are read in place, not kept. */
    private void bulkString(ByteBuf bytes) {
        if (!nextElement()) {
            fail("a bulk string outside of a push, which a subscribed connection is never sent");
            return;
        }
        int at = element - 1;
        if (at == 0) {
            push = ByteBufUtil.equals(bytes, PMESSAGE) ? Push.PMESSAGE
                    : ByteBufUtil.equals(bytes, PSUBSCRIBE) ? Push.PSUBSCRIBE : Push.OTHER;
            if (push == Push.OTHER) {
                otherKind = bytes.toString(StandardCharsets.UTF_8);
            }
        } else if (push == Push.PMESSAGE && at == 2) {
            channelTopic = channels.topicIndex(bytes);
        } else if (push == Push.PMESSAGE && at == 3) {
            value(bytes);
        }
        endOfElement();
    }

    /** An integer element: the {@code psubscribe} reply's last. */
    private void integer(long value) {
        if (!nextElement()) {
            fail("an integer reply (" + value + ") outside of a push, which a subscribed connection is never sent");
            return;
        }
        if (push == Push.PSUBSCRIBE && element - 1 == 2) {
            subscribed.complete(null);
        }
        endOfElement();
    }

    /** Counts the element now read; false when no push is being read. */
    private boolean nextElement() {
        if (elementsLeft == 0) {
            return false;
        }
        element++;
        return true;
    }

    private void endOfElement() {
        if (--elementsLeft == 0 && push == Push.OTHER && !stopped) {
            fail("an unexpected push '" + otherKind + "' of " + element + " elements");
        }
    }

    /** A {@code pmessage}'s value: to the tally if it is this run's. No allocation. */
    private void value(ByteBuf value) {
        long receivedNs = System.nanoTime();
        received++;
        if (!header.read(value, value.readerIndex(), value.readableBytes()) || header.runId != runId) {
            tally.foreignValue(); // another run's, or no generator's
            return;
        }
        int t = header.topicIndex;
        if (t != channelTopic) {
            fail("a value whose header names topic index " + t + " came on "
                    + (channelTopic == RedisChannels.NOT_A_RUN_CHANNEL ? "a channel of no topic of the run"
                    : "channel " + channels.nameOf(channelTopic)));
            return;
        }
        tally.onValue(t, header.counter, received, UpdateKind.UPDATE, receivedNs, header.intendedSendNs);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!stopped && !closedByRun) {
            disconnects.incrementAndGet();
            fail("lost its connection to " + address + "; " + NO_RESEND);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (chunks != null) {
            chunks.release();
            chunks = null;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(LoadException.describe(cause));
    }

    private static ByteBuf ascii(String s) {
        return Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.US_ASCII)));
    }
}
