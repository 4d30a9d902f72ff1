package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What clients sent that no whole message has taken yet, over all connections: WebSocket messages
 * and HTTP requests being reassembled, each up to {@code limits.maxFrameBytes}, bounded together by
 * {@code limits.incompleteMessageBytes}. Before the bound, a hundred upgraded connections that each
 * sent 900 kB of a 1-MB frame and then nothing filled a node's 64 MB of direct memory and stopped it
 * (status 3): each connection's share was bounded, their sum only by {@code limits.maxConnections}.
 *
 * <p>How: a {@link Tracker} at the head of each connection's pipeline counts the bytes each read
 * brings, and its {@link Tracker#wholeMessage()} mark, in front of the HTTP endpoints and the session,
 * zeroes the count when a whole message reaches them. Between two whole messages the count is what the connection's
 * decoders hold, give or take one read (and the few bytes of control frames, which never reach the
 * session: a pong a minute). Past the bound, the connections holding {@link #LARGE_BYTES} or more are
 * closed, the largest first, until the sum is under three quarters of it; when none holds that much,
 * the connection whose read went past it is closed. Closed connections are counted
 * ({@code ringcast_incomplete_message_closes_total}) and logged.
 *
 * <p>Threads: a tracker counts on its channel's event loop; the sum and each tracker's count are
 * atomic, since a loop past the bound closes connections of other loops ({@link Channel#close()} is
 * safe from any thread); one loop at a time chooses whom to close.
 */
final class IncompleteMessages {
    private static final Logger log = LoggerFactory.getLogger(IncompleteMessages.class);
    /** A connection holding less than this of a message is not chosen first: ordinary messages come whole. */
    static final long LARGE_BYTES = 64 * 1024;

    private final long maxBytes;
    private final ServerCounters counters;
    private final AtomicLong bytes = new AtomicLong();
    /** The trackers holding {@link #LARGE_BYTES} or more: whom to close first past the bound. */
    private final Set<Tracker> large = ConcurrentHashMap.newKeySet();

    /** @param maxBytes {@code limits.incompleteMessageBytes} in force */
    IncompleteMessages(long maxBytes, ServerCounters counters) {
        this.maxBytes = maxBytes;
        this.counters = counters;
    }

    /** The counter of {@code channel}'s reads: the first handler of its pipeline, with its {@link Tracker#wholeMessage()} mark. */
    Tracker trackerOf(Channel channel) {
        return new Tracker(channel);
    }

    /** Bytes of incomplete messages held now, over all connections. */
    long bytes() {
        return bytes.get();
    }

    long maxBytes() {
        return maxBytes;
    }

    /** Past the bound: closes the largest holders until the sum is under three quarters of it; whether any was. */
    private synchronized boolean closeLargest() {
        if (bytes.get() <= maxBytes) {
            return true; // another loop closed some meanwhile
        }
        // what each held when looked at: the counts move on their own loops, and a sort's order must not
        record Holder(Tracker tracker, long pending) {
        }
        List<Holder> holders = new ArrayList<>(large.size());
        for (Tracker t : large) {
            holders.add(new Holder(t, t.pending()));
        }
        holders.sort(Comparator.comparingLong(Holder::pending).reversed());
        boolean any = false;
        for (Holder h : holders) {
            if (bytes.get() <= maxBytes / 4 * 3) {
                break;
            }
            any |= h.tracker.close("the connections holding the most");
        }
        return any;
    }

    /** One per connection, on its event loop. */
    final class Tracker extends ChannelInboundHandlerAdapter {
        private final Channel channel;
        private final AtomicLong pending = new AtomicLong();
        private volatile boolean closed;
        /** Tells this tracker a whole message passed: in front of whatever takes whole messages. */
        private final ChannelHandler wholeMessage = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                completed();
                ctx.fireChannelRead(msg);
            }
        };

        Tracker(Channel channel) {
            this.channel = channel;
        }

        ChannelHandler wholeMessage() {
            return wholeMessage;
        }

        long pending() {
            return pending.get();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf read) {
                if (closed) {
                    read.release(); // closed for the bound: what it still sends is dropped
                    return;
                }
                long n = read.readableBytes();
                long now = pending.addAndGet(n);
                if (now >= LARGE_BYTES && now - n < LARGE_BYTES) {
                    large.add(this);
                }
                if (bytes.addAndGet(n) > maxBytes && !closeLargest()) {
                    close("the one whose read went past it");
                }
                if (closed) {
                    read.release();
                    return;
                }
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            completed();
            ctx.fireChannelInactive();
        }

        /** A whole message arrived: what was read before it was taken. */
        void completed() {
            long was = pending.getAndSet(0);
            if (was > 0) {
                bytes.addAndGet(-was);
                if (was >= LARGE_BYTES) {
                    large.remove(this);
                }
            }
        }

        /** Closes the connection for the bound, once; whether this call did. */
        boolean close(String which) {
            if (closed) {
                return false;
            }
            closed = true;
            long held = pending.get();
            completed();
            counters.incompleteMessageCloses.increment();
            log.warn("connection from {} closed: {} bytes of its incomplete messages, {} bytes over all connections "
                    + "past limits.incompleteMessageBytes = {}: {} go first", channel.remoteAddress(), held,
                    bytes.get() + held, maxBytes, which);
            channel.close();
            return true;
        }
    }
}
