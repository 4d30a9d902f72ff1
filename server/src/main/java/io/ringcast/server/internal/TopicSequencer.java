package io.ringcast.server.internal;

import com.lmax.disruptor.EventHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import io.ringcast.log.PublishResult;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The single writer of the topic tree: the handler of the inbound ring, run by the
 * {@code ringcast-sequencer} thread and by nothing else (asserted). It dispatches each command
 * and gives each publish its topic's next sequence; its collaborators, all confined to this
 * thread, do the rest: the {@link UpdateEncoder} encodes the update once, the {@link FanOutProxy}
 * puts it on the fan-out ring with the topic's current subscribers, the {@link Subscriptions}
 * keep who receives what, the {@link DirectedReplies} answer one session, the
 * {@link RepublishAnswers} decide a publisher's publish by its ledger first. Subscribe,
 * unsubscribe, the next window of a streamed subscribe reply, session-close, feature reloads
 * and the cluster's snapshot requests arrive on the same ring, so they are ordered with the
 * publishes around them: a new subscriber's snapshot is on the fan-out ring before any later
 * update of its topics, and a cluster snapshot captures the state after the updates before it.
 */
final class TopicSequencer implements EventHandler<InboundEvent> {
    private static final Logger log = LoggerFactory.getLogger(TopicSequencer.class);

    private final TopicTree tree = new TopicTree();
    private final FanOutProxy fanOut;
    private final UpdateEncoder encoder;
    private final DirectedReplies replies;
    /** Every audience's subscriber sets, one instance of each: topics and views start from its empty one. */
    private final SubscriberSets subscriberSets;
    private final ViewedUpdates viewed;
    private final Subscriptions subscriptions;
    private final RepublishAnswers republishes;
    private final ServerCounters counters;
    private final SubscribeMemory subscribeMemory;
    private final int historyLength;
    private final long historyMaxBytes;
    /** {@code history.nodeMaxBytes}: what all topics' histories take, bounded. */
    private final HistoryBudget historyBudget;
    /** {@code limits.maxTopics}: a publish that would create one more is refused. */
    private final int maxTopics;
    private final BooleanSupplier askReplyTurn;
    /**
     * Topics each principal's publishes created ({@code limits.maxTopicsPerPrincipal}), so that
     * anonymous publishers cannot take every place of {@code limits.maxTopics}. A single node's: in
     * a cluster the replicated log decides what is created, and knows no principals.
     */
    private final PrincipalShares topicsMadeBy;
    private FeatureResolver features;
    private Thread thread;
    private int nextAlias = 1;
    private long publishesInBatch;
    /** Told the topic count as topics come and go, gives the heap back once many went. */
    private final HeapGiveBack heapGiveBack;
    /** On a single node, refuses new topics while the heap is past {@code limits.heapRefusePercent} (a cluster node, through the log: {@link ClusterRoute}). */
    private final HeapGuard heap;
    /** The topics that expire, by the time a publish last updated them. */
    private final TopicExpiry expiry = new TopicExpiry();
    /** The clock of {@code maxRate} and of the timer ({@link System#nanoTime()}, or a test's). */
    private final LongSupplier clock;
    /** Asks for a {@code FLUSH_HELD} command at a {@link #clock} time: views' held values, and expiry. */
    private final LongConsumer armTimer;
    /** The time, in milliseconds since the epoch, the timer was last armed for an expiry; {@link Long#MAX_VALUE}: none. */
    private long expiryArmedFor = Long.MAX_VALUE;
    /**
     * The incarnation given last ({@link Topic#incarnation}), a {@code u32}: from a random start,
     * so that a node restarted without its state, even within the same second, gives a path
     * another incarnation than its clients know (2^-32 the chance of the same one).
     */
    private long lastIncarnation = ThreadLocalRandom.current().nextLong(1L << 32);
    /**
     * A cluster node: its topics have incarnation 0, not known, since each node's clock would give
     * another, and a client that resumes on another node must not take that for a removal. Topics
     * are removed by a single node only, so far.
     */
    private final boolean clusterMode;
    /** A cluster node's way to log expiries, set once it joined ({@link #logRemovalsThrough}); null before, and on a single node. */
    private volatile LoggedRemovals loggedRemovals;

    TopicSequencer(FanOutProxy fanOut, ByteBufAllocator alloc, SequencerLimits limits, FeatureResolver features,
                   ServerCounters counters, boolean clusterMode) {
        this(fanOut, alloc, limits, features, counters, clusterMode, new Views(Integer.MAX_VALUE),
                SubscribeMemory.unbounded(), System::nanoTime, deadline -> { }, () -> false, HeapGuard.OFF);
    }

    /**
     * @param views          the node's views, which the sequencer releases as subscriptions close
     * @param subscribeMemory what subscribe requests keep, charged as they are read: the sequencer
     *                       credits it as it answers them and drops what they kept
     * @param clock          {@link System#nanoTime()}, or a test's: the time of {@code maxRate}
     * @param armHeldTimer   asks for a {@code FLUSH_HELD} command at a {@code clock} time
     *                       ({@link HeldViewsTimer#arm})
     * @param askReplyTurn   asks for a {@code REPLY_TURN} command ({@link SequencerProxy#tryReplyTurn}): sessions
     *                       wait for a turn to produce their streamed replies
     * @param heap           the node's {@link HeapGuard}: a single node refuses new topics while it refuses
     */
    TopicSequencer(FanOutProxy fanOut, ByteBufAllocator alloc, SequencerLimits limits, FeatureResolver features,
                   ServerCounters counters, boolean clusterMode, Views views, SubscribeMemory subscribeMemory,
                   LongSupplier clock, LongConsumer armHeldTimer, BooleanSupplier askReplyTurn, HeapGuard heap) {
        this.heap = heap;
        this.fanOut = fanOut;
        this.features = features;
        this.counters = counters;
        this.historyLength = limits.historyLength();
        this.historyMaxBytes = limits.historyMaxBytes();
        this.historyBudget = new HistoryBudget(limits.historyNodeMaxBytes(), limits.historyNodeMaxEntries(),
                () -> counters.valuesCached(-1));
        this.maxTopics = limits.maxTopics();
        this.topicsMadeBy = new PrincipalShares(limits.maxTopicsPerPrincipal());
        this.encoder = new UpdateEncoder(alloc, features.features(), counters);
        this.replies = new DirectedReplies(alloc, fanOut, encoder, counters);
        this.subscriberSets = new SubscriberSets(fanOut.loops());
        this.viewed = new ViewedUpdates(alloc, fanOut, encoder, subscriberSets.empty(), clock, armHeldTimer);
        this.subscriptions = new Subscriptions(tree, replies, viewed, views, subscriberSets, clusterMode, counters,
                subscribeMemory);
        this.subscribeMemory = subscribeMemory;
        this.republishes = new RepublishAnswers(limits.maxTopics(), limits.publisherLedgers(),
                limits.publisherLedgersPerPrincipal(),
                replies, counters);
        this.askReplyTurn = askReplyTurn;
        this.clock = clock;
        this.armTimer = armHeldTimer;
        this.clusterMode = clusterMode;
        this.heapGiveBack = new HeapGiveBack(counters);
    }

    /** The sequencer's bounds: history kept per topic and per node, topics, and the publishers' ledgers. */
    record SequencerLimits(int historyLength, long historyMaxBytes, long historyNodeMaxBytes,
                           long historyNodeMaxEntries, int maxTopics,
                           int publisherLedgers, int publisherLedgersPerPrincipal, int maxTopicsPerPrincipal) {

        /**
         * The bounds {@code config} sets, {@code history.nodeMaxBytes} within this JVM's direct memory
         * limit (refused with a {@link io.ringcast.server.config.ConfigException} above it).
         */
        static SequencerLimits of(ServerConfig config) {
            ServerConfig.History history = config.history();
            ServerConfig.Limits limits = config.limits();
            return new SequencerLimits(history.length(), history.maxBytes(),
                    history.nodeMaxBytesWithin(PlatformDependent.maxDirectMemory()),
                    history.nodeMaxEntriesWithin(Runtime.getRuntime().maxMemory()), limits.maxTopics(),
                    limits.publisherLedgers(), limits.publisherLedgersPerPrincipal(), limits.maxTopicsPerPrincipal());
        }
    }

    /** What subscribe requests keep: charge it for each {@code SUBSCRIBE} handed over as a session's event loop does. */
    SubscribeMemory subscribeMemory() {
        return subscribeMemory;
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    @Override
    public void onEvent(InboundEvent e, long sequence, boolean endOfBatch) {
        assert Thread.currentThread() == thread : "only the sequencer thread runs the sequencer";
        fanOut.seal(); // the commands before this one are done with what they put on the ring
        try {
            if (e.kind != InboundEvent.PUBLISH) {
                viewed.publishPending(); // replies and acks keep their order with every update before them
            }
            switch (e.kind) {
                case InboundEvent.PUBLISH -> publish(e);
                case InboundEvent.SUBSCRIBE -> subscriptions.subscribe(e.session, e.id, e.selector, e.resume, e.view, e.options);
                case InboundEvent.UNSUBSCRIBE -> subscriptions.unsubscribe(e.session, e.id);
                case InboundEvent.CONTINUE_REPLIES -> subscriptions.continueReplies(e.session);
                case InboundEvent.SESSION_CLOSED -> sessionClosed(e.session);
                case InboundEvent.FEATURES -> reloadFeatures(e.features);
                // after the update it acks: acked by the publisher's poller, as a single node's publish
                case InboundEvent.CLUSTER_ACK -> fanOut.ack(e.session, e.id, e.fixedSequence);
                case InboundEvent.TOPIC_SNAPSHOT -> snapshot(e.snapshot);
                case InboundEvent.FLUSH_HELD -> {
                    viewed.flushDue(true);
                    expireDue();
                }
                case InboundEvent.REMOVE -> remove(e);
                case InboundEvent.REPLY_TURN -> { } // taken at the end of the batch
                default -> { }
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
            try {
                viewed.flushDue(false);
                viewed.publishPending();
                if (subscriptions.takeTurn()) {
                    askReplyTurn.getAsBoolean(); // when the ring is full, its commands end a batch anyway
                }
            } catch (IllegalStateException stopping) {
                log.debug("views' frames and replies dropped: the server is stopping");
            }
            fanOut.endOfBatch();
            counters.addPublishes(publishesInBatch);
            publishesInBatch = 0;
            counters.history(historyBudget.bytes(), historyBudget.entries(), historyBudget.updatesLetGo(),
                    historyBudget.valuesLetGo());
        }
    }

    private void publish(InboundEvent e) {
        // a single node decides by the rules a cluster's log applies (in a cluster, the log decided already)
        if (e.fixedSequence == 0 && !republishes.screen(e)) {
            return;
        }
        if (e.overRate) { // not seen before, or never applied; over the rate, it is not applied now either
            replies.refuse(e.session, ErrorCode.PUBLISH_RATE_EXCEEDED, e.id, "publish to '" + e.path
                    + "' refused: over limits.publishRatePerSession; not applied");
            return;
        }
        Topic topic = tree.get(e.path);
        if (topic != null && e.fixedSequence != 0 && !sameIncarnation(topic, e.fixedIncarnation)) {
            return; // an update of a topic removed since, sent again by a catch-up: the log applied it before
        }
        boolean created = topic == null;
        if (created) {
            // in a cluster the owner decided already: every node must create what it created
            if (tree.size() >= maxTopics && e.fixedSequence == 0) {
                republishes.refuse(e, PublishResult.TOO_MANY_TOPICS);
                return;
            }
            if (e.fixedSequence == 0 && heap.refusing()) { // a single node's own decision: a cluster's log decides alike everywhere
                String reason = heap.refused("publish to '" + e.path + "', a new topic,");
                if (e.session != null) {
                    replies.refuse(e.session, ErrorCode.TOO_MANY_TOPICS, e.id, reason + "; not applied");
                }
                return;
            }
            if (e.fixedSequence == 0 && e.session != null && !topicsMadeBy.tryTake(e.session.permissions.who())) {
                replies.refuse(e.session, ErrorCode.TOO_MANY_TOPICS, e.id, "publish to '" + e.path
                        + "' refused: " + e.session.permissions.who() + " created its limits.maxTopicsPerPrincipal = "
                        + topicsMadeBy.max() + " topics already");
                return;
            }
            topic = createTopic(e.path, e.segments);
            if (e.fixedSequence != 0) {
                topic.incarnation = e.fixedIncarnation; // the log's, the same on every node
            } else if (e.session != null) {
                topic.creator = e.session.permissions.who();
            }
        }
        long seq = nextSequence(e, topic);
        if (seq > 0) {
            fanOutAndKeep(e, topic, created, seq);
            expiry.touched(topic, System.currentTimeMillis());
            if (created && topic.expiryQueue != 0) {
                armExpiry(topic.lastPublishMillis + topic.expiryQueue);
            }
        }
    }

    /** The sequence the update gets, or 0 when a cluster node was sent it before and applied it then. */
    private long nextSequence(InboundEvent e, Topic topic) {
        if (e.fixedSequence == 0) {
            long seq = ++topic.sequence;
            republishes.recordApplied(e, topic.path, seq);
            return seq;
        }
        if (e.fixedSequence <= topic.sequence) {
            return 0; // applied before (a node catching up may be sent an update twice)
        }
        // consecutive, except after a node caught up from a snapshot: clients see the jump as a
        // gap, and the history restarts, since a replay must be of consecutive updates
        if (e.fixedSequence != topic.sequence + 1) {
            dropValue(topic);
        }
        topic.sequence = e.fixedSequence;
        return e.fixedSequence;
    }

    private void fanOutAndKeep(InboundEvent e, Topic topic, boolean created, long seq) {
        UpdateEncoder.Encoded u = encoder.encode(topic, created, seq, e.value);
        try {
            fanOut.update(u, topic, e, seq);
        } catch (IllegalStateException stopping) {
            if (u.fullValueOfDelta != null) {
                u.fullValueOfDelta.release();
            }
            throw stopping;
        }
        if (topic.features.lastValueCache()) {
            if (!topic.hasValue()) {
                counters.valuesCached(1);
            }
            topic.record(u.frame.retain(), u.updateOffset, u.fullValueOfDelta, System.currentTimeMillis());
        } else if (u.fullValueOfDelta != null) {
            u.fullValueOfDelta.release(); // not reached: deltas need the cache
        }
        publishesInBatch++;
        if (created) {
            subscriptions.resetResumed(topic, u.frame, u.valueIndex, u.valueLength);
        }
        if (topic.viewCount() > 0) {
            // the full value where it stays: the views keep a reference to it, not to the inbound
            // frame; last, since the views may put frames on the ring, and the ring release this one
            ByteBuf full = u.fullValueOfDelta != null ? u.fullValueOfDelta : u.frame;
            int index = u.fullValueOfDelta != null ? full.readerIndex() : u.valueIndex;
            viewed.update(topic, created, seq, full, index, u.valueLength, e.receivedNanos);
        }
    }

    private Topic createTopic(String path, String[] segments) {
        Topic topic = new Topic(nextAlias++, path, segments, subscriberSets.empty(), historyLength,
                historyMaxBytes, historyBudget, features.resolve(segments));
        topic.incarnation = clusterMode ? 0 : nextIncarnation();
        subscriptions.subscribeNew(topic);
        tree.add(topic);
        topicCountChanged();
        return topic;
    }

    /** The topic count changed (a topic made, or topics removed): the gauge, and the heap's give-back. */
    private void topicCountChanged() {
        counters.topics(tree.size());
        heapGiveBack.topics(tree.size());
    }

    /** Whether the log's {@code incarnation} is the topic's, as far as either is known (0: not known). */
    private static boolean sameIncarnation(Topic topic, int incarnation) {
        return incarnation == 0 || topic.incarnation == 0 || incarnation == topic.incarnation;
    }

    /**
     * The next incarnation: one more than the last, so that a path removed and made again within
     * a run gets another (until 2^32 topics were made). A {@code u32}, never 0.
     */
    private int nextIncarnation() {
        lastIncarnation = (lastIncarnation + 1) & 0xFFFFFFFFL;
        if (lastIncarnation == 0) {
            lastIncarnation = 1;
        }
        return (int) lastIncarnation;
    }

    // ------------------------------------------------------------------ removal and expiry

    /**
     * A {@code REMOVE}: removes every topic the selector matches that the session may publish to
     * (every one, for a command of no session), and answers with how many.
     */
    private void remove(InboundEvent e) {
        if (e.selector == null) { // the cluster's log removed it: every node, here in log order
            Topic topic = tree.get(e.path);
            if (topic != null && sameIncarnation(topic, e.fixedIncarnation)) {
                removeTopic(topic);
                removalsDone(1);
            }
            return;
        }
        if (e.removalRoute != null) { // a cluster node's session: the log removes what it matches
            List<String> paths = new ArrayList<>();
            tree.forEachMatch(e.selector, topic -> {
                if (e.session.permissions.mayPublish(topic.segments)) {
                    paths.add(topic.path);
                }
            });
            e.removalRoute.accept(paths);
            return;
        }
        List<Topic> matched = new ArrayList<>();
        tree.forEachMatch(e.selector, topic -> {
            if (e.session == null || e.session.permissions.mayPublish(topic.segments)) {
                matched.add(topic);
            }
        });
        for (Topic topic : matched) {
            removeTopic(topic);
        }
        removalsDone(matched.size());
        if (e.session != null) {
            replies.removed(e.session, e.id, matched.size());
        }
    }

    /**
     * Takes the topic away: its sessions are told ({@code TOPIC_REMOVED}) and leave it, and its
     * value, history, views, alias, expiry and share of the topic limits go. A later publish to its
     * path makes a new topic, of another incarnation, from sequence 1.
     */
    private void removeTopic(Topic topic) {
        expiry.forget(topic);
        subscriptions.removed(topic);
        tree.remove(topic);
        dropValue(topic);
        topic.releaseViewedValue();
        if (topic.creator != null) {
            topicsMadeBy.give(topic.creator);
        }
    }

    /** After removing topics: the counts, and the creation order compacted when it is mostly removed topics. */
    private void removalsDone(int removed) {
        if (removed > 0) {
            counters.topicsRemoved(removed);
            tree.compact(subscriptions.repliesPending());
            topicCountChanged();
        }
    }

    /**
     * A cluster node logs expiries through {@code removals} from now on. Any thread, once: the
     * sequencer reads it when topics are due.
     */
    void logRemovalsThrough(LoggedRemovals removals) {
        loggedRemovals = removals;
    }

    /**
     * Removes the topics whose {@code expireAfterMs} passed without a publish, and arms the timer for
     * the next. A cluster node does not remove them itself: the leader of a due topic's group logs
     * its removal if the topic is still as it is, and every node removes it when the log applies it
     * ({@link #remove}); a topic is due again after another {@code expireAfterMs} if it is still there.
     */
    private void expireDue() {
        long now = System.currentTimeMillis();
        if (expiryArmedFor == Long.MAX_VALUE) {
            return;
        }
        if (expiryArmedFor > now) {
            // the timer woke for a view's held value, and may have let this later time go: again
            armTimer.accept(clock.getAsLong() + (expiryArmedFor - now) * 1_000_000);
            return;
        }
        int[] removed = {0};
        LoggedRemovals logged = loggedRemovals;
        long next = expiry.expire(now, topic -> {
            if (!clusterMode) {
                removeTopic(topic);
                removed[0]++;
                return;
            }
            if (logged != null && logged.leads(topic.path) && logged.removeIfUnchanged(topic.path, topic.sequence)) {
                removed[0]++;
            }
            expiry.touched(topic, now);
        });
        if (!clusterMode) {
            removalsDone(removed[0]);
        }
        counters.topicsExpired(removed[0]);
        expiryArmedFor = Long.MAX_VALUE;
        armExpiry(next);
    }

    /** Asks the timer for a {@code FLUSH_HELD} at {@code dueMillis} (epoch), unless one is asked for sooner. */
    private void armExpiry(long dueMillis) {
        if (dueMillis == Long.MAX_VALUE || dueMillis >= expiryArmedFor) {
            return;
        }
        expiryArmedFor = dueMillis;
        long inMillis = Math.max(0, dueMillis - System.currentTimeMillis());
        armTimer.accept(clock.getAsLong() + inMillis * 1_000_000);
    }

    /** Releases the topic's history and last value, if it keeps any. */
    private void dropValue(Topic topic) {
        if (topic.hasValue()) {
            topic.releaseHistory();
            counters.valuesCached(-1);
        }
    }

    private void sessionClosed(Session session) {
        subscriptions.sessionClosed(session);
    }

    /** A hot reload: every topic takes the toggles the new section gives it, from its next update on. */
    private void reloadFeatures(FeatureResolver newFeatures) {
        features = newFeatures;
        encoder.reload(newFeatures.features());
        for (Topic topic : tree.all()) {
            boolean had = topic.hasValue();
            topic.features(newFeatures.resolve(topic.segments));
            if (had && !topic.hasValue()) {
                counters.valuesCached(-1);
            }
            expiry.reloaded(topic);
        }
        expiryArmedFor = Long.MAX_VALUE; // the next due may be sooner, or none
        armExpiry(expiry.nextDue());
        log.info("features reloaded: {} topics re-resolved, {} of them expire", tree.size(), expiry.size());
    }

    // ------------------------------------------------------------------ the cluster's snapshots

    /**
     * Answers the cluster's snapshot ({@link TopicSnapshotContent}): captures every topic's sequence
     * and newest value in {@link TopicStateFile}'s format, without history (a snapshot's cost follows
     * the topics, not {@code history.length}: 4,096 updates of 100 topics made snapshots of 43 MB that
     * held the engine for seconds), or takes over a snapshot's topics. Behind every update the
     * cluster handed over before it (one ring, in order), so a capture is the state after the last
     * entry applied. A failure is the request's answer: the engine thread waits for one.
     */
    private void snapshot(TopicSnapshotRequest request) {
        try {
            if (request.isCapture()) {
                PiecedBytes bytes = new PiecedBytes();
                TopicStateFile.writeTo(new DataOutputStream(bytes), inGroup(request.inGroup), false);
                request.answer(bytes);
            } else {
                takeOver(request.topics, request.pathLimits, request.inGroup);
                request.answer(null);
            }
        } catch (IOException | RuntimeException e) {
            request.fail(e);
        }
    }

    /** The topics of one Raft group (a snapshot's), of every topic. */
    private Iterable<Topic> inGroup(Predicate<String> inGroup) {
        List<Topic> topics = new ArrayList<>();
        for (Topic topic : tree.all()) {
            if (inGroup.test(topic.path)) {
                topics.add(topic);
            }
        }
        return topics;
    }

    /** A topic the take-over gave a state, as it was before. */
    private record Replaced(Topic topic, boolean created, long sequenceBefore) {
    }

    /**
     * Replaces the topics' state with a snapshot's: each topic's sequence and newest value (a
     * cluster snapshot carries no history, {@link #snapshot}), rebuilt under this run's aliases and
     * features ({@link TopicRestore}); topics new here are made, with the subscribers their path
     * matches. A topic already at the snapshot's sequence holds the same value (both were decided by
     * the same log) and keeps its history. Subscribers of a topic whose sequence moved get its value
     * as the next update when it moved by one, else are told as across any gap
     * ({@link Subscriptions#replaced}).
     *
     * <p>A topic this node has and the snapshot has not was removed by entries this node had not
     * applied: it is removed here too, its subscribers told ({@code TOPIC_REMOVED}), as the log's
     * state machine, replaced by the same snapshot, numbers it anew from 1. A topic of the same path
     * in the snapshot but of another incarnation was removed and made again: the same, then made
     * anew. Logged, as is a topic the snapshot moves back.
     */
    private void takeOver(List<TopicStateFile.SavedTopic> saved, PathLimits limits, Predicate<String> inGroup) {
        Map<String, Integer> incarnations = new HashMap<>();
        for (TopicStateFile.SavedTopic t : saved) {
            incarnations.put(t.path(), t.incarnation());
        }
        int removed = 0;
        for (Topic topic : inGroup(inGroup)) {
            Integer incarnation = incarnations.get(topic.path);
            if (incarnation == null || incarnation != 0 && topic.incarnation != 0 && incarnation != topic.incarnation) {
                log.info("cluster snapshot: topic '{}' (sequence {}) was removed by entries this node had not applied; "
                        + "removed here too", topic.path, topic.sequence);
                removeTopic(topic);
                removed++;
            }
        }
        removalsDone(removed);
        // a topic at the snapshot's sequence holds what the snapshot holds, and more history: kept as it is
        List<TopicStateFile.SavedTopic> moved = new ArrayList<>(saved.size());
        for (TopicStateFile.SavedTopic t : saved) {
            Topic topic = tree.get(t.path());
            if (topic == null || topic.sequence != t.sequence()) {
                moved.add(t);
            }
        }
        List<Replaced> replaced = new ArrayList<>(moved.size());
        new TopicRestore(encoder, counters).restore(moved, limits, (path, segments) -> {
            Topic topic = tree.get(path);
            if (topic == null) {
                topic = createTopic(path, segments);
                replaced.add(new Replaced(topic, true, 0));
            } else {
                replaced.add(new Replaced(topic, false, topic.sequence));
                dropValue(topic);
            }
            return topic;
        });
        int created = 0;
        int movedOn = 0;
        for (Replaced r : replaced) {
            if (r.created) {
                created++;
            } else if (r.topic.sequence != r.sequenceBefore) {
                movedOn++;
                if (r.topic.sequence < r.sequenceBefore) {
                    log.warn("cluster snapshot: topic '{}' moved back from sequence {} to {}", r.topic.path,
                            r.sequenceBefore, r.topic.sequence);
                }
            }
            if (r.created || r.topic.sequence != r.sequenceBefore) {
                subscriptions.replaced(r.topic, r.created, r.sequenceBefore); // one moved back: a gap
            }
        }
        log.info("cluster snapshot taken over: {} topics, {} new here, {} moved on, {} as they were", saved.size(),
                created, movedOn, saved.size() - created - movedOn);
    }

    // ------------------------------------------------------------------ across a restart

    /**
     * Takes over the topics a previous run saved, under this run's aliases and features. Only
     * before the sequencer thread starts.
     *
     * @return how many topics were restored; a saved path this run's limits refuse is skipped, and logged
     */
    int restore(List<TopicStateFile.SavedTopic> saved, PathLimits limits) {
        assert thread == null : "restore before the sequencer starts";
        republishes.startedWithHistory();
        int restored = new TopicRestore(encoder, counters).restore(saved, limits, this::createTopic);
        long now = System.currentTimeMillis();
        for (Topic topic : tree.all()) {
            expiry.touched(topic, now); // a restart starts their expiry anew: the node kept no time of them
        }
        armExpiry(expiry.nextDue());
        return restored;
    }

    /** Saves every topic for the next run. Only after the sequencer thread has stopped. */
    int save(Path file) throws IOException {
        assert thread == null || !thread.isAlive() : "save after the sequencer stopped";
        return TopicStateFile.write(file, tree.all());
    }

    /** The topic at {@code path}, or null. Sequencer thread: tests that play it read the state they made. */
    Topic topic(String path) {
        return tree.get(path);
    }

    /** Tells a sequencer blocked on a full fan-out ring to give up: the server is stopping. Any thread. */
    void halt() {
        fanOut.halt();
    }

    /** Releases every frame still held by history and the fan-out ring. Only after the sequencer and every poller stopped. */
    void releaseAll() {
        for (Topic topic : tree.all()) {
            topic.releaseHistory();
            topic.releaseViewedValue();
        }
        fanOut.releaseAll();
        replies.close();
        viewed.close();
        encoder.close();
    }
}
