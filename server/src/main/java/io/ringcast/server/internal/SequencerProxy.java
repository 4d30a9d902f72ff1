package io.ringcast.server.internal;

import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Every command for the sequencer thread, and the only code that claims, fills and publishes slots
 * of the inbound ring ({@link InboundEvent}): a session's publishes, subscriptions and close, the
 * demo's quotes, a features reload, the updates the cluster applies and its snapshots. What a slot
 * holds for each command is written here once.
 *
 * <p>Two ways in, by who calls:
 * <ul>
 *   <li>the {@code try*} methods and {@link #tryClaim} never wait: a full ring is a result
 *       ({@code false}, {@link #RING_FULL}), on which an event loop pauses its reads and the demo
 *       skips its tick. Event loops must only use these: a loop is also a fan-out reader, so
 *       waiting on it could deadlock the sequencer;</li>
 *   <li>{@link #reloadFeatures}, {@link #applyFromCluster}, {@link #ackFromCluster} and
 *       {@link #snapshotTopics} wait for room ({@code next()}): for threads that may block, the
 *       config watcher or a caller of {@code applyFeatures}, and the cluster threads (the engine's,
 *       which then stops reading its peers until the sequencer catches up, and the one that answers
 *       this node's publishes).</li>
 * </ul>
 * A claimed slot is always published, as {@link InboundEvent#NOOP} when its command was refused or
 * failed, so the ring never stalls on a hole.
 *
 * <p>Thread contract: the ring is multi-producer; any thread may call, each on its own claimed
 * slot. {@link #releaseUnconsumed} only once every producer and the sequencer have stopped.
 */
final class SequencerProxy {
    /** How soon a caller that found the ring full tries again: soon, as the sequencer drains it fast. */
    static final long RING_FULL_RETRY_US = 100;
    /** What {@link #tryClaim} returns when the ring has no free slot. */
    static final long RING_FULL = -1;

    private final RingBuffer<InboundEvent> ring;

    SequencerProxy(RingBuffer<InboundEvent> ring) {
        this.ring = ring;
    }

    // ------------------------------------------------------------------ a message being decoded

    /**
     * Claims a slot, cleared to a {@link InboundEvent#NOOP}, for a message about to be decoded: it
     * is filled by one of the {@code fill*} methods if the message passes its checks, and must be
     * {@link #commit committed} whatever happens. Never waits.
     *
     * @return the slot, or {@link #RING_FULL}
     */
    long tryClaim() {
        long slot;
        try {
            slot = ring.tryNext();
        } catch (InsufficientCapacityException full) {
            return RING_FULL;
        }
        ring.get(slot).clear();
        return slot;
    }

    /** A session's publish into a claimed slot; {@code value} is a retained slice the sequencer releases. */
    void fillPublish(long slot, Session session, int correlationId, String path, String[] segments, ByteBuf value,
                     boolean republish, boolean overRate) {
        InboundEvent e = command(slot, InboundEvent.PUBLISH, session, correlationId);
        e.receivedNanos = System.nanoTime();
        e.path = path;
        e.segments = segments;
        e.value = value;
        e.republish = republish;
        e.overRate = overRate;
    }

    /**
     * A session's subscription into a claimed slot: {@code view} (one use, taken over) or null for a
     * plain one, and the {@code options} it came with.
     */
    void fillSubscribe(long slot, Session session, int subscriptionId, Selector selector, Map<String, Long> resume,
                       View view, SubscribeOptions options) {
        InboundEvent e = command(slot, InboundEvent.SUBSCRIBE, session, subscriptionId);
        e.selector = selector;
        e.resume = resume;
        e.view = view;
        e.options = options;
    }

    /** A session's {@code REMOVE} into a claimed slot; in a cluster with the {@code route} that logs its removals. */
    void fillRemove(long slot, Session session, int correlationId, Selector selector,
                    Consumer<List<String>> route) {
        InboundEvent e = command(slot, InboundEvent.REMOVE, session, correlationId);
        e.selector = selector;
        e.removalRoute = route;
    }

    /** A removal the cluster's log applied: the topic at {@code path} goes, in log order. Waits for room, as {@link #applyFromCluster}. */
    void removeFromCluster(String path, int incarnation) {
        long slot = ring.next();
        InboundEvent e = ring.get(slot);
        e.clear();
        e.kind = InboundEvent.REMOVE;
        e.path = path;
        e.fixedIncarnation = incarnation;
        ring.publish(slot);
    }

    /** A session's unsubscription into a claimed slot. */
    void fillUnsubscribe(long slot, Session session, int subscriptionId) {
        command(slot, InboundEvent.UNSUBSCRIBE, session, subscriptionId);
    }

    /** Hands a claimed slot to the sequencer: as it was filled, or as a NOOP. */
    void commit(long slot) {
        ring.publish(slot);
    }

    private InboundEvent command(long slot, int kind, Session session, int id) {
        InboundEvent e = ring.get(slot);
        e.kind = kind;
        e.session = session;
        e.id = id;
        return e;
    }

    // ------------------------------------------------------------------ whole commands

    /**
     * Tells the sequencer to forget {@code session}. Never waits.
     *
     * @return false when the ring is full: nothing was sent, the caller retries
     */
    boolean trySessionClosed(Session session) {
        return trySessionCommand(InboundEvent.SESSION_CLOSED, session);
    }

    /**
     * Tells the sequencer to forget {@code session}, now or, while the ring is full, again every
     * {@link #RING_FULL_RETRY_US} on the session's event loop. Never waits. The session's event loop.
     */
    void sessionClosed(Session session) {
        if (!trySessionClosed(session)) {
            session.channel.eventLoop().schedule(() -> sessionClosed(session), RING_FULL_RETRY_US, TimeUnit.MICROSECONDS);
        }
    }

    /**
     * Asks the sequencer for the next window of {@code session}'s streamed subscribe reply, the last
     * one having reached the socket. Never waits.
     *
     * @return false when the ring is full: nothing was sent, the caller retries
     */
    boolean tryContinueReplies(Session session) {
        return trySessionCommand(InboundEvent.CONTINUE_REPLIES, session);
    }

    /**
     * Tells the sequencer a view's held value may be due ({@link HeldViewsTimer}). Never waits.
     *
     * @return false when the ring is full: nothing was sent, the caller retries
     */
    boolean tryFlushHeld() {
        return trySessionCommand(InboundEvent.FLUSH_HELD, null);
    }

    /**
     * Asks the sequencer for another turn of streamed replies ({@link Subscriptions#takeTurn}):
     * the sequencer asks itself, so that the commands already waiting come first. Never waits.
     *
     * @return false when the ring is full: nothing was sent, and the commands in it end a batch, with a turn
     */
    boolean tryReplyTurn() {
        return trySessionCommand(InboundEvent.REPLY_TURN, null);
    }

    private boolean trySessionCommand(int kind, Session session) {
        long slot = tryClaim();
        if (slot == RING_FULL) {
            return false;
        }
        command(slot, kind, session, 0);
        commit(slot);
        return true;
    }

    /**
     * A publish of no session (the demo's, acked to no one). The value is made by
     * {@code value.apply(arg)} only once a slot is claimed, so a full ring costs no value; if making
     * it throws, the slot goes as a NOOP and the exception to the caller. Never waits.
     *
     * @return false when the ring is full: nothing was made or sent
     */
    boolean tryPublish(String path, String[] segments, IntFunction<ByteBuf> value, int arg) {
        long slot = tryClaim();
        if (slot == RING_FULL) {
            return false;
        }
        InboundEvent e = ring.get(slot);
        try {
            e.value = value.apply(arg);
            e.kind = InboundEvent.PUBLISH;
            e.receivedNanos = System.nanoTime();
            e.path = path;
            e.segments = segments;
        } finally {
            commit(slot);
        }
        return true;
    }

    /** A hot reload of the {@code features} section: topics are resolved anew. Waits for room. */
    void reloadFeatures(FeatureResolver features) {
        long slot = nextWaiting(InboundEvent.FEATURES);
        ring.get(slot).features = features;
        ring.publish(slot);
    }

    /**
     * An update the cluster applies with the sequence its partition's owner gave it
     * ({@code topicSequence}), like a publish of no session. Waits for room. Cluster thread.
     */
    void applyFromCluster(String path, String[] segments, long topicSequence, int incarnation, byte[] value) {
        long slot = ring.next();
        InboundEvent e = ring.get(slot);
        e.clear();
        e.kind = InboundEvent.PUBLISH;
        e.path = path;
        e.segments = segments;
        e.fixedSequence = topicSequence;
        e.fixedIncarnation = incarnation;
        e.receivedNanos = System.nanoTime(); // clocks of other nodes do not compare: latency from here
        e.value = Unpooled.wrappedBuffer(value);
        ring.publish(slot);
    }

    /**
     * The ack of a publish of {@code session} that the cluster applied with {@code topicSequence} (or
     * had applied before with it). The cluster answers once this node applied the publish's entry, so
     * its update is on the ring before this; the sequencer acks it on the fan-out ring, in order with
     * the updates, as a single node's. Waits for room. The cluster's answer thread.
     */
    void ackFromCluster(Session session, int correlationId, long topicSequence) {
        long slot = ring.next();
        ring.get(slot).clear();
        command(slot, InboundEvent.CLUSTER_ACK, session, correlationId).fixedSequence = topicSequence;
        commit(slot);
    }

    /**
     * The cluster's snapshot asks the sequencer to capture every topic, or to take over a
     * snapshot's ({@link TopicSnapshotRequest}); behind every update handed over before it. Waits
     * for room. Cluster thread.
     */
    void snapshotTopics(TopicSnapshotRequest request) {
        long slot = nextWaiting(InboundEvent.TOPIC_SNAPSHOT);
        ring.get(slot).snapshot = request;
        ring.publish(slot);
    }

    /** Waits for room, and clears the slot for a command of {@code kind}: the caller fills and publishes it. */
    private long nextWaiting(int kind) {
        long slot = ring.next();
        InboundEvent e = ring.get(slot);
        e.clear();
        e.kind = kind;
        return slot;
    }

    // ------------------------------------------------------------------ the ring itself

    /**
     * Releases the values of publishes the sequencer never reached and clears every slot. Only
     * once the sequencer and every producer have stopped.
     */
    void releaseUnconsumed() {
        for (int i = 0; i < ring.getBufferSize(); i++) {
            InboundEvent e = ring.get(i);
            if (e.value != null) {
                e.value.release();
            }
            e.clear();
        }
    }
}
