package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.channel.Channel;
import io.prometheus.metrics.core.metrics.Histogram;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.ServerCounter;
import io.ringcast.server.ServerStats;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The node's running totals. Each hot counter has a single writer that adds once per batch, so
 * counting costs nothing per message; readers ({@code /metrics}, {@code /health}, stats) may lag a
 * batch. What each figure is called and how it is reported is declared once, in
 * {@link ServerCounter}; this class only counts.
 */
public final class ServerCounters {
    private volatile long publishes;
    private volatile int topics;
    /** The node's views, once it started; read for {@link #views()}. */
    private volatile Views views;
    private volatile SubscribeMemory subscribeMemory;
    private volatile FanOutProxy fanOut;
    final AtomicInteger sessions = new AtomicInteger();
    final LongAdder deliveries = new LongAdder();
    /** The WebSocket frames that carried {@link #deliveries}: fewer where a run of updates shared one. */
    final LongAdder deliveredFrames = new LongAdder();
    /** Bytes of the frames counted in {@link #deliveries}, as written to the sockets (headers included). */
    final LongAdder deliveredBytes = new LongAdder();
    final LongAdder slowConsumerDisconnects = new LongAdder();
    final LongAdder protocolErrors = new LongAdder();
    /** {@code ERROR}s sent, by code: each limit has its own code, so this counts refusals per limit. */
    private final LongAdder[] errors = new LongAdder[ErrorCode.values().length];

    {
        for (int i = 0; i < errors.length; i++) {
            errors[i] = new LongAdder();
        }
    }
    /** Open subscriptions over all sessions. */
    final AtomicLong subscriptions = new AtomicLong();
    /** Payload bytes of the binary frames clients sent. */
    final LongAdder receivedBytes = new LongAdder();
    /**
     * From a publish's receipt on its I/O thread to its update's write to the subscribers of one
     * event loop: once per update and loop, never per subscriber.
     */
    final Histogram publishToWrite = Histogram.builder()
            .name("ringcast_publish_to_write_seconds")
            .help("From a publish's receipt to its update's write to the subscribers' sockets, per event loop.")
            .classicUpperBounds(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                    0.25, 0.5, 1, 2.5)
            .classicOnly()
            .build();
    /**
     * Connections accepted whose WebSocket upgrade has not completed (plain HTTP or mid-upgrade),
     * at most {@code limits.maxConnectionsBeforeUpgrade}: taken and released by {@link HttpPhaseDeadline} only.
     */
    final AtomicInteger connectionsBeforeUpgrade = new AtomicInteger();
    /** Connections closed on accept because {@code limits.maxConnectionsBeforeUpgrade} were already open. */
    final LongAdder connectionsRefusedBeforeUpgrade = new LongAdder();
    /** Connections closed because their HTTP phase outlasted {@code limits.handshakeTimeoutMs}. */
    final LongAdder httpTimeouts = new LongAdder();
    /** WebSocket upgrades refused because the page's origin is not in {@code security.allowedOrigins}. */
    final LongAdder originRefusals = new LongAdder();
    /** {@code REPUBLISH}es of publishes applied before: answered with their sequence, not applied again (single node). */
    final LongAdder republishesRecognised = new LongAdder();
    /** Publisher ledgers held for {@code REPUBLISH}, attached and detached; written by the sequencer. */
    private volatile int publisherLedgers;
    /** Publisher ledgers forgotten to stay within {@code limits.publisherLedgers*}; written by the sequencer. */
    private volatile long publisherLedgersForgotten;
    /** {@code PING}s received from clients. */
    final LongAdder clientPings = new LongAdder();
    /** WebSocket pings the server sent to sessions silent for half the idle timeout. */
    final LongAdder idlePings = new LongAdder();
    /** Updates a session did not receive because a newer value of the topic replaced them (conflation). */
    final LongAdder conflatedUpdates = new LongAdder();
    /** {@code features} changes applied from the config file while running. */
    final LongAdder configReloads = new LongAdder();
    /** Edits of the config file refused (invalid); the settings in force stayed. */
    final LongAdder configReloadsRefused = new LongAdder();
    private volatile int valuesCached;
    /** What all topics' histories take, and their older updates let go for {@code history.nodeMaxBytes}; written by the sequencer. */
    private volatile long historyBytes;
    private volatile long historyEntries;
    private volatile long historyUpdatesLetGo;
    private volatile long historyValuesLetGo;
    /** Written by the sequencer thread only. */
    private volatile long topicsRemoved;
    private volatile long topicsExpired;
    /** Written by the heap give-back's thread, one at a time. */
    private volatile long heapGiveBacks;
    /** Sessions whose subscribe reply is being streamed; written by the sequencer. */
    private volatile int subscribeRepliesPending;
    /**
     * Bytes of streamed subscribe-reply windows produced and not yet written to their sockets:
     * added by the sequencer as it produces a window, taken off on the session's event loop once
     * the window's last frame was written (or dropped with its session).
     */
    private final AtomicLong subscribeReplyWindowBytes = new AtomicLong();
    private volatile long deltasSent;
    private volatile long deltaBytesSaved;
    private volatile long compressedFrames;
    private volatile long compressionBytesIn;
    private volatile long compressionBytesOut;
    /** The sessions' channels, for their outbound queues; attached once at start. */
    private volatile Iterable<Channel> channels = List.of();
    /** The inbound ring, for its free slots; attached once at start. */
    private volatile RingBuffer<?> inbound;

    /**
     * The gauges read from their owners rather than counted: the sessions' outbound queues and the
     * inbound ring's free slots. Called once, at start.
     */
    void readQueuesOf(Iterable<Channel> channels, RingBuffer<?> inbound) {
        this.channels = channels;
        this.inbound = inbound;
    }

    /** Reads {@link #views} from the node's views from now on. Once, at start. */
    void viewsOf(Views views) {
        this.views = views;
    }

    /** New sessions, subscriptions and topics refused because the heap was past {@code limits.heapRefusePercent} ({@link HeapGuard}). */
    final LongAdder heapRefusals = new LongAdder();
    private volatile HeapGuard heapGuard;

    /** The node's {@link HeapGuard}, once it started; read for {@link #heapAfterCollectionBytes()} and {@link #heapRefusing()}. */
    void heapGuardOf(HeapGuard guard) {
        this.heapGuard = guard;
    }

    public long heapRefusals() {
        return heapRefusals.sum();
    }

    /** Heap bytes in use after the last collection (0 before the first, or with the guard off). Any thread. */
    public long heapAfterCollectionBytes() {
        HeapGuard g = heapGuard;
        return g == null ? 0 : g.usedAfterCollection();
    }

    /** 1 while new sessions, subscriptions and topics are refused for the heap, else 0. Any thread. */
    public long heapRefusing() {
        HeapGuard g = heapGuard;
        return g != null && g.refusing() ? 1 : 0;
    }

    /** Sessions closed at once because the JVM's direct memory was nearly out ({@link DirectMemoryGuard}). */
    final LongAdder directMemoryCloses = new LongAdder();

    public long directMemoryCloses() {
        return directMemoryCloses.sum();
    }

    /** Connections closed because all connections' incomplete messages were past {@code limits.incompleteMessageBytes}. */
    final LongAdder incompleteMessageCloses = new LongAdder();
    private volatile IncompleteMessages incompleteMessages;

    /** The node's {@link IncompleteMessages}, once it started; read for {@link #incompleteMessageBytes()}. */
    void incompleteMessagesOf(IncompleteMessages messages) {
        this.incompleteMessages = messages;
    }

    public long incompleteMessageBytes() {
        IncompleteMessages m = incompleteMessages;
        return m == null ? 0 : m.bytes();
    }

    public long incompleteMessageCloses() {
        return incompleteMessageCloses.sum();
    }

    /** The node's {@link SubscribeMemory}, once it started; read for {@link #subscribeKeptBytes()}. */
    void subscribeMemoryOf(SubscribeMemory memory) {
        this.subscribeMemory = memory;
    }

    /** Bytes clients' subscribe requests make the node keep now ({@link SubscribeMemory}). Any thread. */
    public long subscribeKeptBytes() {
        SubscribeMemory m = subscribeMemory;
        return m == null ? 0 : m.total();
    }

    /** The node's fan-out ring, once it started; read for {@link #fanOutRingBytes()}. */
    void fanOutOf(FanOutProxy fanOut) {
        this.fanOut = fanOut;
    }

    /** Bytes of updates on the fan-out ring not yet written by every reader ({@link FanOutProxy#bytes}). Any thread. */
    public long fanOutRingBytes() {
        FanOutProxy f = fanOut;
        return f == null ? 0 : f.bytes();
    }

    /** Distinct subscription views served now. Any thread. */
    public int views() {
        Views v = views;
        return v == null ? 0 : v.size();
    }

    /** Every figure read once, now. Any thread. */
    public ServerStats snapshot() {
        return new ServerStats(counter -> counter.read(this), this::errors);
    }

    /** Sequencer thread only. */
    void addPublishes(long n) {
        if (n != 0) {
            publishes = publishes + n;
        }
    }

    /**
     * An update sent as a delta, {@code savedPerDelivery} bytes shorter than its value, to
     * {@code deliveries} subscribers. Sequencer thread only.
     */
    void deltaSent(int savedPerDelivery, int deliveries) {
        deltasSent = deltasSent + 1;
        deltaBytesSaved = deltaBytesSaved + (long) savedPerDelivery * deliveries;
    }

    /**
     * A frame of {@code bytesIn} payload bytes compressed to {@code bytesOut}, or -1 when it was not
     * (too small or no gain): it is then sent as it is. Sequencer thread only.
     */
    void compressed(int bytesIn, int bytesOut) {
        compressionBytesIn = compressionBytesIn + bytesIn;
        if (bytesOut >= 0) {
            compressedFrames = compressedFrames + 1;
            compressionBytesOut = compressionBytesOut + bytesOut;
        } else {
            compressionBytesOut = compressionBytesOut + bytesIn;
        }
    }

    /** Topics that gained ({@code +1}) or dropped ({@code -1}) a cached value. Sequencer thread only. */
    void valuesCached(int change) {
        valuesCached = valuesCached + change;
    }

    /**
     * What all topics' histories take now, and the older updates and newest values let go so far to
     * keep them within the node's bound. Sequencer thread only.
     */
    void history(long bytes, long entries, long updatesLetGo, long valuesLetGo) {
        historyBytes = bytes;
        historyEntries = entries;
        historyUpdatesLetGo = updatesLetGo;
        historyValuesLetGo = valuesLetGo;
    }

    /** Sessions with a streamed subscribe reply pending. Sequencer thread only. */
    void subscribeRepliesPending(int n) {
        subscribeRepliesPending = n;
    }

    /** A window of a streamed subscribe reply, {@code bytes} long, is on its way to a socket. Sequencer thread. */
    void replyWindowProduced(int bytes) {
        subscribeReplyWindowBytes.addAndGet(bytes);
    }

    /** That window was written to its socket, or dropped with its session. The session's event loop. */
    void replyWindowWritten(int bytes) {
        subscribeReplyWindowBytes.addAndGet(-bytes);
    }

    public int subscribeRepliesPending() {
        return subscribeRepliesPending;
    }

    public long subscribeReplyWindowBytes() {
        return subscribeReplyWindowBytes.get();
    }

    /** Sequencer thread only. */
    void topics(int n) {
        topics = n;
    }

    /** Sequencer thread only. */
    void topicsRemoved(int n) {
        topicsRemoved = topicsRemoved + n;
    }

    /** Sequencer thread only. */
    void topicsExpired(int n) {
        topicsExpired = topicsExpired + n;
    }

    /** {@link HeapGiveBack}'s thread only (one runs at a time). */
    void heapGivenBack() {
        heapGiveBacks = heapGiveBacks + 1;
    }

    public long heapGiveBacks() {
        return heapGiveBacks;
    }

    public long topicsRemoved() {
        return topicsRemoved;
    }

    public long topicsExpired() {
        return topicsExpired;
    }

    public long publishes() {
        return publishes;
    }

    public int topics() {
        return topics;
    }

    public int sessions() {
        return sessions.get();
    }

    public long deliveries() {
        return deliveries.sum();
    }

    public long deliveredFrames() {
        return deliveredFrames.sum();
    }

    public long deliveredBytes() {
        return deliveredBytes.sum();
    }

    public long slowConsumerDisconnects() {
        return slowConsumerDisconnects.sum();
    }

    public long protocolErrors() {
        return protocolErrors.sum();
    }

    /** Counts an {@code ERROR} sent to a client. Any thread. */
    void error(ErrorCode code) {
        protocolErrors.increment();
        errors[code.ordinal()].increment();
    }

    /** {@code ERROR}s sent with {@code code}. */
    public long errors(ErrorCode code) {
        return errors[code.ordinal()].sum();
    }

    public long subscriptions() {
        return subscriptions.get();
    }

    public long receivedBytes() {
        return receivedBytes.sum();
    }

    public int connectionsBeforeUpgrade() {
        return connectionsBeforeUpgrade.get();
    }

    public long connectionsRefusedBeforeUpgrade() {
        return connectionsRefusedBeforeUpgrade.sum();
    }

    public long httpTimeouts() {
        return httpTimeouts.sum();
    }

    public long originRefusals() {
        return originRefusals.sum();
    }

    public long republishesRecognised() {
        return republishesRecognised.sum();
    }

    /** Sequencer thread only. */
    void publisherLedgers(int held, long forgotten) {
        publisherLedgers = held;
        publisherLedgersForgotten = forgotten;
    }

    /** Publisher ledgers held for {@code REPUBLISH} (single node). */
    public int publisherLedgers() {
        return publisherLedgers;
    }

    /** Publisher ledgers forgotten to stay within the bounds: their {@code REPUBLISH}es get {@code PUBLISH_OUTCOME_UNKNOWN}. */
    public long publisherLedgersForgotten() {
        return publisherLedgersForgotten;
    }

    public long clientPings() {
        return clientPings.sum();
    }

    public long idlePings() {
        return idlePings.sum();
    }

    /** Topics whose newest value is cached (last-value cache on and a value published). */
    public int valuesCached() {
        return valuesCached;
    }

    public long historyBytes() {
        return historyBytes;
    }

    /** Updates all topics' histories hold, newest values included. */
    public long historyEntries() {
        return historyEntries;
    }

    public long historyUpdatesLetGo() {
        return historyUpdatesLetGo;
    }

    public long historyValuesLetGo() {
        return historyValuesLetGo;
    }

    public long configReloads() {
        return configReloads.sum();
    }

    public long configReloadsRefused() {
        return configReloadsRefused.sum();
    }

    public long conflatedUpdates() {
        return conflatedUpdates.sum();
    }

    public long deltasSent() {
        return deltasSent;
    }

    /** Bytes deltas kept off the wire: (value - delta) for each delivery of a delta. */
    public long deltaBytesSaved() {
        return deltaBytesSaved;
    }

    /** Frames sent compressed (each once, however many sessions receive it). */
    public long compressedFrames() {
        return compressedFrames;
    }

    /** Payload bytes of the frames offered to compression. */
    public long compressionBytesIn() {
        return compressionBytesIn;
    }

    /** What they became: compressed, or unchanged when compressing did not pay. */
    public long compressionBytesOut() {
        return compressionBytesOut;
    }

    public long outboundQueuedBytes() {
        return OutboundQueues.of(channels).totalBytes();
    }

    public long outboundQueueLargestBytes() {
        return OutboundQueues.of(channels).largestBytes();
    }

    /** Free slots of the inbound ring (0 before start). */
    public long inboundRingRemaining() {
        RingBuffer<?> ring = inbound;
        return ring == null ? 0 : ring.remainingCapacity();
    }
}
