package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.ssl.SslContext;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.server.config.Features;
import io.ringcast.server.config.ServerConfig;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What every connection's handlers share: the config, the inbound ring, the loop-to-poller map
 * and the counters. Immutable after start except for the thread-safe members.
 */
final class ServerContext {
    final ServerConfig config;
    final RingBuffer<InboundEvent> inbound;
    final ServerCounters counters;
    final ChannelGroup channels;
    final long startedAtMs = System.currentTimeMillis();
    /** One per I/O loop, by loop index. */
    final FanOutPoller[] pollers;
    /** {@code limits.outboundQueueBytes}, checked after every write to a session. */
    final OutboundLimit outboundLimit;
    /**
     * The {@code features} section in force: hot reloads replace it. Read when a connection
     * negotiates compression; the sequencer gets its own copy through the inbound ring.
     */
    volatile Features features;
    /** {@code /metrics}: reads {@link #counters} when scraped. */
    final ServerMetrics metrics;
    /** TLS for every connection ({@code security.tlsCertificateFile}), or null for plain TCP. */
    final SslContext tls;
    /** Who a client is and what it may do, from its {@code HELLO}. */
    final Authenticator authenticator;
    /** Where password hashes are checked, off the event loops. */
    final Executor authExecutor;
    /** This node's part in the cluster, or null for a single node. */
    final ClusterNode cluster;
    /** {@code security.allowedOrigins}, or null when any origin may connect. */
    final OriginCheck originCheck;
    private final Map<EventLoop, Integer> loopIndexes;
    private final AtomicLong sessionIds = new AtomicLong();

    ServerContext(ServerConfig config, RingBuffer<InboundEvent> inbound, ServerCounters counters,
                  ChannelGroup channels, FanOutPoller[] pollers, EventLoop[] loops, OutboundLimit outboundLimit,
                  SslContext tls,
                  Authenticator authenticator, Executor authExecutor, ClusterNode cluster) {
        this.cluster = cluster;
        this.authenticator = authenticator;
        this.authExecutor = authExecutor;
        this.config = config;
        this.inbound = inbound;
        this.counters = counters;
        this.channels = channels;
        this.pollers = pollers;
        this.outboundLimit = outboundLimit;
        this.features = config.features();
        counters.readQueuesOf(channels, inbound);
        this.metrics = new ServerMetrics(counters, cluster);
        this.tls = tls;
        List<String> origins = config.security().allowedOrigins();
        this.originCheck = origins.isEmpty() ? null : new OriginCheck(origins, counters);
        this.loopIndexes = new IdentityHashMap<>();
        for (int i = 0; i < loops.length; i++) {
            loopIndexes.put(loops[i], pollers[i].loopIndex);
        }
    }

    int loopIndexOf(EventLoop loop) {
        Integer i = loopIndexes.get(loop);
        if (i == null) {
            throw new IllegalStateException("channel on an event loop that has no fan-out poller: " + loop);
        }
        return i;
    }

    long nextSessionId() {
        return sessionIds.incrementAndGet();
    }
}
