package io.ringcast.cluster.internal;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.ClusterStatus;
import io.ringcast.cluster.PublishOutcome;
import io.ringcast.cluster.UpdateSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The cluster protocol of one node (docs/clustering.md, "Between nodes"):
 * <ul>
 *   <li>a publish goes to its partition's owner ({@link PeerMessage.Forward}), which gives it the
 *       next partition and topic sequence, sends it to the backup and, once the backup has applied
 *       it ({@link PeerMessage.Replicated}), applies it, sends it to every other node and answers
 *       the publisher's node;</li>
 *   <li>every node applies each partition's updates in partition-sequence order, holds what comes
 *       early and fetches what is missing ({@link PeerMessage.Fetch}) from the owner;</li>
 *   <li>after each view change, an owner that loses a partition to a live node finishes what it
 *       has in flight and hands it over ({@link PeerMessage.Handoff}); a partition whose owner
 *       left goes to its backup at once; owners announce their partitions' last sequences
 *       ({@link PeerMessage.OwnerState}) so that everyone catches up;</li>
 *   <li>a view without a majority of the configured members sequences nothing.</li>
 * </ul>
 *
 * <p>Thread contract: every method but the constructor, {@link #start}, {@link #ready} and
 * {@link #close} runs on the cluster event loop, which owns all of this state; that is asserted.
 */
public final class ClusterProtocol implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterProtocol.class);
    private static final long TICK_MS = 100;
    /** A forward or replication unanswered this long is sent again (the receiver drops duplicates). */
    private static final long RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);
    /** At most one fetch per partition this often. */
    private static final long FETCH_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long ANNOUNCE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);
    /** A forward the owner could not take yet (not its partition yet) is routed again after this. */
    private static final long REROUTE_DELAY_MS = 20;

    private final ClusterSettings settings;
    private final String self;
    private final EventLoop loop;
    private final UpdateSink sink;
    private final PeerLinks links;
    private final Partition[] parts;
    private final Map<Long, Pending> pending = new HashMap<>();
    private final CompletableFuture<Void> ready = new CompletableFuture<>();

    private List<String> view = List.of();
    private long viewId = -1;
    /** Members whose announcement for the current view has come. */
    private final Set<String> heardFrom = new HashSet<>();
    private PartitionTable table;
    private boolean majority;
    private long viewChanges;
    /**
     * Starts at random: a node that restarts must not reuse the ids of its earlier run, which the
     * owners still remember (in their logs) as publishes they sequenced already.
     */
    private long nextRequestId = new java.security.SecureRandom().nextLong() >>> 2;
    private long lastAnnounceNanos;
    private ScheduledFuture<?> ticker;
    /** Refreshed by the cluster thread every tick, read by /health and the metrics. */
    private volatile ClusterStatus published;

    public ClusterProtocol(ClusterSettings settings, EventLoop loop, UpdateSink sink) {
        this.settings = settings;
        this.self = settings.nodeName();
        this.loop = loop;
        this.sink = sink;
        this.links = new PeerLinks(settings, loop, this::onMessage);
        this.parts = new Partition[settings.partitions()];
        for (int p = 0; p < parts.length; p++) {
            parts[p] = new Partition(p, settings.logLength());
        }
        // before the first view this node owns nothing and may serve nothing
        this.table = null;
        this.published = new ClusterStatus(self, List.of(), false, false, 0, 0, 0, 0, 0, 0);
    }

    /** Binds the peer port and starts the timer. Any thread, once. */
    public void start() throws InterruptedException {
        links.start();
        ticker = loop.scheduleAtFixedRate(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    }

    /** Completes once the node has caught up with every partition's owner after joining. */
    public CompletableFuture<Void> ready() {
        return ready;
    }

    // ------------------------------------------------------------------ publishing (the node that received it)

    /**
     * A client's publish received on this node.
     *
     * @param publisherId   the client's publisher id (0: none), with its correlation id: a publish the
     *                      client sends again, through this node or another, is applied once
     */
    public void publish(String path, byte[] value, long publisherId, int correlationId,
                        ClusterNode.PublishCallback callback) {
        assert loop.inEventLoop();
        long id = ++nextRequestId;
        Pending p = new Pending(id, PartitionTable.partitionOf(path, parts.length), path, value, publisherId,
                correlationId, callback,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.replicationTimeoutMs()));
        pending.put(id, p);
        route(p);
    }

    private void route(Pending p) {
        if (!majority || table == null) {
            complete(p, PublishOutcome.NO_MAJORITY, 0);
            return;
        }
        String owner = table.owner(p.partition);
        p.sentTo = owner;
        p.sentNanos = System.nanoTime();
        PeerMessage.Forward f = new PeerMessage.Forward(p.id, self, p.partition, p.path, p.value, p.publisherId,
                p.correlationId);
        if (owner.equals(self)) {
            onForward(self, f);
        } else {
            links.send(owner, f);
        }
    }

    private void complete(Pending p, PublishOutcome outcome, long topicSequence) {
        pending.remove(p.id);
        try {
            p.callback.completed(outcome, topicSequence);
        } catch (RuntimeException e) {
            log.error("publish callback failed", e);
        }
    }

    private void onForwardResult(PeerMessage.ForwardResult r) {
        Pending p = pending.get(r.requestId());
        if (p == null) {
            return; // answered already (a resent forward answered twice), or timed out
        }
        switch (r.status()) {
            case PeerMessage.ForwardResult.OK:
                complete(p, PublishOutcome.ACKED, r.topicSequence());
                break;
            case PeerMessage.ForwardResult.NO_MAJORITY:
                complete(p, PublishOutcome.NO_MAJORITY, 0);
                break;
            default: // NOT_OWNER: views differ for a moment; try again when ours has moved on
                p.sentTo = null;
                loop.schedule(() -> {
                    if (pending.get(p.id) == p && p.sentTo == null) {
                        route(p);
                    }
                }, REROUTE_DELAY_MS, TimeUnit.MILLISECONDS);
                break;
        }
    }

    // ------------------------------------------------------------------ sequencing (the owner)

    private void onForward(String from, PeerMessage.Forward f) {
        Partition part = parts[f.partition()];
        if (!majority) {
            // only the receiving node's own view decides NO_MAJORITY; this one may just not have
            // installed the view the sender already has (a node joining): route again
            answer(f, from.equals(self) ? PeerMessage.ForwardResult.NO_MAJORITY : PeerMessage.ForwardResult.NOT_OWNER, 0);
            return;
        }
        String key = f.dedupKey();
        Long done = part.dedup.get(key);
        if (done != null) {
            answer(f, PeerMessage.ForwardResult.OK, done); // a retry of an update sequenced before
            return;
        }
        if (part.inflightKeys.contains(key)) {
            return; // answered when its backup confirms it
        }
        if (part.role == Role.AWAITING_HANDOFF) {
            part.waitingForHandoff.add(f);
            return;
        }
        if (part.role != Role.ACTIVE || table == null || !self.equals(table.owner(f.partition()))) {
            answer(f, PeerMessage.ForwardResult.NOT_OWNER, 0);
            return;
        }
        long pseq = ++part.sequenced;
        long base = part.ownerTopicSequences.getOrDefault(f.path(), part.topicSequence(f.path()));
        long topicSeq = base + 1;
        part.ownerTopicSequences.put(f.path(), topicSeq);
        PeerMessage.Update u = new PeerMessage.Update(f.partition(), pseq, topicSeq, f.origin(), f.requestId(),
                f.path(), f.value(), true, f.publisherId(), f.correlationId());
        part.inflight.add(new Inflight(u, System.nanoTime()));
        part.inflightKeys.add(key);
        String backup = table.backup(f.partition());
        if (backup == null) {
            commitUpTo(part, pseq);
        } else {
            links.send(backup, u);
        }
    }

    private void answer(PeerMessage.Forward f, int status, long topicSequence) {
        PeerMessage.ForwardResult r = new PeerMessage.ForwardResult(f.requestId(), status, topicSequence);
        if (f.origin().equals(self)) {
            onForwardResult(r);
        } else {
            links.send(f.origin(), r);
        }
    }

    private void onReplicated(String from, PeerMessage.Replicated r) {
        Partition part = parts[r.partition()];
        boolean sequencing = part.role == Role.ACTIVE || part.role == Role.HANDING_OFF;
        if (sequencing && table != null && from.equals(table.backup(r.partition()))) {
            commitUpTo(part, r.upTo());
        }
    }

    /** The backup holds every update up to {@code upTo}: apply them here, send them to everyone, answer. */
    private void commitUpTo(Partition part, long upTo) {
        while (!part.inflight.isEmpty() && part.inflight.peek().update.partitionSequence() <= upTo) {
            PeerMessage.Update u = part.inflight.poll().update;
            part.inflightKeys.remove(u.dedupKey());
            applyLocally(part, u);
            PeerMessage.Update broadcast = u.forwarded();
            String backup = table.backup(part.id);
            for (String member : view) {
                if (!member.equals(self) && !member.equals(backup)) {
                    links.send(member, broadcast);
                }
            }
            answer(new PeerMessage.Forward(u.requestId(), u.origin(), u.partition(), u.path(), u.value(),
                    u.publisherId(), u.correlationId()), PeerMessage.ForwardResult.OK, u.topicSequence());
        }
        if (part.inflight.isEmpty() && part.handoffTo != null) {
            handOff(part);
        }
    }

    // ------------------------------------------------------------------ applying (every node)

    private void onUpdate(String from, PeerMessage.Update u) {
        Partition part = parts[u.partition()];
        if (part.role == Role.ACTIVE) {
            log.debug("partition {}: update {} from {} ignored, this node sequences it", part.id,
                    u.partitionSequence(), from);
            return;
        }
        part.known = Math.max(part.known, u.partitionSequence());
        if (u.partitionSequence() == part.applied + 1) {
            applyLocally(part, u);
            drainHeld(part);
        } else if (u.partitionSequence() > part.applied + 1) {
            part.held.put(u.partitionSequence(), u);
            fetch(part, from);
        }
        if (u.replicate()) {
            links.send(from, new PeerMessage.Replicated(part.id, part.applied));
        }
        progressHandoff(part);
    }

    private void drainHeld(Partition part) {
        while (!part.held.isEmpty()) {
            Map.Entry<Long, PeerMessage.Update> first = part.held.firstEntry();
            if (first.getKey() <= part.applied) {
                part.held.pollFirstEntry();
            } else if (first.getKey() == part.applied + 1) {
                part.held.pollFirstEntry();
                applyLocally(part, first.getValue());
            } else {
                break;
            }
        }
    }

    private void applyLocally(Partition part, PeerMessage.Update u) {
        assert u.partitionSequence() == part.applied + 1 : "partition " + part.id + " applies in order";
        part.applied = u.partitionSequence();
        part.known = Math.max(part.known, part.applied);
        PeerMessage.Update evicted = part.log.add(u);
        if (evicted != null) {
            part.dedup.remove(evicted.dedupKey());
        }
        part.dedup.put(u.dedupKey(), u.topicSequence());
        part.topics.put(u.path(), new PeerMessage.TopicValue(u.path(), u.topicSequence(), u.value()));
        sink.apply(u.path(), u.topicSequence(), u.value());
    }

    /** Asks for what this node lacks of {@code part}, at most every {@link #FETCH_INTERVAL_NANOS}. */
    private void fetch(Partition part, String preferred) {
        long now = System.nanoTime();
        if (now - part.lastFetchNanos < FETCH_INTERVAL_NANOS) {
            return;
        }
        String source = preferred;
        if (source == null || source.equals(self) || !view.contains(source)) {
            source = table == null ? null : table.owner(part.id);
            if (source == null || source.equals(self)) {
                source = table == null ? null : table.backup(part.id);
            }
        }
        if (source == null || source.equals(self)) {
            return;
        }
        part.lastFetchNanos = now;
        links.send(source, new PeerMessage.Fetch(part.id, part.applied));
    }

    private void onFetch(String from, PeerMessage.Fetch f) {
        Partition part = parts[f.partition()];
        if (f.after() >= part.applied) {
            return;
        }
        if (part.log.covers(f.after() + 1)) {
            for (long s = f.after() + 1; s <= part.applied; s++) {
                PeerMessage.Update u = part.log.get(s);
                links.send(from, u.forwarded());
            }
        } else {
            links.send(from, new PeerMessage.PartitionSnapshot(part.id, part.applied,
                    new ArrayList<>(part.topics.values())));
        }
    }

    private void onSnapshot(String from, PeerMessage.PartitionSnapshot s) {
        Partition part = parts[s.partition()];
        if (part.role == Role.ACTIVE || s.partitionSequence() <= part.applied) {
            return;
        }
        for (PeerMessage.TopicValue t : s.topics()) {
            if (part.topicSequence(t.path()) < t.topicSequence()) {
                part.topics.put(t.path(), t);
                sink.apply(t.path(), t.topicSequence(), t.value());
            }
        }
        part.applied = s.partitionSequence();
        part.known = Math.max(part.known, part.applied);
        part.log.restartAfter(part.applied);
        part.dedup.clear(); // retries of updates before the snapshot are no longer recognised
        drainHeld(part);
        progressHandoff(part);
    }

    // ------------------------------------------------------------------ views, handoff, takeover

    /**
     * A new view from membership: recompute the table; hand over partitions this node lost to a
     * live node, wait for those it gained (a handoff, or every member saying nobody sequences
     * them), re-route the publishes in flight, and announce what this node sequences.
     *
     * @param viewId    the view's id, the same at every member: announcements count only within one view
     * @param members   the members, in the view's order
     * @param carriedOn in a merge, the side that held a majority and went on sequencing; a node that
     *                  was not on it (a minority side, or frozen while the others moved on) gives up
     *                  what it sequenced before and takes its partitions back by handoff
     */
    public void onView(long viewId, List<String> members, List<String> carriedOn) {
        assert loop.inEventLoop();
        viewChanges++;
        List<String> previousView = view;
        this.viewId = viewId;
        view = List.copyOf(members);
        table = new PartitionTable(members, parts.length);
        majority = members.size() >= settings.majority();
        heardFrom.clear();
        log.info("view {}: {} ({}), owning {} partitions", viewId, members,
                majority ? "majority" : "minority of " + settings.members().size() + ": not sequencing",
                table.ownedBy(self).length);
        for (String gone : previousView) {
            if (!members.contains(gone)) {
                links.disconnect(gone);
            }
        }
        boolean cutOff = carriedOn != null && !carriedOn.contains(self);
        if (cutOff) {
            log.info("view {}: merged back after the others went on without this node; taking its state from them",
                    viewId);
        }
        for (Partition part : parts) {
            part.claimedBy = null;
            String owner = table.owner(part.id);
            if (!majority || cutOff) {
                // a minority sequences nothing and claims nothing: the majority side went on without it
                if (!majority && owner.equals(self)) {
                    part.ready = true; // nobody to catch up with for it
                }
                if (part.role != Role.NONE) {
                    part.role = Role.NONE;
                    part.inflight.clear();
                    part.inflightKeys.clear();
                    answerWaiting(part);
                    part.handoffTo = null;
                }
                if (!majority) {
                    continue;
                }
            }
            if (owner.equals(self)) {
                if (part.role == Role.HANDING_OFF) {
                    part.role = Role.ACTIVE; // given back before it was handed over
                    part.handoffTo = null;
                } else if (part.role == Role.NONE) {
                    part.role = Role.AWAITING_HANDOFF;
                }
            } else if (part.role == Role.ACTIVE || part.role == Role.HANDING_OFF) {
                part.role = Role.HANDING_OFF;
                part.handoffTo = owner;
                if (part.inflight.isEmpty()) {
                    handOff(part);
                }
            } else if (part.role == Role.AWAITING_HANDOFF) {
                part.role = Role.NONE; // a handoff that still comes is passed on (progressHandoff)
                answerWaiting(part);
            }
            if (part.role == Role.ACTIVE || part.role == Role.HANDING_OFF) {
                String backup = table.backup(part.id);
                if (backup == null || backup.equals(self)) {
                    // alone, or this node (handing over) is now the backup itself: it holds them
                    commitUpTo(part, part.sequenced);
                } else {
                    for (Inflight i : part.inflight) {
                        links.send(backup, i.update);
                        i.sentNanos = System.nanoTime();
                    }
                }
            }
        }
        for (Pending p : new ArrayList<>(pending.values())) {
            if (p.sentTo == null || !p.sentTo.equals(table.owner(p.partition)) || !members.contains(p.sentTo)) {
                route(p);
            }
        }
        for (Partition part : parts) {
            if (majority) {
                progressHandoff(part); // a handoff may have come before this view did
            }
        }
        announce();
        activateUnclaimed();
        publishStatus();
    }

    /** Forwards held for a partition this node no longer gets: their nodes route them again. */
    private void answerWaiting(Partition part) {
        List<PeerMessage.Forward> waiting = new ArrayList<>(part.waitingForHandoff);
        part.waitingForHandoff.clear();
        for (PeerMessage.Forward f : waiting) {
            answer(f, PeerMessage.ForwardResult.NOT_OWNER, 0);
        }
    }

    /**
     * Once every other member has announced, in this view, the partitions it sequences, a partition
     * this node owns that nobody claims is taken over as it is: its previous owner left, and this
     * node, its backup, applied every update that was acked.
     */
    private void activateUnclaimed() {
        if (!majority || table == null) {
            return;
        }
        for (String member : view) {
            if (!member.equals(self) && !heardFrom.contains(member)) {
                return;
            }
        }
        boolean any = false;
        for (Partition part : parts) {
            if (part.role == Role.AWAITING_HANDOFF && part.claimedBy == null && part.handoffLast < 0) {
                activate(part);
                any = true;
            }
        }
        if (any) {
            announce();
        }
    }

    private void activate(Partition part) {
        log.debug("partition {}: sequencing from {}", part.id, part.applied + 1);
        part.role = Role.ACTIVE;
        part.handoffFrom = null;
        part.handoffTo = null;
        part.handoffLast = -1;
        part.sequenced = part.applied;
        part.ownerTopicSequences.clear();
        part.held.clear();
        part.ready = true;
        List<PeerMessage.Forward> waiting = new ArrayList<>(part.waitingForHandoff);
        part.waitingForHandoff.clear();
        for (PeerMessage.Forward f : waiting) {
            onForward(f.origin(), f);
        }
    }

    private void handOff(Partition part) {
        String to = part.handoffTo;
        part.role = Role.NONE;
        part.handoffTo = null;
        log.debug("partition {}: handed to {} at {}", part.id, to, part.applied);
        links.send(to, new PeerMessage.Handoff(part.id, part.applied));
    }

    private void onHandoff(String from, PeerMessage.Handoff h) {
        Partition part = parts[h.partition()];
        // kept even when this node still thinks it sequences the partition: the handoff can come
        // before the view that takes it away (a node merging back), and must not be lost
        part.handoffLast = Math.max(part.handoffLast, h.last());
        part.handoffFrom = from;
        progressHandoff(part);
    }

    /** A handoff received: once caught up to its last sequence, take the partition, or pass it on. */
    private void progressHandoff(Partition part) {
        if (part.handoffLast < 0 || table == null) {
            return;
        }
        if (part.applied < part.handoffLast) {
            fetch(part, part.handoffFrom);
            return;
        }
        String owner = table.owner(part.id);
        if (self.equals(owner)) {
            if (part.role == Role.AWAITING_HANDOFF) {
                activate(part);
                announce();
            }
        } else if (part.role == Role.NONE) {
            long last = part.handoffLast;
            part.handoffLast = -1;
            part.handoffFrom = null;
            links.send(owner, new PeerMessage.Handoff(part.id, last));
        }
    }

    /** Tells every member, for this view, the partitions this node sequences and their last sequences. */
    private void announce() {
        lastAnnounceNanos = System.nanoTime();
        int n = 0;
        for (Partition part : parts) {
            if (part.role == Role.ACTIVE || part.role == Role.HANDING_OFF) {
                n++;
            }
        }
        int[] owned = new int[n];
        long[] last = new long[n];
        int i = 0;
        for (Partition part : parts) {
            if (part.role == Role.ACTIVE || part.role == Role.HANDING_OFF) {
                owned[i] = part.id;
                last[i++] = part.applied;
            }
        }
        PeerMessage.OwnerState state = new PeerMessage.OwnerState(viewId, owned, last);
        for (String member : view) {
            if (!member.equals(self)) {
                links.send(member, state);
            }
        }
        checkReady();
    }

    private void onOwnerState(String from, PeerMessage.OwnerState s) {
        if (table == null) {
            return;
        }
        boolean thisView = s.viewId() == viewId;
        for (int i = 0; i < s.partitions().length; i++) {
            int p = s.partitions()[i];
            if (p < 0 || p >= parts.length) {
                continue;
            }
            Partition part = parts[p];
            if (thisView) {
                part.claimedBy = from;
            }
            if (!from.equals(table.owner(p)) || part.role == Role.ACTIVE) {
                continue;
            }
            part.known = Math.max(part.known, s.last()[i]);
            if (part.applied < s.last()[i]) {
                fetch(part, from);
            } else {
                part.ready = true;
            }
        }
        if (thisView && heardFrom.add(from)) {
            activateUnclaimed();
        }
        checkReady();
    }

    private void checkReady() {
        if (ready.isDone() || table == null) {
            return;
        }
        for (Partition part : parts) {
            if (!part.ready || part.applied < part.known) {
                return;
            }
        }
        log.info("caught up with every partition's owner: ready");
        ready.complete(null);
    }

    // ------------------------------------------------------------------ messages and time

    private void onMessage(String from, PeerMessage m) {
        if (m instanceof PeerMessage.Update u) {
            if (validPartition(u.partition())) {
                onUpdate(from, u);
            }
        } else if (m instanceof PeerMessage.Replicated r) {
            if (validPartition(r.partition())) {
                onReplicated(from, r);
            }
        } else if (m instanceof PeerMessage.Forward f) {
            if (validPartition(f.partition())) {
                onForward(from, f);
            }
        } else if (m instanceof PeerMessage.ForwardResult r) {
            onForwardResult(r);
        } else if (m instanceof PeerMessage.Fetch f) {
            if (validPartition(f.partition())) {
                onFetch(from, f);
            }
        } else if (m instanceof PeerMessage.OwnerState s) {
            onOwnerState(from, s);
        } else if (m instanceof PeerMessage.Handoff h) {
            if (validPartition(h.partition())) {
                onHandoff(from, h);
            }
        } else if (m instanceof PeerMessage.PartitionSnapshot s) {
            if (validPartition(s.partition())) {
                onSnapshot(from, s);
            }
        }
    }

    private boolean validPartition(int p) {
        if (p < 0 || p >= parts.length) {
            log.warn("peer message for partition {} of {} ignored: is cluster.partitions the same on every node?",
                    p, parts.length);
            return false;
        }
        return true;
    }

    /** Timeouts, resends and catching up, every {@link #TICK_MS}. */
    private void tick() {
        long now = System.nanoTime();
        for (Pending p : new ArrayList<>(pending.values())) {
            if (now - p.deadlineNanos > 0) {
                complete(p, PublishOutcome.TIMED_OUT, 0);
            } else if (p.sentTo != null && now - p.sentNanos > RESEND_NANOS) {
                route(p);
            }
        }
        if (table == null) {
            return;
        }
        for (Partition part : parts) {
            if ((part.role == Role.ACTIVE || part.role == Role.HANDING_OFF) && !part.inflight.isEmpty()) {
                Inflight oldest = part.inflight.peek();
                String backup = table.backup(part.id);
                if (backup != null && !backup.equals(self) && now - oldest.sentNanos > RESEND_NANOS) {
                    for (Inflight i : part.inflight) {
                        links.send(backup, i.update);
                        i.sentNanos = now;
                    }
                }
            }
            if (part.role != Role.ACTIVE && (part.applied < part.known || !part.held.isEmpty()
                    || part.handoffLast > part.applied)) {
                fetch(part, part.handoffLast > part.applied ? part.handoffFrom : null);
            }
            if (majority && part.handoffLast >= 0) {
                progressHandoff(part);
            }
        }
        if (now - lastAnnounceNanos > ANNOUNCE_INTERVAL_NANOS) {
            announce();
        }
        publishStatus();
    }

    /** This node's view of the cluster as of the last tick or view change. Any thread. */
    public ClusterStatus status() {
        return published;
    }

    private void publishStatus() {
        long behind = 0;
        int awaiting = 0;
        for (Partition part : parts) {
            behind += Math.max(0, part.known - part.applied);
            awaiting += part.inflight.size();
        }
        published = new ClusterStatus(self, view, majority, ready.isDone(),
                table == null ? 0 : table.ownedBy(self).length, table == null ? 0 : table.backedUpBy(self).length,
                behind, awaiting, pending.size(), viewChanges);
    }

    @Override
    public void close() {
        if (ticker != null) {
            ticker.cancel(false);
        }
        links.close();
    }

    // ------------------------------------------------------------------ state

    private enum Role {
        /** Another node sequences this partition. */
        NONE,
        /** This node sequences it. */
        ACTIVE,
        /** This node owns it by the table but waits for the previous owner's handoff. */
        AWAITING_HANDOFF,
        /** This node lost it to a live node and finishes what it has in flight before handing over. */
        HANDING_OFF
    }

    /** One partition as this node knows it. */
    private static final class Partition {
        final int id;
        final PartitionLog log;
        /** Newest value and sequence of each of its topics. */
        final Map<String, PeerMessage.TopicValue> topics = new HashMap<>();
        /** {@code origin#requestId} of the updates in the log, with their topic sequence: retries are answered, not applied twice. */
        final Map<String, Long> dedup = new HashMap<>();
        /** Updates that came before their predecessors. */
        final TreeMap<Long, PeerMessage.Update> held = new TreeMap<>();
        Role role = Role.NONE;
        /** The newest partition sequence applied here; every one before it is applied too. */
        long applied;
        /** The newest partition sequence this node knows exists. */
        long known;
        /** Whether this node has heard from the partition's owner since it joined (for {@link #ready}). */
        boolean ready;
        long lastFetchNanos = System.nanoTime() - FETCH_INTERVAL_NANOS;

        // owner
        long sequenced;
        final ArrayDeque<Inflight> inflight = new ArrayDeque<>();
        final Set<String> inflightKeys = new HashSet<>();
        /** Topic sequences given to updates still in flight. */
        final Map<String, Long> ownerTopicSequences = new HashMap<>();
        final List<PeerMessage.Forward> waitingForHandoff = new ArrayList<>();

        // handoff
        /** Where the handoff came from: the node to fetch from until caught up with it. */
        String handoffFrom;
        String handoffTo;
        /** The member that announced, in this view, that it sequences this partition. */
        String claimedBy;
        long handoffLast = -1;

        Partition(int id, int logLength) {
            this.id = id;
            this.log = new PartitionLog(logLength);
        }

        long topicSequence(String path) {
            PeerMessage.TopicValue t = topics.get(path);
            return t == null ? 0 : t.topicSequence();
        }
    }

    private static final class Inflight {
        final PeerMessage.Update update;
        long sentNanos;

        Inflight(PeerMessage.Update update, long sentNanos) {
            this.update = update;
            this.sentNanos = sentNanos;
        }
    }

    /** A publish received on this node, until its owner answers. */
    private static final class Pending {
        final long id;
        final int partition;
        final String path;
        final byte[] value;
        final long publisherId;
        final int correlationId;
        final ClusterNode.PublishCallback callback;
        final long deadlineNanos;
        String sentTo;
        long sentNanos;

        Pending(long id, int partition, String path, byte[] value, long publisherId, int correlationId,
                ClusterNode.PublishCallback callback, long deadlineNanos) {
            this.id = id;
            this.partition = partition;
            this.path = path;
            this.value = value;
            this.publisherId = publisherId;
            this.correlationId = correlationId;
            this.callback = callback;
            this.deadlineNanos = deadlineNanos;
        }
    }
}
