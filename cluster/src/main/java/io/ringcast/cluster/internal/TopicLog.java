package io.ringcast.cluster.internal;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.UpdateSink;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublisherLedgers;
import io.ringcast.log.SnapshotFields;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * The state machine of one Raft group: applies the group's committed entries, each a batch of
 * publishes and removals ({@link TopicLogCodec}), in log order, and decides for each publish whether
 * it is applied and with which topic sequence, and for each removal whether it removes its topic.
 * Everything it decides depends only on the log (and on the bounds it is made with, which must
 * be the same on every node): never on time, on the node, or on chance.
 * So every node of the group numbers every topic alike and recognises the same duplicates.
 *
 * <p>For each publish of an entry, in order: with a publisher id, its publisher's ledger decides
 * first ({@link PublisherLedgers.Ledger#screen}: a publish seen before, one out of its session's
 * order, a {@code REPUBLISH} it cannot vouch for), by the rules a single node's sequencer applies
 * in-line as well; a publish that would create a topic past {@code maxTopics}, or create one at all
 * when it is {@link LoggedPublish#existingTopicOnly} (the node that took it was past its heap mark), is
 * {@link PublishResult.Outcome#TOO_MANY_TOPICS}; else it is {@link PublishResult.Outcome#APPLIED}:
 * the topic's next sequence (the first is 1), recorded in the ledger, and handed to the {@link UpdateSink}.
 * Only those applied reach the sink, in log order.
 *
 * <p>A removal ({@link LoggedRemoval}) removes its topic if the topic exists and, when the removal
 * names an {@code ifLastSequence}, its last sequence is that one (an expiry: a publish that reached
 * the log first keeps the topic). The topic leaves the replicated state (its sequence, its place
 * under {@code maxTopics}), the sink is told ({@link UpdateSink#removed}), in log order with the
 * updates, and the next publish to the path creates a new topic from sequence 1. Its result is
 * {@link PublishResult.Outcome#APPLIED} with the removed topic's last sequence, or with 0 when it
 * removed nothing. The publishers' ledgers keep what they recorded for the removed topic: a publish
 * sent again is still recognised, and answered with the sequence it got then.
 *
 * <p>Each topic has an <em>incarnation</em>, decided by the log when the topic is made: the ordinal
 * of the entry that made it (below), cast to an int, 1 for 0, so the same on every node; a path
 * removed and made again within one entry is told apart too ({@link #incarnation}). It tells a
 * path's removed topic from the one made after it: docs/protocol.md, "Removing topics".
 *
 * <p>The response (when asked for) carries the entry's ordinal and one result per record, in the
 * entry's order. A malformed entry is refused as a whole, before any of it is applied, with a
 * response saying why; it never throws, since an exception from {@link #apply} would stop the
 * engine's commit index at that entry for good.
 *
 * <p>Each entry applied gets the next <em>ordinal</em> (the count of entries applied,
 * {@link #appliedEntries}; a malformed one, refused whole, changes nothing and gets none): the same
 * entry has the same ordinal on every node, since each applies the same committed entries in the
 * same order (the jgroups engine's catch-up barriers, {@code BarrierLog}, do not reach this class
 * on any node). Once an entry's updates are in the sink, its ordinal is told to the listener given
 * at construction: the node that submitted the entry answers its publishes only once its own log
 * has applied that ordinal ({@link AnswerPoller}), so that an ack follows its update through the node.
 *
 * <p>A publisher's publishes are applied in the order its sessions sent them: a publish whose
 * predecessor in its session never reached the log (it went to a leader that died; the node
 * refused it before logging it) is refused {@link PublishResult.Outcome#OUT_OF_ORDER}, not applied,
 * since its client sends that predecessor again, first, through another node. The rule depends on
 * the log alone, like the rest.
 *
 * <p>Replicated state, and so the snapshot: the count of entries applied, each topic's last
 * sequence and incarnation, and the ledgers. Topic values and history are not kept here: the node
 * keeps them (the server's sequencer), and adds them to the snapshot through its
 * {@link SnapshotContent}.
 *
 * <p>Engine-free: each engine hands it its committed entries ({@code internal.jgroups.BarrierLog},
 * {@code internal.ratis.TopicLogStateMachine}); nothing here imports one.
 *
 * <p>Thread contract: the engine calls {@link #apply}, {@link #writeContentTo} and
 * {@link #readContentFrom} on one thread, one call at a time; the sink and the snapshot content
 * are called on it. No locks: the accessors ({@link #topics()}, ...) are for that thread too, or
 * for tests. Re-entry (a sink that applies an entry) is asserted against.
 */
public final class TopicLog {
    private static final int SNAPSHOT_MAGIC = 0x52435431; // "RCT1"
    /**
     * 3: with each topic's incarnation. 2, without them, is still read (its topics' incarnations are
     * 0, not known); 1, without the count of entries applied, is refused, see {@link #readContentFrom}.
     */
    private static final int SNAPSHOT_VERSION = 3;
    private static final int SNAPSHOT_VERSION_WITHOUT_INCARNATIONS = 2;
    /**
     * Added to a path's incarnation for each time it was made before in the same entry: 2^32 over the
     * golden ratio, odd, so that n times it differs for every n below 2^32, and far from the ordinals
     * of the entries around (the path's later incarnations). See {@link #incarnation}.
     */
    private static final int INCARNATION_STRIDE = 0x9E3779B9;
    private static final int MAX_PATH_BYTES = 1 << 20;

    private final UpdateSink sink;
    private final SnapshotContent content;
    private final int maxTopics;
    /** Told each entry's ordinal once its updates are in the sink, and the snapshot's once one is read. */
    private final LongConsumer onApplied;
    /** Entries applied, malformed ones not counted: the last one's ordinal (see the class comment). */
    private long appliedEntries;
    /**
     * After a snapshot older than this node's state was read (and not installed, see
     * {@link #readContentFrom}): the entries up to this ordinal, which the engine applies again, were
     * applied already and are skipped. 0 when none are to be skipped.
     */
    private long appliedBeforeStaleSnapshot;
    /** Each topic's last sequence, in the order the topics were made (the snapshot's order). */
    private LinkedHashMap<String, TopicSequence> topics = new LinkedHashMap<>();
    /**
     * While an entry that holds a removal is applied: how many topics each path made in it so far
     * ({@link #incarnation}); null for any other entry (a path is then made at most once in it).
     */
    private Map<String, Integer> madeInEntry;
    private PublisherLedgers ledgers;
    private final TopicLogCodec.ResponseWriter response = new TopicLogCodec.ResponseWriter();
    private long refusedEntries;
    /** Snapshots not installed because this node had applied as many entries or more. */
    private long staleSnapshots;
    /** Publishes not applied because one before them in their session never reached the log. */
    private long publishesOutOfOrder;
    private boolean busy;

    /**
     * @param sink          where applied publishes and removals go, in log order
     * @param content       the node's own part of a snapshot; {@link SnapshotContent#NONE} for none
     * @param maxTopics     topics at most ({@code limits.maxTopics}); the same on every node
     * @param ledgers       the publishers' ledgers, empty, their bounds ({@code limits.publisherLedgers*})
     *                      the same on every node
     * @param onApplied     told, on the apply thread, each entry's ordinal right after the entry was
     *                      applied (its updates are in the sink), and the snapshot's count once one was
     *                      read; it must not block
     */
    public TopicLog(UpdateSink sink, SnapshotContent content, int maxTopics, PublisherLedgers ledgers,
                    LongConsumer onApplied) {
        if (maxTopics < 0) {
            throw new IllegalArgumentException("maxTopics " + maxTopics + " is negative");
        }
        if (ledgers.size() != 0) {
            throw new IllegalArgumentException("the ledgers of a new log must be empty: " + ledgers.size() + " held");
        }
        this.sink = Objects.requireNonNull(sink, "sink");
        this.content = Objects.requireNonNull(content, "content");
        this.onApplied = Objects.requireNonNull(onApplied, "onApplied");
        this.maxTopics = maxTopics;
        this.ledgers = ledgers;
    }

    /** With at most {@code maxPublishers} ledgers (no bound per principal but that), told nothing. */
    public TopicLog(UpdateSink sink, SnapshotContent content, int maxTopics, int maxPublishers) {
        this(sink, content, maxTopics, maxPublishers, PublisherLedgers.PUBLISHES_PER_PUBLISHER);
    }

    TopicLog(UpdateSink sink, SnapshotContent content, int maxTopics, int maxPublishers, int publishesPerPublisher) {
        this(sink, content, maxTopics, maxPublishers, publishesPerPublisher, ordinal -> { });
    }

    TopicLog(UpdateSink sink, SnapshotContent content, int maxTopics, int maxPublishers, int publishesPerPublisher,
             LongConsumer onApplied) {
        this(sink, content, maxTopics, new PublisherLedgers(maxPublishers, maxPublishers, publishesPerPublisher),
                onApplied);
    }

    /**
     * Applies one committed entry, then tells its ordinal to the listener. Never throws for a bad
     * entry (see the class comment: it is refused, and not counted); an exception from the sink is
     * passed on, and leaves the entry half applied and not counted.
     *
     * @return the response ({@link TopicLogCodec#decodeResponse}), or null unless {@code serializeResponse}
     */
    public byte[] apply(byte[] data, int offset, int length, boolean serializeResponse) {
        assert enter();
        try {
            long ordinal = appliedEntries + 1;
            List<LoggedRecord> records;
            try {
                records = TopicLogCodec.decodeEntry(data, offset, length);
            } catch (MalformedEntryException e) {
                refusedEntries++;
                return serializeResponse ? TopicLogCodec.encodeRefusal("entry refused, nothing of it applied: "
                        + e.getMessage()) : null;
            }
            if (ordinal <= appliedBeforeStaleSnapshot) {
                appliedEntries = ordinal; // applied before, with its updates: not again, nor told again
                return serializeResponse ? TopicLogCodec.encodeRefusal("entry " + ordinal + " was applied on this "
                        + "node before it was sent an older snapshot; not applied again") : null;
            }
            TopicLogCodec.ResponseWriter out = serializeResponse ? response.start(ordinal, records.size()) : null;
            madeInEntry = holdsRemoval(records) ? new HashMap<>() : null;
            for (LoggedRecord r : records) {
                if (r instanceof LoggedPublish p) {
                    applyOne(p, ordinal, out);
                } else {
                    remove((LoggedRemoval) r, out);
                }
            }
            madeInEntry = null;
            applied(ordinal);
            return out == null ? null : out.toBytes();
        } finally {
            busy = false;
        }
    }

    private static boolean holdsRemoval(List<LoggedRecord> records) {
        for (LoggedRecord r : records) {
            if (r instanceof LoggedRemoval) {
                return true;
            }
        }
        return false;
    }

    private void applied(long ordinal) {
        appliedEntries = ordinal;
        onApplied.accept(ordinal);
    }

    private void applyOne(LoggedPublish p, long ordinal, TopicLogCodec.ResponseWriter out) {
        PublisherLedgers.Ledger ledger = null;
        if (p.hasPublisher()) {
            ledger = ledgers.ledgerOf(p.principal(), p.publisherId());
            PublishResult decided = ledger.screen(p.session(), p.sessionSequence(), p.correlationId(), p.republish(),
                    p.path());
            if (decided != null) {
                if (decided.outcome() == PublishResult.Outcome.OUT_OF_ORDER) {
                    publishesOutOfOrder++;
                }
                if (out != null) {
                    out.add(decided);
                }
                return;
            }
        }
        TopicSequence topic = topics.get(p.path());
        if (topic == null) {
            if (topics.size() >= maxTopics || p.existingTopicOnly()) {
                if (out != null) {
                    out.outcome(PublishResult.Outcome.TOO_MANY_TOPICS);
                }
                return; // not recorded: it was not applied, and a ledger that vouches may apply it when sent again
            }
            int madeBefore = madeInEntry == null ? 0 : madeInEntry.merge(p.path(), 1, Integer::sum) - 1;
            topic = new TopicSequence(p.path(), incarnation(ordinal, madeBefore));
            topics.put(topic.path, topic);
        }
        long sequence = ++topic.last;
        if (ledger != null) {
            ledger.recordApplied(p.session(), p.correlationId(), topic.path, sequence, p.republish());
        }
        if (out != null) {
            out.sequenced(PublishResult.Outcome.APPLIED, sequence);
        }
        sink.apply(topic.path, sequence, topic.incarnation, p.value());
    }

    /**
     * The incarnation of a topic made by the entry of {@code ordinal}, where its path made
     * {@code madeBefore} topics before it (removed since): the ordinal's low 32 bits, plus
     * {@link #INCARNATION_STRIDE} for each of those, 1 for 0. Without the stride a path made, removed
     * and made again within one entry would get its removed topic's incarnation.
     */
    static int incarnation(long ordinal, int madeBefore) {
        int incarnation = (int) ordinal + madeBefore * INCARNATION_STRIDE;
        return incarnation == 0 ? 1 : incarnation;
    }

    /** Removes the topic if it exists (at the removal's last sequence, when it names one), and says so. */
    private void remove(LoggedRemoval r, TopicLogCodec.ResponseWriter out) {
        TopicSequence topic = topics.get(r.path());
        long removed = 0;
        if (topic != null && (!r.conditional() || r.ifLastSequence() == topic.last)) {
            topics.remove(topic.path);
            removed = topic.last;
        }
        if (out != null) {
            out.sequenced(PublishResult.Outcome.APPLIED, removed);
        }
        if (removed != 0) {
            sink.removed(topic.path, removed, topic.incarnation);
        }
    }

    /**
     * Writes the replicated state (magic, version, the count of entries applied, topics with their
     * last sequences and incarnations in the order they were made, then the ledgers:
     * {@link PublisherLedgers#write}), then the node's {@link SnapshotContent}.
     */
    public void writeContentTo(DataOutput out) throws IOException {
        capture().writeTo(out);
    }

    /**
     * Takes the state as it is now, as {@link #writeContentTo} would write it, to be written later
     * on any thread ({@link SnapshotContent.Captured#writeTo}): the replicated state is copied into
     * memory, the node's part captured by its {@link SnapshotContent#capture}. The apply thread,
     * between entries; it costs a copy of the topics and ledgers, not the write.
     */
    public SnapshotContent.Captured capture() throws IOException {
        assert enter();
        try {
            long applied = appliedEntries;
            int count = topics.size();
            String[] paths = new String[count];
            long[] lasts = new long[count];
            int[] incarnations = new int[count];
            int i = 0;
            for (TopicSequence topic : topics.values()) {
                paths[i] = topic.path;
                lasts[i] = topic.last;
                incarnations[i] = topic.incarnation;
                i++;
            }
            PublisherLedgers.Frozen frozenLedgers = ledgers.freeze();
            SnapshotContent.Captured node = content.capture();
            return out -> {
                out.writeInt(SNAPSHOT_MAGIC);
                out.writeByte(SNAPSHOT_VERSION);
                SnapshotFields.writeVarLong(out, applied);
                SnapshotFields.writeVarLong(out, count);
                Map<String, Integer> indexes = new HashMap<>(count * 2);
                for (int t = 0; t < count; t++) {
                    indexes.put(paths[t], t);
                    SnapshotFields.writeString(out, paths[t]);
                    SnapshotFields.writeVarLong(out, lasts[t]);
                    SnapshotFields.writeVarLong(out, Integer.toUnsignedLong(incarnations[t]));
                }
                frozenLedgers.write(out, indexes);
                node.writeTo(out);
            };
        } finally {
            busy = false;
        }
    }

    /**
     * Replaces the replicated state with the snapshot's, then has the {@link SnapshotContent} read
     * its part, then tells the listener the snapshot's count of entries applied. If the state
     * machine's part is malformed, nothing is replaced and the content is not called; if the content
     * fails, the state machine's part is not replaced either.
     *
     * <p>A snapshot of fewer entries than this node has applied is not installed: jgroups-raft 1.1.4
     * sends a lagging follower the leader's snapshot again until it answers, and installs each copy
     * without comparing it with what the follower applied since the first, which would move this
     * node's topics back (and its subscribers with them) until the log applied the same entries
     * again. The engine does reset its log to the snapshot's index and applies the entries after it
     * again: they are the entries this node applied (the same committed log), and {@link #apply}
     * skips them until it is back where it was. One of as many entries as this node applied changes
     * nothing, and is not read either.
     *
     * <p>A version 2 snapshot (written before topics had incarnations) is read with incarnation 0,
     * not known, for its topics. A version 1 snapshot (written before entries were counted) is
     * refused: a count started anew from it would differ between nodes whose snapshots were taken
     * at different entries, and a node would then hold or release its acks at the wrong entry.
     */
    public void readContentFrom(DataInput in) throws IOException {
        assert enter();
        try {
            int magic = in.readInt();
            if (magic != SNAPSHOT_MAGIC) {
                throw new IOException("not a topic log snapshot: magic 0x" + Integer.toHexString(magic));
            }
            int version = in.readUnsignedByte();
            if (version == 1) {
                throw new IOException("topic log snapshot version 1 was written by an older Ringcast, without the "
                        + "count of entries applied that this version orders acks by, and cannot be read: start every "
                        + "node of the cluster from an empty cluster.dataDir");
            }
            if (version != SNAPSHOT_VERSION && version != SNAPSHOT_VERSION_WITHOUT_INCARNATIONS) {
                throw new IOException("unknown topic log snapshot version " + version);
            }
            long readApplied = SnapshotFields.readVarLong(in);
            if (readApplied < 0) {
                throw new IOException("count of entries applied " + Long.toUnsignedString(readApplied));
            }
            if (appliedEntries > 0 && readApplied <= appliedEntries) {
                appliedBeforeStaleSnapshot = Math.max(appliedBeforeStaleSnapshot, appliedEntries);
                staleSnapshots++;
                appliedEntries = readApplied;
                return;
            }
            int count = SnapshotFields.readVarInt(in, Integer.MAX_VALUE - 8, "topics");
            LinkedHashMap<String, TopicSequence> readTopics = new LinkedHashMap<>();
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String path = SnapshotFields.readString(in, MAX_PATH_BYTES, "topic path");
                long last = SnapshotFields.readVarLong(in);
                long incarnation = version == SNAPSHOT_VERSION ? SnapshotFields.readVarLong(in) : 0;
                if (path.isEmpty() || last < 1 || incarnation < 0 || incarnation > 0xFFFF_FFFFL) {
                    throw new IOException("topic '" + path + "' with last sequence " + last + " and incarnation "
                            + Long.toUnsignedString(incarnation));
                }
                TopicSequence topic = new TopicSequence(path, (int) incarnation);
                topic.last = last;
                if (readTopics.put(topic.path, topic) != null) {
                    throw new IOException("topic '" + topic.path + "' twice");
                }
                paths.add(topic.path);
            }
            PublisherLedgers readLedgers = ledgers.read(in, paths.toArray(new String[0]));
            content.read(in);
            topics = readTopics;
            ledgers = readLedgers;
            appliedBeforeStaleSnapshot = 0;
            applied(readApplied);
        } finally {
            busy = false;
        }
    }

    /**
     * Forgets everything applied and read, as if just made, for the engine to load the snapshot and
     * log again ({@code ReloadableStateMachine}): the sink is given the updates again (the server's
     * sequencer skips those of a sequence it has), and the snapshot content is read again. The
     * engine's thread, or the starting thread while the engine is stopped.
     */
    public void reset() {
        assert enter();
        try {
            appliedEntries = 0;
            appliedBeforeStaleSnapshot = 0;
            topics = new LinkedHashMap<>();
            ledgers = ledgers.emptyCopy();
        } finally {
            busy = false;
        }
    }

    /** Asserts that no call of this state machine is under way (one thread, no re-entry). */
    private boolean enter() {
        if (busy) {
            throw new AssertionError("TopicLog called again while a call is under way: one apply thread, no re-entry");
        }
        busy = true;
        return true;
    }

    /** Entries applied, malformed ones not counted: the ordinal of the last one (see the class comment). */
    public long appliedEntries() {
        return appliedEntries;
    }

    /** Topics that have been published to and not removed since. */
    public int topics() {
        return topics.size();
    }

    /** The topic's last sequence, 0 if it has none. */
    public long lastSequence(String path) {
        TopicSequence topic = topics.get(path);
        return topic == null ? 0 : topic.last;
    }

    /** The topic's incarnation, 0 if there is no such topic (or it came from a snapshot that did not tell). */
    public int incarnation(String path) {
        TopicSequence topic = topics.get(path);
        return topic == null ? 0 : topic.incarnation;
    }

    /** Publishers' ledgers held. */
    public int publishers() {
        return ledgers.size();
    }

    /** Ledgers forgotten to keep within {@code maxPublishers} since this node started (not replicated). */
    public long forgottenPublishers() {
        return ledgers.forgotten();
    }

    /** Malformed entries refused since this node started (not replicated). */
    public long refusedEntries() {
        return refusedEntries;
    }

    /** Snapshots not installed because this node had applied as many entries or more (see {@link #readContentFrom}). */
    public long staleSnapshots() {
        return staleSnapshots;
    }

    /**
     * Publishes refused {@link PublishResult.Outcome#OUT_OF_ORDER} since this node started (not
     * replicated, though every node counts the same after the same entries).
     */
    public long publishesOutOfOrder() {
        return publishesOutOfOrder;
    }

    /** A topic's last sequence and incarnation, with its path string, shared by the ledgers' entries. */
    private static final class TopicSequence {
        final String path;
        /** {@link #incarnation(long, int)}; 0 for a topic read from a snapshot without incarnations. */
        final int incarnation;
        long last;

        TopicSequence(String path, int incarnation) {
            this.path = path;
            this.incarnation = incarnation;
        }
    }
}
