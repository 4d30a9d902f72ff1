package io.ringcast.server.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.ringcast.protocol.ErrorCode;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's open sessions: their ids, their channels (counted in {@code /metrics}, told
 * {@code SERVER_SHUTDOWN} at stop), their number in {@link ServerCounters#sessions}, and the
 * {@link FanOutPoller} that serves each event loop.
 *
 * <p>Thread contract: thread-safe; the maps are fixed at construction, the rest is atomic or
 * Netty's concurrent {@link ChannelGroup}.
 */
final class OpenSessions {
    private final ChannelGroup channels;
    private final ServerCounters counters;
    /** One per I/O loop, by loop index. */
    private final FanOutPoller[] pollers;
    private final Map<EventLoop, Integer> loopIndexes = new IdentityHashMap<>();
    private final AtomicLong sessionIds = new AtomicLong();
    /** Welcomed sessions by principal ({@link Permissions#who}; anonymous sessions are one). */
    private final PrincipalShares byPrincipal;
    /** {@code limits.maxSubscriptions}: open subscriptions over all sessions ({@link ServerCounters#subscriptions}). */
    private final int maxSubscriptions;
    /** Open subscriptions by principal, at most {@code limits.maxSubscriptionsPerPrincipal} each. */
    private final PrincipalShares subscriptionsByPrincipal;
    /** Refuses new sessions and subscriptions while the heap is past {@code limits.heapRefusePercent}. */
    private final HeapGuard heap;

    /** No bound per principal: for tests of other things. */
    OpenSessions(ChannelGroup channels, ServerCounters counters, EventLoop[] loops, FanOutPoller[] pollers) {
        this(channels, counters, loops, pollers, Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE, HeapGuard.OFF);
    }

    /**
     * @param loops           the I/O event loops, {@code loops[i]} served by {@code pollers[i]}
     * @param maxPerPrincipal {@code limits.maxConnectionsPerPrincipal}
     * @param maxSubscriptions {@code limits.maxSubscriptions} in force
     * @param maxSubscriptionsPerPrincipal {@code limits.maxSubscriptionsPerPrincipal} in force
     * @param heap            the node's {@link HeapGuard}
     */
    OpenSessions(ChannelGroup channels, ServerCounters counters, EventLoop[] loops, FanOutPoller[] pollers,
                 int maxPerPrincipal, int maxSubscriptions, int maxSubscriptionsPerPrincipal, HeapGuard heap) {
        this.heap = heap;
        this.byPrincipal = new PrincipalShares(maxPerPrincipal);
        this.maxSubscriptions = maxSubscriptions;
        this.subscriptionsByPrincipal = new PrincipalShares(maxSubscriptionsPerPrincipal);
        this.channels = channels;
        this.counters = counters;
        this.pollers = pollers;
        for (int i = 0; i < loops.length; i++) {
            loopIndexes.put(loops[i], pollers[i].loopIndex);
        }
    }

    /** A new session for the channel of {@code ctx}, with the next id; not counted until {@link #add}. */
    Session newSession(ChannelHandlerContext ctx, boolean compressed) {
        Session session = new Session(sessionIds.incrementAndGet(), ctx, loopIndexOf(ctx.channel().eventLoop()),
                compressed);
        ctx.channel().attr(Session.OF_CHANNEL).set(session);
        return session;
    }

    private int loopIndexOf(EventLoop loop) {
        Integer i = loopIndexes.get(loop);
        if (i == null) {
            throw new IllegalStateException("channel on an event loop that has no fan-out poller: " + loop);
        }
        return i;
    }

    /** Counts an opened session and keeps its channel; returns how many are open now, itself included. */
    int add(Session session) {
        int open = counters.sessions.incrementAndGet();
        channels.add(session.channel);
        return open;
    }

    /**
     * Counts a session being welcomed against its principal's {@code limits.maxConnectionsPerPrincipal},
     * unless the principal has that many open already: so anonymous sessions, one principal, cannot
     * take every place of {@code limits.maxConnections} from users who log in. A session counted is
     * welcomed at once, and given back at {@link #remove}: a welcomed session is a counted one.
     *
     * @return whether it was counted
     */
    boolean admit(String principal) {
        return byPrincipal.tryTake(principal);
    }

    /**
     * Why a new WebSocket session of {@code principal} is refused for the node's heap
     * ({@link HeapGuard}, counted), or null when it is not. Asked before {@link #admit}; an HTTP
     * publish's session, which lives for its request, is not refused for the heap.
     */
    String heapRefusal(String principal) {
        return heap.refusing() ? heap.refused("session of " + principal) : null;
    }

    int maxPerPrincipal() {
        return byPrincipal.max();
    }

    /** Uncounts a closed session and its subscriptions (its channel leaves the group by itself). */
    void remove(Session session) {
        if (session.welcomed) {
            byPrincipal.give(session.permissions.who());
        }
        counters.sessions.decrementAndGet();
        int subscriptions = session.openSubscriptionIds.size();
        if (subscriptions > 0) {
            counters.subscriptions.addAndGet(-subscriptions);
            subscriptionsByPrincipal.give(session.permissions.who(), subscriptions);
        }
    }

    /**
     * Counts one more subscription of {@code session}, unless the node holds
     * {@code limits.maxSubscriptions} or its principal {@code limits.maxSubscriptionsPerPrincipal}:
     * each subscription with a selector of its own holds about 1 KB of heap, and a few hundred
     * anonymous sessions of 1,024 subscriptions each filled a 256-MB heap; nor while the heap is past
     * {@code limits.heapRefusePercent} ({@link HeapGuard}). Any thread.
     *
     * @return {@link Verdict#PASSED}, or {@code TOO_MANY_SUBSCRIPTIONS} naming the limit
     */
    Verdict takeSubscription(Session session, String selectorText) {
        if (heap.refusing()) {
            return heap.refusal(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription to '" + selectorText + "'");
        }
        long open;
        do {
            open = counters.subscriptions.get();
            if (open >= maxSubscriptions) {
                return Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription to '" + selectorText
                        + "' refused: the node has " + maxSubscriptions + " open, its limit limits.maxSubscriptions");
            }
        } while (!counters.subscriptions.compareAndSet(open, open + 1));
        String who = session.permissions.who();
        if (!subscriptionsByPrincipal.tryTake(who)) {
            counters.subscriptions.decrementAndGet();
            return Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription to '" + selectorText
                    + "' refused: " + who + " has " + subscriptionsByPrincipal.max()
                    + " open, its share limits.maxSubscriptionsPerPrincipal");
        }
        return Verdict.PASSED;
    }

    /** Uncounts one subscription {@link #takeSubscription} counted. Any thread. */
    void giveSubscription(Session session) {
        counters.subscriptions.decrementAndGet();
        subscriptionsByPrincipal.give(session.permissions.who());
    }

    /** The fan-out reader of the session's event loop. */
    FanOutPoller pollerOf(Session session) {
        return pollers[session.loopIndex];
    }

    /** Every session's channel, for what reads them all (the outbound queue metrics). */
    ChannelGroup channels() {
        return channels;
    }

    /**
     * Tells every session {@code SERVER_SHUTDOWN} on its own loop, gives them up to
     * {@code flushMs} to be told and again to close, then closes what is left. Any thread but an
     * event loop.
     */
    void shutdownAll(long flushMs) {
        if (channels.isEmpty()) {
            return;
        }
        CountDownLatch told = new CountDownLatch(channels.size());
        for (Channel ch : channels) {
            ch.eventLoop().execute(() -> {
                SessionHandler handler = ch.pipeline().get(SessionHandler.class);
                if (handler != null) {
                    handler.shutdown();
                }
                told.countDown();
            });
        }
        try {
            told.await(flushMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // kept for the caller: the sessions are closed all the same
        }
        channels.close().awaitUninterruptibly(flushMs, TimeUnit.MILLISECONDS);
    }
}
