package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A slot of the inbound ring: one command from an I/O thread to the sequencer. Preallocated by
 * the ring and reused; the sequencer clears the references it consumed.
 */
final class InboundEvent {
    static final int NOOP = 0;
    static final int PUBLISH = 1;
    static final int SUBSCRIBE = 2;
    static final int UNSUBSCRIBE = 3;
    static final int SESSION_CLOSED = 4;
    /** A hot reload of the {@code features} section: {@link #features} resolves the topics anew. */
    static final int FEATURES = 5;
    /**
     * Cluster: the ack of a publish of {@link #session} ({@link #id}), with the sequence in
     * {@link #fixedSequence}, after the update it acks, which the log put on this ring before.
     */
    static final int CLUSTER_ACK = 6;
    /** The cluster's snapshot: {@link #snapshot} asks the sequencer to capture the topics, or to take over a snapshot's. */
    static final int TOPIC_SNAPSHOT = 7;
    /**
     * The last window of {@link #session}'s streamed subscribe reply reached its socket: the
     * sequencer produces the next ({@link Subscriptions#continueReplies}).
     */
    static final int CONTINUE_REPLIES = 8;
    /** A held value of a view with {@code maxRate} may be due: {@link ViewedUpdates#flushDue}. */
    static final int FLUSH_HELD = 9;
    /** Sessions wait for their turn to produce a window of a streamed reply: {@link Subscriptions#takeTurn}, at the end of the batch. */
    static final int REPLY_TURN = 10;
    /**
     * Removes the topics {@link #selector} matches that {@link #session} may publish to (all of them
     * without a session); in a cluster, hands them to {@link #removalRoute} instead. Without a
     * selector: the topic at {@link #path}, a removal the cluster's log applied.
     */
    static final int REMOVE = 11;

    int kind;
    Session session;
    /** Publish correlation id, or subscription id. */
    int id;
    /** {@link System#nanoTime()} when a publish was read, for the latency histogram; 0 when unknown. */
    long receivedNanos;
    /**
     * Cluster: the sequence the partition's owner gave this update, which every node applies as
     * it is; 0 for a publish this node sequences itself.
     */
    long fixedSequence;
    /** A {@code REPUBLISH}: applied unless the publisher's ledger has its correlation id. */
    boolean republish;
    /** Cluster: the incarnation the log gave the topic of a {@link #PUBLISH} that creates it (0: not known). */
    int fixedIncarnation;
    /**
     * Cluster: a session's {@link #REMOVE} is not applied by the sequencer but logged: the sequencer
     * hands the paths it matches (that the session may publish to) to this, which logs their
     * removals on the session's event loop. Null for a single node's, and for a removal the log applied.
     */
    Consumer<List<String>> removalRoute;
    /**
     * A {@code REPUBLISH} over {@code limits.publishRatePerSession}: the ledger still answers it (it
     * may have been applied the first time), but it is not applied now.
     */
    boolean overRate;
    String path;
    String[] segments;
    /** A retained slice of the publisher's frame; the sequencer releases it. */
    ByteBuf value;
    Selector selector;
    Map<String, Long> resume;
    /** A subscribe's view ({@link Views#acquire}, one use taken over), or null for a plain subscription. */
    View view;
    /** A subscribe's options ({@link SubscribeOptions#NONE} for none): its rewind shapes the reply. */
    SubscribeOptions options;
    FeatureResolver features;
    TopicSnapshotRequest snapshot;

    void clear() {
        kind = NOOP;
        receivedNanos = 0;
        fixedSequence = 0;
        fixedIncarnation = 0;
        removalRoute = null;
        republish = false;
        overRate = false;
        session = null;
        path = null;
        segments = null;
        value = null;
        selector = null;
        resume = null;
        view = null;
        options = null;
        features = null;
        snapshot = null;
    }
}
