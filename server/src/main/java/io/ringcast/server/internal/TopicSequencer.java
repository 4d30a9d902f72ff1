package io.ringcast.server.internal;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.TopicPath;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The single writer of the topic tree: the handler of the inbound ring, run by the
 * {@code ringcast-sequencer} thread and by nothing else. For each publish it finds or creates the
 * topic, gives the update the topic's next sequence, computes its delta (deltas on) and encodes
 * the outbound frame <em>once</em>, compresses that frame once (compression on and a subscriber
 * that negotiated it), keeps it as history and last value (cache on), and puts it on the fan-out
 * ring with the topic's current subscriber set. Per-topic toggles come from the
 * {@link FeatureResolver}; a hot reload replaces it through this same ring. Subscribe, unsubscribe and session-close commands arrive on the same ring, so
 * they are ordered with the publishes around them: a new subscriber's snapshot is on the fan-out
 * ring before any later update of its topics.
 */
final class TopicSequencer implements EventHandler<InboundEvent> {
    private static final Logger log = LoggerFactory.getLogger(TopicSequencer.class);
    /** Replies to one subscribe are cut into frames of about this size. */
    private static final int DIRECTED_FRAME_TARGET_BYTES = 64 * 1024;
    /** Within one long inbound batch, wake the pollers this often so fan-out starts early. */
    private static final int WAKE_EVERY_EVENTS = 256;
    /** zlib level of permessage-deflate: fast, since it runs once per update on this one thread. */
    static final int COMPRESSION_LEVEL = 1;

    private final RingBuffer<FanOutEvent> fanOut;
    private final FanOutPoller[] pollers;
    private final ByteBufAllocator alloc;
    private final int historyLength;
    /** {@code limits.maxTopics}: a publish that would create one more is refused. */
    private final int maxTopics;
    private final TopicTree tree = new TopicTree();
    private final SelectorIndex index = new SelectorIndex();
    private final ServerCounters counters;
    /**
     * In a cluster a client may resume on a node that has not applied yet what another node showed
     * it: it is then ahead, not after a lost state, and this node's next updates carry on its stream.
     */
    private final boolean clusterMode;

    private Thread thread;
    private int nextAlias = 1;
    private long visitCounter;
    /** Reused while creating a topic: the sessions its path matches. */
    private final ArrayList<Session> matchedSessions = new ArrayList<>();
    /** Reused while creating a topic: matched sessions that had resumed its path from an earlier server. */
    private final ArrayList<Session> resettingSessions = new ArrayList<>();
    private int publishedSinceWake;
    private long publishesInBatch;
    private volatile boolean halted;
    private FeatureResolver features;
    private final Delta.Encoder deltaEncoder = new Delta.Encoder();
    /** Reused for each update's delta; it grows to the largest delta and stays. */
    private final ByteBuf deltaScratch;
    private FrameCompressor compressor;
    /** The fan-out slot between {@link #claimFanOut} and {@link #commitFanOut}. */
    private long claimedSlot;

    // the frame being built for one session's subscribe reply
    private ByteBuf directed;
    /** Each publisher's recent publishes, for {@code REPUBLISH}. */
    private final PublisherLedgers ledgers;
    /** {@code limits.publisherLedgers} and {@code limits.publisherLedgersPerPrincipal}, named in refusals. */
    private final int maxDetachedLedgers;
    private final int maxDetachedLedgersPerPrincipal;
    private Session directedTarget;

    TopicSequencer(RingBuffer<FanOutEvent> fanOut, FanOutPoller[] pollers, ByteBufAllocator alloc, int historyLength,
                   int maxTopics, int maxDetachedLedgers, int maxDetachedLedgersPerPrincipal, FeatureResolver features,
                   ServerCounters counters, boolean clusterMode) {
        this.clusterMode = clusterMode;
        this.maxDetachedLedgers = maxDetachedLedgers;
        this.maxDetachedLedgersPerPrincipal = maxDetachedLedgersPerPrincipal;
        this.ledgers = new PublisherLedgers(maxDetachedLedgers, maxDetachedLedgersPerPrincipal);
        this.fanOut = fanOut;
        this.maxTopics = maxTopics;
        this.pollers = pollers;
        this.alloc = alloc;
        this.historyLength = historyLength;
        this.features = features;
        this.counters = counters;
        this.deltaScratch = alloc.heapBuffer(256);
        this.compressor = new FrameCompressor(COMPRESSION_LEVEL, features.features().compressionMinBytes());
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    @Override
    public void onEvent(InboundEvent e, long sequence, boolean endOfBatch) {
        assert Thread.currentThread() == thread : "only the sequencer thread runs the sequencer";
        try {
            switch (e.kind) {
                case InboundEvent.PUBLISH:
                    publish(e);
                    break;
                case InboundEvent.SUBSCRIBE:
                    subscribe(e.session, e.id, e.selector, e.resume);
                    break;
                case InboundEvent.UNSUBSCRIBE:
                    unsubscribe(e.session, e.id);
                    break;
                case InboundEvent.SESSION_CLOSED:
                    sessionClosed(e.session);
                    break;
                case InboundEvent.FEATURES:
                    reloadFeatures(e.features);
                    break;
                default:
                    break;
            }
        } catch (RuntimeException ex) {
            log.error("sequencer failed on a {} command from {}; the command is dropped", e.kind, e.session, ex);
        } finally {
            if (e.value != null) {
                e.value.release();
            }
            e.clear();
        }
        if (endOfBatch) {
            wakePollers();
            counters.addPublishes(publishesInBatch);
            publishesInBatch = 0;
        }
    }

    // ------------------------------------------------------------------ publish

    private void publish(InboundEvent e) {
        PublisherLedgers.Ledger ledger = e.fixedSequence == 0 ? ledgerOf(e.session) : null;
        if (e.republish && ledger != null && !appliesAfterLedgerCheck(e, ledger)) {
            return;
        }
        if (e.overRate) {
            // the ledger vouches it was never applied; over the rate, it is not applied now either
            refuse(e.session, ErrorCode.PUBLISH_RATE_EXCEEDED, e.id, "publish to '" + e.path
                    + "' refused: over limits.publishRatePerSession; not applied");
            return;
        }
        Topic topic = tree.get(e.path);
        boolean created = topic == null;
        if (created) {
            // in a cluster the owner decided already: every node must create what it created
            if (tree.size() >= maxTopics && e.fixedSequence == 0) {
                refuse(e.session, ErrorCode.TOO_MANY_TOPICS, e.id, "publish to '" + e.path
                        + "' refused: it would create a topic beyond limits.maxTopics = " + maxTopics);
                return;
            }
            topic = createTopic(e.path, e.segments);
        }
        long seq;
        if (e.fixedSequence == 0) {
            seq = ++topic.sequence;
            if (ledger != null) {
                ledger.recordApplied(e.id, topic.path, seq, e.republish);
            }
        } else if (e.fixedSequence <= topic.sequence) {
            return; // applied before (a node catching up may be sent an update twice)
        } else {
            // consecutive, except after a node caught up from a snapshot: clients see the jump as a
            // gap, and the history restarts, since a replay must be of consecutive updates
            seq = e.fixedSequence;
            if (seq != topic.sequence + 1 && topic.hasValue()) {
                topic.releaseHistory();
                counters.valuesCached(-1);
            }
            topic.sequence = seq;
        }
        TopicFeatures toggles = topic.features;
        ByteBuf value = e.value;
        int valueLength = value.readableBytes();
        ByteBuf payload = value;
        int flags = 0;
        if (toggles.deltas() && topic.hasValue()) {
            // once per update, whatever the number of subscribers; sent only when smaller
            deltaScratch.clear();
            int deltaLength = deltaEncoder.encode(topic.lastValueBuffer(), topic.lastValueIndex(),
                    topic.lastValueLength(), value, value.readerIndex(), valueLength, deltaScratch, valueLength);
            if (deltaLength > 0) {
                payload = deltaScratch;
                flags = UpdateFlags.DELTA;
                counters.deltaSent(valueLength - deltaLength, topic.subscribers.size());
            }
        }
        int payloadLength = payload.readableBytes();
        int topicMessageBytes = created ? WireCodec.HEADER_BYTES + 4 + 2 + ByteBufUtil.utf8Bytes(e.path) : 0;
        ByteBuf frame = OutboundFrame.allocate(alloc, topicMessageBytes + WireCodec.UPDATE_OVERHEAD_BYTES + payloadLength);
        if (created) {
            // everyone subscribed now is new to this alias: define it in the same frame
            WireCodec.writeTopic(frame, topic.alias, topic.path);
        }
        int updateOffset = frame.writerIndex();
        int valueIndex = updateOffset + WireCodec.UPDATE_OVERHEAD_BYTES;
        WireCodec.writeUpdate(frame, topic.alias, seq, flags, payload, payload.readerIndex(), payloadLength);
        OutboundFrame.finish(frame);
        // a frame holding a delta cannot give the full value: the topic keeps a copy for the next
        // delta and for snapshots, and sessions with held-back updates need it too
        ByteBuf fullValueOfDelta = flags == UpdateFlags.DELTA ? copyOf(value) : null;
        ByteBuf heldValue = null;
        if (fullValueOfDelta != null) {
            heldValue = fullValueOfDelta.retain();
        } else if (toggles.conflation() != Conflation.OFF) {
            heldValue = frame.retainedSlice(valueIndex, valueLength);
        }
        ByteBuf compressed = toggles.compression() && topic.subscribers.anyCompressed()
                ? compress(frame) : null;
        FanOutEvent ev;
        try {
            ev = claimFanOut(FanOutEvent.UPDATE, frame, compressed);
        } catch (IllegalStateException stopping) {
            if (fullValueOfDelta != null) {
                fullValueOfDelta.release();
            }
            if (heldValue != null) {
                heldValue.release();
            }
            throw stopping;
        }
        ev.subscribers = topic.subscribers;
        ev.publisher = e.session;
        ev.correlationId = e.id;
        ev.receivedNanos = e.receivedNanos;
        ev.sequence = seq;
        ev.topic = topic;
        ev.conflation = toggles.conflation();
        // null only when the frame holds the full value: see FanOutPoller.deliverOrHold
        ev.value = heldValue;
        commitFanOut();
        if (toggles.lastValueCache()) {
            if (!topic.hasValue()) {
                counters.valuesCached(1);
            }
            topic.record(frame.retain(), updateOffset, fullValueOfDelta);
        } else if (fullValueOfDelta != null) {
            fullValueOfDelta.release(); // not reached: deltas need the cache
        }
        publishesInBatch++;
        if (created && !resettingSessions.isEmpty()) {
            // they saw this path numbered higher on a server before a restart: a plain UPDATE 1
            // would look like a duplicate to them, so they get the value as a snapshot after a gap
            for (Session s : resettingSessions) {
                directedTopic(s, topic);
                directedSnapshot(s, 0, topic, UpdateFlags.GAP, frame, valueIndex, valueLength);
                directedFlush();
                topic.subscribers = topic.subscribers.with(s);
            }
            resettingSessions.clear();
        }
    }

    /**
     * Answers a {@code REPUBLISH} from its publisher's ledger (see {@link PublisherLedgers}):
     *
     * @return whether it is to be applied now; if not, it was answered
     */
    private boolean appliesAfterLedgerCheck(InboundEvent e, PublisherLedgers.Ledger ledger) {
        long answer = ledger.answer(e.id, e.path);
        if (answer == PublisherLedgers.APPLY) {
            return true; // the ledger vouches that its first send was never applied
        }
        if (answer > 0) {
            // sent again after a lost connection, applied the first time: the same answer, once more
            WireCodec.writePublishAck(directedRoom(e.session, WireCodec.HEADER_BYTES + 12), e.id, answer);
            directedFlush();
            counters.republishesRecognised.increment();
        } else if (answer == PublisherLedgers.CONFLICT) {
            refuse(e.session, ErrorCode.REPUBLISH_CONFLICT, e.id, "REPUBLISH of correlation id " + e.id + " to '"
                    + e.path + "' refused: this publisher's correlation id " + e.id + " was first published to '"
                    + ledger.topicOf(e.id) + "'; not applied");
        } else {
            ledger.recordOutcomeUnknown(e.id, e.path);
            refuse(e.session, ErrorCode.PUBLISH_OUTCOME_UNKNOWN, e.id, "the server no longer knows whether publish "
                    + e.id + " to '" + e.path + "' was applied: its publisher's ledger was forgotten (a restart, or "
                    + "past limits.publisherLedgers = " + maxDetachedLedgers + " / limits.publisherLedgersPerPrincipal = "
                    + maxDetachedLedgersPerPrincipal + " while the publisher was away); it was not applied again");
        }
        return false;
    }

    /** The ledger of the session's publisher, attached on its first publish; null when its client gave no publisher id. */
    private PublisherLedgers.Ledger ledgerOf(Session publisher) {
        if (publisher == null || publisher.publisherId == 0) {
            return null;
        }
        if (publisher.ledger == null) {
            publisher.ledger = ledgers.attach(publisher.permissions.who(), publisher.publisherId);
            counters.publisherLedgers(ledgers.size(), ledgers.forgotten());
        }
        return publisher.ledger;
    }

    /** A refused publish: the ERROR goes to the publisher in order with its acks. The value is released by the caller. */
    private void refuse(Session publisher, ErrorCode code, int correlationId, String reason) {
        counters.error(code);
        if (publisher != null) {
            WireCodec.writeError(directedRoom(publisher, 64 + reason.length() * 3), code, correlationId, reason);
            directedFlush();
        }
    }

    private ByteBuf copyOf(ByteBuf value) {
        ByteBuf copy = alloc.directBuffer(value.readableBytes());
        copy.writeBytes(value, value.readerIndex(), value.readableBytes());
        return copy;
    }

    private ByteBuf compress(ByteBuf frame) {
        ByteBuf compressed = compressor.compress(alloc, frame);
        counters.compressed(OutboundFrame.payloadBytes(frame),
                compressed == null ? -1 : OutboundFrame.payloadBytes(compressed));
        return compressed;
    }

    private Topic createTopic(String path, String[] segments) {
        Topic topic = new Topic(nextAlias++, path, segments, SubscriberSet.empty(pollers.length), historyLength,
                features.resolve(segments));
        long mark = ++visitCounter;
        index.forEachMatch(segments, (session, subscriptionId) -> {
            if (session.visitMark != mark) { // a session with several matching subscriptions joins once
                session.visitMark = mark;
                if (!session.permissions.mayRead(segments)) {
                    return;
                }
                session.topics.add(topic);
                if (!session.resumeForMissingTopics.isEmpty() && session.resumeForMissingTopics.remove(path) != null) {
                    resettingSessions.add(session);
                } else {
                    matchedSessions.add(session);
                }
            }
        });
        // one pass: adding sessions one by one would copy the set once per session, O(n^2)
        topic.subscribers = SubscriberSet.of(matchedSessions, pollers.length);
        matchedSessions.clear();
        tree.add(topic);
        counters.topics(tree.size());
        return topic;
    }

    /** A hot reload: every topic takes the toggles the new section gives it, from its next update on. */
    private void reloadFeatures(FeatureResolver newFeatures) {
        features = newFeatures;
        compressor.close();
        compressor = new FrameCompressor(COMPRESSION_LEVEL, newFeatures.features().compressionMinBytes());
        for (Topic topic : tree.all()) {
            boolean had = topic.hasValue();
            topic.features(newFeatures.resolve(topic.segments));
            if (had && !topic.hasValue()) {
                counters.valuesCached(-1);
            }
        }
        log.info("features reloaded: {} topics re-resolved", tree.size());
    }

    // ------------------------------------------------------------------ subscriptions

    private void subscribe(Session session, int subscriptionId, Selector selector, Map<String, Long> resume) {
        session.subscriptions.put(subscriptionId, selector);
        index.add(selector, session, subscriptionId);
        for (Map.Entry<String, Long> r : resume.entrySet()) {
            if (!clusterMode && tree.get(r.getKey()) == null) {
                session.resumeForMissingTopics.put(r.getKey(), r.getValue());
            }
        }
        int[] matched = {0};
        tree.forEachMatch(selector, topic -> {
            if (!session.permissions.mayRead(topic.segments)) {
                return; // a subscription to # sees only what the session may read
            }
            matched[0]++;
            Long resumeFrom = resume.get(topic.path);
            if (topic.subscribers.contains(session)) {
                // live already through another subscription; only a new listener needs the value
                if (resumeFrom == null && topic.hasValue()) {
                    directedSnapshot(session, subscriptionId, topic, 0);
                }
                return;
            }
            topic.subscribers = topic.subscribers.with(session);
            session.topics.add(topic);
            directedTopic(session, topic);
            if (resumeFrom == null) {
                if (topic.hasValue()) {
                    directedSnapshot(session, subscriptionId, topic, 0);
                }
            } else if (resumeFrom == topic.sequence || (clusterMode && resumeFrom > topic.sequence)) {
                // the client is up to date (or, in a cluster, this node is catching up with it: the
                // client drops what it has seen already)
            } else if (topic.canReplayAfter(resumeFrom)) {
                for (long s = resumeFrom + 1; s <= topic.sequence; s++) {
                    int length = topic.historyUpdateLength(s);
                    ByteBuf out = directedRoom(session, length);
                    out.writeBytes(topic.historyFrame(s), topic.historyUpdateOffset(s), length);
                }
            } else if (topic.hasValue()) {
                // history no longer reaches back (or the client is ahead of a restarted server)
                directedSnapshot(session, 0, topic, UpdateFlags.GAP);
            } else {
                // the topic keeps no value (cache off): say that updates were missed, and nothing more
                WireCodec.writeSnapshot(directedRoom(session, WireCodec.SNAPSHOT_OVERHEAD_BYTES), 0, topic.alias,
                        topic.sequence, UpdateFlags.GAP | UpdateFlags.NO_VALUE, Unpooled.EMPTY_BUFFER, 0, 0);
            }
        });
        WireCodec.writeSubscribed(directedRoom(session, WireCodec.HEADER_BYTES + 8), subscriptionId, matched[0]);
        directedFlush();
    }

    private void directedTopic(Session session, Topic topic) {
        WireCodec.writeTopic(directedRoom(session, WireCodec.HEADER_BYTES + 6 + topic.path.length() * 3),
                topic.alias, topic.path);
    }

    private void directedSnapshot(Session session, int subscriptionId, Topic topic, int flags) {
        directedSnapshot(session, subscriptionId, topic, flags, topic.lastValueBuffer(), topic.lastValueIndex(),
                topic.lastValueLength());
    }

    private void directedSnapshot(Session session, int subscriptionId, Topic topic, int flags, ByteBuf value,
                                  int valueIndex, int valueLength) {
        WireCodec.writeSnapshot(directedRoom(session, WireCodec.SNAPSHOT_OVERHEAD_BYTES + valueLength), subscriptionId,
                topic.alias, topic.sequence, flags, value, valueIndex, valueLength);
    }

    /** The reply frame for {@code session}, with room for a message of about {@code bytes}. */
    private ByteBuf directedRoom(Session session, int bytes) {
        assert directedTarget == null || directedTarget == session;
        if (directed != null && OutboundFrame.payloadBytes(directed) + bytes > DIRECTED_FRAME_TARGET_BYTES) {
            directedFlush();
        }
        if (directed == null) {
            directed = OutboundFrame.allocate(alloc, Math.max(bytes, 256));
            directedTarget = session;
        }
        return directed;
    }

    private void directedFlush() {
        if (directed != null) {
            ByteBuf frame = OutboundFrame.finish(directed);
            if (directedTarget.compressed && features.features().compressionAnywhere()) {
                ByteBuf compressed = compress(frame);
                if (compressed != null) {
                    frame.release();
                    frame = compressed;
                }
            }
            FanOutEvent ev = claimFanOut(FanOutEvent.DIRECTED, frame, null);
            ev.target = directedTarget;
            commitFanOut();
            directed = null;
            directedTarget = null;
        }
    }

    private void unsubscribe(Session session, int subscriptionId) {
        Selector selector = session.subscriptions.remove(subscriptionId);
        if (selector == null) {
            return;
        }
        index.remove(selector, session, subscriptionId);
        tree.forEachMatch(selector, topic -> {
            for (Selector other : session.subscriptions.values()) {
                if (other.matches(topic.segments)) {
                    return;
                }
            }
            topic.subscribers = topic.subscribers.without(session);
            session.topics.remove(topic);
        });
    }

    private void sessionClosed(Session session) {
        for (Topic topic : session.topics) {
            topic.subscribers = topic.subscribers.without(session);
        }
        session.topics.clear();
        for (Map.Entry<Integer, Selector> s : session.subscriptions.entrySet()) {
            index.remove(s.getValue(), session, s.getKey());
        }
        session.subscriptions.clear();
        if (session.ledger != null) {
            ledgers.detach(session.ledger);
            session.ledger = null;
            counters.publisherLedgers(ledgers.size(), ledgers.forgotten());
        }
    }

    // ------------------------------------------------------------------ fan-out ring

    /**
     * Claims the next fan-out slot for {@code frame} (and its compressed form, or null), which it
     * then holds: the caller fills the rest and calls {@link #commitFanOut}. When the server stops
     * while it waits for a slot, releases both and throws.
     */
    private FanOutEvent claimFanOut(int kind, ByteBuf frame, ByteBuf compressedFrame) {
        long slot;
        try {
            slot = claimFanOutSlot();
        } catch (IllegalStateException stopping) {
            frame.release(); // the ring never took them
            if (compressedFrame != null) {
                compressedFrame.release();
            }
            throw stopping;
        }
        FanOutEvent ev = fanOut.get(slot);
        ev.recycle();
        ev.kind = kind;
        ev.frame = frame;
        ev.compressedFrame = compressedFrame;
        claimedSlot = slot;
        return ev;
    }

    /** Publishes the slot filled since {@link #claimFanOut}: from here the pollers may read it. */
    private void commitFanOut() {
        fanOut.publish(claimedSlot);
        if (++publishedSinceWake >= WAKE_EVERY_EVENTS) {
            wakePollers();
        }
    }

    /**
     * A free fan-out slot. When the slowest poller is a whole ring behind, waits for it: the
     * inbound ring then fills and publishers' sockets stop being read. Backpressure, never a drop.
     */
    private long claimFanOutSlot() {
        while (true) {
            try {
                return fanOut.tryNext();
            } catch (InsufficientCapacityException full) {
                wakePollers();
                if (halted) {
                    throw new IllegalStateException("server stopping");
                }
                LockSupport.parkNanos(20_000);
            }
        }
    }

    private void wakePollers() {
        publishedSinceWake = 0;
        // Dekker pattern with FanOutPoller.run: we store the ring cursor then read each poller's
        // 'scheduled' flag; a poller clears the flag then reads the cursor. The cursor store is a
        // release store, which a later load may overtake: without this fence we could read a stale
        // 'scheduled' while the poller reads the old cursor, and the update would wait for the next wake.
        VarHandle.fullFence();
        for (FanOutPoller p : pollers) {
            p.wake();
        }
    }

    // ------------------------------------------------------------------ across a restart

    /**
     * Takes over the topics a previous run saved ({@link TopicStateFile}): sequence, history and
     * last value, under this run's aliases and features. Only before the sequencer thread starts.
     *
     * @return how many topics were restored; a saved path this run's limits refuse is skipped, and logged
     */
    int restore(List<TopicStateFile.SavedTopic> saved, PathLimits limits) {
        assert thread == null : "restore before the sequencer starts";
        ledgers.startedWithHistory(); // what publishers sent before the restart is not in any ledger
        int restored = 0;
        for (TopicStateFile.SavedTopic t : saved) {
            String[] segments;
            try {
                segments = TopicPath.validate(t.path(), limits);
            } catch (ProtocolException e) {
                log.warn("saved topic '{}' not restored: {}", t.path(), e.reason());
                continue;
            }
            Topic topic = createTopic(t.path(), segments);
            List<TopicStateFile.Entry> history = t.history();
            if (topic.features.lastValueCache()) {
                for (int i = 0; i < history.size(); i++) {
                    TopicStateFile.Entry entry = history.get(i);
                    topic.sequence = entry.sequence();
                    ByteBuf payload = Unpooled.wrappedBuffer(entry.payload());
                    ByteBuf frame = OutboundFrame.allocate(alloc, WireCodec.UPDATE_OVERHEAD_BYTES + payload.readableBytes());
                    int updateOffset = frame.writerIndex();
                    WireCodec.writeUpdate(frame, topic.alias, entry.sequence(), entry.flags(), payload, 0,
                            payload.readableBytes());
                    OutboundFrame.finish(frame);
                    boolean newestHoldsDelta = i == history.size() - 1 && (entry.flags() & UpdateFlags.DELTA) != 0;
                    topic.record(frame, updateOffset, newestHoldsDelta ? copyOf(Unpooled.wrappedBuffer(t.lastValue())) : null);
                }
                if (!history.isEmpty()) {
                    counters.valuesCached(1);
                }
            }
            topic.sequence = t.sequence();
            restored++;
        }
        return restored;
    }

    /** Saves every topic for the next run. Only after the sequencer thread has stopped. */
    int save(Path file) throws IOException {
        assert thread == null || !thread.isAlive() : "save after the sequencer stopped";
        return TopicStateFile.write(file, tree.all());
    }

    /** Tells a sequencer blocked on a full fan-out ring to give up: the server is stopping. Any thread. */
    void halt() {
        halted = true;
    }

    /**
     * Releases every frame still held by history and the fan-out ring. Call only after the
     * sequencer thread and every poller have stopped.
     */
    void releaseAll() {
        for (Topic topic : tree.all()) {
            topic.releaseHistory();
        }
        for (int i = 0; i < fanOut.getBufferSize(); i++) {
            fanOut.get(i).recycle();
        }
        if (directed != null) {
            directed.release();
            directed = null;
        }
        deltaScratch.release();
        compressor.close();
    }
}
