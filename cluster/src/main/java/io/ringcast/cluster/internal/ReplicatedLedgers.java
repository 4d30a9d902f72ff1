package io.ringcast.cluster.internal;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A group's replicated memory of what each publisher published lately, so that a publish sent
 * again ({@code REPUBLISH}, or a plain publish the engine carried twice) is applied at most once
 * and answered as a single node answers it (docs/protocol.md, "Sending a publish again"). A
 * publisher is the pair (principal, publisher id); its ledger holds its newest
 * {@value #PUBLISHES_PER_PUBLISHER} publishes as (correlation id, topic, sequence).
 *
 * <p>A ledger also keeps its publisher's order: the session that handed it the last publish, and
 * that publish's place in its session ({@link LoggedPublish#session}). See {@link Ledger#inOrder}.
 *
 * <p>Unlike a single node's ledgers, nothing here knows of sessions: every change comes from an
 * applied log entry, so the ledgers are the same on every node. Bounds: at most
 * {@code maxPublishers} ledgers; making one more forgets the least recently used (looked up by a
 * publish) first. A ledger made while none of its principal's was ever forgotten vouches from the
 * start that what is not in it was never applied; any other vouches once it records a new (not
 * sent again) publish, for the reasons {@code PublisherLedgers} gives in the server.
 *
 * <p>Thread contract: the engine's apply thread only ({@link TopicLog}).
 */
final class ReplicatedLedgers {
    /** Publishes remembered per publisher: the protocol's window (the server's {@code PublisherLedgers.PUBLISHES_PER_PUBLISHER}). */
    static final int PUBLISHES_PER_PUBLISHER = 1024;
    /** Past this many principals remembered as having lost a ledger, every principal counts as such. */
    static final int MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL = 4096;
    /** The sequence recorded for a {@code REPUBLISH} answered "outcome unknown", so that it gets that answer again. */
    static final long OUTCOME_UNKNOWN = -1;
    /** {@link Ledger#find}: not in the ledger. */
    static final int ABSENT = -1;

    private static final int INITIAL_CAPACITY = 8;
    private static final int SNAPSHOT_VERSION = 2;
    /** Ledgers without their session's order, still read. */
    private static final int SNAPSHOT_VERSION_WITHOUT_ORDER = 1;
    private static final int MAX_STRING_BYTES = 1 << 20;

    private final int maxPublishers;
    private final int window;
    /** In access order: the least recently used first, the order in which they are forgotten and written. */
    private LinkedHashMap<Key, Ledger> byPublisher = new LinkedHashMap<>(16, 0.75f, true);
    /** Principals that lost a ledger, in the order they first did; past the bound, {@link #forgotAny} stands for all. */
    private LinkedHashSet<String> principalsForgotten = new LinkedHashSet<>();
    private boolean forgotAny;
    private long forgotten;

    /**
     * @param maxPublishers ledgers kept at most (at least 1)
     * @param window        publishes remembered per ledger ({@link #PUBLISHES_PER_PUBLISHER} but in tests)
     */
    ReplicatedLedgers(int maxPublishers, int window) {
        if (maxPublishers < 1 || window < 1) {
            throw new IllegalArgumentException("maxPublishers " + maxPublishers + " and window " + window
                    + " must be at least 1");
        }
        this.maxPublishers = maxPublishers;
        this.window = window;
    }

    /** Empty ledgers with the same bounds. */
    ReplicatedLedgers emptyCopy() {
        return new ReplicatedLedgers(maxPublishers, window);
    }

    /** The publisher's ledger, made if it has none (which may forget the least recently used other one). */
    Ledger ledgerOf(String principal, long publisherId) {
        Key key = new Key(principal, publisherId);
        Ledger ledger = byPublisher.get(key); // a use: moves it to the end
        if (ledger == null) {
            ledger = new Ledger(key, Math.min(INITIAL_CAPACITY, window), window);
            ledger.vouches = !forgotAny && !principalsForgotten.contains(principal);
            byPublisher.put(key, ledger);
            forgetBeyondBound();
        }
        return ledger;
    }

    private void forgetBeyondBound() {
        Iterator<Ledger> oldest = byPublisher.values().iterator();
        while (byPublisher.size() > maxPublishers) {
            Ledger gone = oldest.next();
            oldest.remove();
            forgotten++;
            if (!forgotAny && principalsForgotten.add(gone.key.principal)
                    && principalsForgotten.size() > MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL) {
                forgotAny = true;
                principalsForgotten.clear();
            }
        }
    }

    /** Ledgers held. */
    int size() {
        return byPublisher.size();
    }

    /** Ledgers forgotten to keep within the bound since this object was made (not replicated: a count for metrics). */
    long forgotten() {
        return forgotten;
    }

    // ---------------------------------------------------------------- snapshot

    /**
     * Writes every ledger, least recently used first, so that {@link #read} restores the same
     * order. A ledger entry's topic is written as {@code topicIndex(path) + 1}, or 0 and the path
     * when the topic is not among {@code topicIndexes}.
     */
    void write(DataOutput out, Map<String, Integer> topicIndexes) throws IOException {
        out.writeByte(SNAPSHOT_VERSION);
        out.writeBoolean(forgotAny);
        TopicLogCodec.writeVarLong(out, principalsForgotten.size());
        for (String principal : principalsForgotten) {
            TopicLogCodec.writeString(out, principal);
        }
        TopicLogCodec.writeVarLong(out, byPublisher.size());
        for (Ledger ledger : byPublisher.values()) {
            TopicLogCodec.writeString(out, ledger.key.principal);
            out.writeLong(ledger.key.publisherId);
            out.writeBoolean(ledger.vouches);
            out.writeLong(ledger.session);
            TopicLogCodec.writeVarLong(out, ledger.lastSessionSequence);
            TopicLogCodec.writeVarLong(out, ledger.size);
            for (int i = 0; i < ledger.size; i++) {
                int slot = ledger.slotFromOldest(i);
                TopicLogCodec.writeVarLong(out, Integer.toUnsignedLong(ledger.correlationIds[slot]));
                Integer index = topicIndexes.get(ledger.topics[slot]);
                if (index != null) {
                    TopicLogCodec.writeVarLong(out, index + 1L);
                } else {
                    TopicLogCodec.writeVarLong(out, 0);
                    TopicLogCodec.writeString(out, ledger.topics[slot]);
                }
                TopicLogCodec.writeVarLong(out, ledger.sequences[slot] + 1); // OUTCOME_UNKNOWN as 0
            }
        }
    }

    /**
     * Reads what {@link #write} wrote into a new object; this one is left as it was.
     *
     * @param topics the paths of the snapshot's topics, by index
     */
    ReplicatedLedgers read(DataInput in, String[] topics) throws IOException {
        int version = in.readUnsignedByte();
        if (version != SNAPSHOT_VERSION && version != SNAPSHOT_VERSION_WITHOUT_ORDER) {
            throw new IOException("unknown ledger snapshot version " + version);
        }
        ReplicatedLedgers read = new ReplicatedLedgers(maxPublishers, window);
        read.forgotAny = in.readBoolean();
        int principals = TopicLogCodec.readVarInt(in, MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL, "principals forgotten");
        for (int i = 0; i < principals; i++) {
            read.principalsForgotten.add(TopicLogCodec.readString(in, MAX_STRING_BYTES, "principal"));
        }
        int ledgers = TopicLogCodec.readVarInt(in, Integer.MAX_VALUE, "ledgers");
        for (int l = 0; l < ledgers; l++) {
            String principal = TopicLogCodec.readString(in, MAX_STRING_BYTES, "principal");
            long publisherId = in.readLong();
            Key key = new Key(principal, publisherId);
            boolean vouches = in.readBoolean();
            long session = 0;
            long lastSessionSequence = 0;
            if (version == SNAPSHOT_VERSION) {
                session = in.readLong();
                lastSessionSequence = TopicLogCodec.readVarLong(in);
                if ((session == 0) != (lastSessionSequence == 0) || lastSessionSequence < 0) {
                    throw new IOException("session " + session + " with last sequence " + lastSessionSequence
                            + " in the ledger of " + key);
                }
            }
            int entries = TopicLogCodec.readVarInt(in, PUBLISHES_PER_PUBLISHER, "publishes of a ledger");
            Ledger ledger = new Ledger(key, Math.max(Math.min(INITIAL_CAPACITY, window), Math.min(entries, window)), window);
            ledger.vouches = vouches;
            ledger.session = session;
            ledger.lastSessionSequence = lastSessionSequence;
            for (int i = 0; i < entries; i++) {
                long correlationId = TopicLogCodec.readVarLong(in);
                if (correlationId < 0 || correlationId > 0xFFFF_FFFFL) {
                    throw new IOException("correlation id " + correlationId + " beyond 32 bits in the ledger of " + key);
                }
                int topicRef = TopicLogCodec.readVarInt(in, topics.length, "topic of a ledger entry");
                String topic = topicRef == 0 ? TopicLogCodec.readString(in, MAX_STRING_BYTES, "topic of a ledger entry")
                        : topics[topicRef - 1];
                long sequence = TopicLogCodec.readVarLong(in) - 1;
                if (sequence == 0) {
                    throw new IOException("sequence 0 in the ledger of " + key);
                }
                if (ledger.find((int) correlationId) != ABSENT) {
                    throw new IOException("correlation id " + correlationId + " twice in the ledger of " + ledger);
                }
                ledger.record((int) correlationId, topic, sequence);
            }
            if (read.byPublisher.put(key, ledger) != null) {
                throw new IOException("two ledgers for " + ledger);
            }
        }
        read.forgetBeyondBound(); // a smaller bound than the snapshot's writer had
        return read;
    }

    private record Key(String principal, long publisherId) {
        Key {
            Objects.requireNonNull(principal);
        }
    }

    /**
     * One publisher's newest publishes: a ring that grows on demand up to its window, and an index
     * from correlation id to slot, so that every publish is checked in constant time (a scan of the
     * window per publish would cost a thousand comparisons at every one). A correlation id is in a
     * ledger at most once: a publish whose id is there already is answered, not recorded.
     */
    static final class Ledger {
        private final Key key;
        private final int window;
        private int[] correlationIds;
        private String[] topics;
        private long[] sequences;
        private final CorrelationIndex index;
        private int next;
        private int size;
        /** It vouches that a publish not in it was never applied. */
        private boolean vouches;
        /** The session of the last publish decided in its order ({@link #inOrder}), 0 before any. */
        private long session;
        /** That publish's place in its session. */
        private long lastSessionSequence;

        private Ledger(Key key, int capacity, int window) {
            this.key = key;
            this.window = window;
            correlationIds = new int[capacity];
            topics = new String[capacity];
            sequences = new long[capacity];
            index = new CorrelationIndex(capacity);
        }

        /** The slot of {@code correlationId}, or {@link #ABSENT}. */
        int find(int correlationId) {
            return index.get(correlationId);
        }

        String topicAt(int slot) {
            return topics[slot];
        }

        /** The sequence the publish at {@code slot} got, or {@link #OUTCOME_UNKNOWN}. */
        long sequenceAt(int slot) {
            return sequences[slot];
        }

        boolean vouches() {
            return vouches;
        }

        /**
         * Whether {@code p} comes right after the last publish this publisher had decided: the next
         * of the same session, or the first of another (the client's next connection, which sends
         * again first whatever the last one left unacked, oldest first) that is not, by its client's
         * numbering ({@link LoggedPublish#orderedSession}), older than the last one's. Otherwise a publish before
         * it in its session never reached the log, and applying it would put it before that one,
         * which its client sends again through another node; or it is a straggler of a session its
         * client has left. A publish without a session is always in order.
         */
        boolean inOrder(LoggedPublish p) {
            if (!p.hasSession()) {
                return true;
            }
            if (p.session() == session) {
                return p.sessionSequence() == lastSessionSequence + 1;
            }
            // a session its client numbered before the last one decided is one the client has left: its
            // publishes still arriving are copies a node held (queued, or in an old leader's log), and
            // what they carry was sent again since, and may be forgotten here by now (issue 28: 1,024
            // publishes applied twice after a one-way cut and a flapping partition)
            boolean older = LoggedPublish.isOrdered(p.session()) && LoggedPublish.isOrdered(session)
                    && p.session() < session;
            return !older && p.sessionSequence() == 1;
        }

        /** {@code p}, which was {@link #inOrder}, was decided (applied, or answered): the next must follow it. */
        void decidedInOrder(LoggedPublish p) {
            if (p.hasSession()) {
                session = p.session();
                lastSessionSequence = p.sessionSequence();
            }
        }

        /** A publish applied with {@code sequence}; a new one (not sent again) makes the ledger vouch from here on. */
        void recordApplied(int correlationId, String topic, long sequence, boolean republished) {
            assert sequence > 0;
            record(correlationId, topic, sequence);
            vouches |= !republished;
        }

        /**
         * The publish at {@code slot} was decided again in its publisher's order (a copy sent again,
         * answered from here): it becomes the newest entry, the last forgotten. Its client still held
         * it unacked (the answer it had before never reached it: a node that could not apply the entry
         * in time answers it as timed out, and then acks the session's later publishes), and may send
         * it again after more than a window of later publishes were acked; a ledger that kept it where
         * it was first recorded would forget it, vouch, and apply it twice (the bridge fault of
         * 2026-11-30, TopicLogRetryWindowTest). From here it stays among the newest window until its
         * ack: the session that sent it again takes no new publishes once it timed out
         * ({@code ClusterRoute}), so what is decided after it is what the client had in flight with it,
         * at most a window, until the next session sends it first again. Moves the newer entries back
         * by one: O(window), for copies only.
         */
        void refresh(int slot) {
            int newest = (next == 0 ? correlationIds.length : next) - 1;
            if (slot == newest) {
                return;
            }
            int id = correlationIds[slot];
            String topic = topics[slot];
            long sequence = sequences[slot];
            for (int i = slot; i != newest; ) {
                int j = i + 1 == correlationIds.length ? 0 : i + 1;
                correlationIds[i] = correlationIds[j];
                topics[i] = topics[j];
                sequences[i] = sequences[j];
                index.put(correlationIds[i], i);
                i = j;
            }
            correlationIds[newest] = id;
            topics[newest] = topic;
            sequences[newest] = sequence;
            index.put(id, newest);
        }

        /** A {@code REPUBLISH} answered "outcome unknown": the same answer if it comes again. */
        void recordOutcomeUnknown(int correlationId, String topic) {
            record(correlationId, topic, OUTCOME_UNKNOWN);
        }

        private void record(int correlationId, String topic, long sequence) {
            assert find(correlationId) == ABSENT : "correlation id " + correlationId + " recorded twice";
            if (size == correlationIds.length && size < window) {
                grow();
            }
            if (size == correlationIds.length) {
                index.remove(correlationIds[next]); // full: the oldest, at next, is overwritten
            }
            correlationIds[next] = correlationId;
            topics[next] = topic;
            sequences[next] = sequence;
            index.put(correlationId, next);
            next = next + 1 == correlationIds.length ? 0 : next + 1;
            size = Math.min(size + 1, correlationIds.length);
        }

        /** The slot of the i-th oldest entry. */
        private int slotFromOldest(int i) {
            int oldest = size < correlationIds.length ? 0 : next;
            return (oldest + i) % correlationIds.length;
        }

        /** Doubles the full ring (up to the window), oldest entry first, so {@code next} is its end. */
        private void grow() {
            int capacity = Math.min(correlationIds.length * 2, window);
            int[] ids = new int[capacity];
            String[] paths = new String[capacity];
            long[] seqs = new long[capacity];
            index.clear(capacity);
            for (int i = 0; i < size; i++) {
                int slot = slotFromOldest(i);
                ids[i] = correlationIds[slot];
                paths[i] = topics[slot];
                seqs[i] = sequences[slot];
                index.put(ids[i], i);
            }
            correlationIds = ids;
            topics = paths;
            sequences = seqs;
            next = size;
        }

        /** Entries held. */
        int size() {
            return size;
        }

        @Override
        public String toString() {
            return "publisher " + Long.toHexString(key.publisherId) + " of " + key.principal;
        }
    }

    /**
     * An open-addressing map from correlation id to ring slot, linear probing, at most half full;
     * removal shifts the following entries back so that no tombstone is left.
     */
    static final class CorrelationIndex {
        private int[] keys;
        /** Slot + 1; 0 marks an empty cell. */
        private int[] values;
        private int mask;
        private int shift;

        CorrelationIndex(int entries) {
            clear(entries);
        }

        /** Empties it, with room for {@code entries}. */
        void clear(int entries) {
            int cells = Integer.highestOneBit(Math.max(entries, 2) * 2 - 1) * 2; // a power of two, at least 2x
            keys = new int[cells];
            values = new int[cells];
            mask = cells - 1;
            shift = Integer.numberOfLeadingZeros(cells) + 1; // 32 - log2(cells): keep the product's top bits
        }

        private int home(int key) {
            return (key * 0x9E3779B9) >>> shift; // Fibonacci hashing: consecutive ids spread out
        }

        int get(int key) {
            for (int i = home(key); values[i] != 0; i = (i + 1) & mask) {
                if (keys[i] == key) {
                    return values[i] - 1;
                }
            }
            return ABSENT;
        }

        void put(int key, int slot) {
            int i = home(key);
            while (values[i] != 0 && keys[i] != key) {
                i = (i + 1) & mask;
            }
            keys[i] = key;
            values[i] = slot + 1;
        }

        void remove(int key) {
            int i = home(key);
            while (values[i] != 0 && keys[i] != key) {
                i = (i + 1) & mask;
            }
            if (values[i] == 0) {
                return;
            }
            // shift back every following entry of the run that may sit at or before the freed cell
            int free = i;
            for (int j = (i + 1) & mask; values[j] != 0; j = (j + 1) & mask) {
                int h = home(keys[j]);
                // j's entry may move to free unless its home lies cyclically in (free, j]
                boolean homeBetween = free <= j ? (free < h && h <= j) : (free < h || h <= j);
                if (!homeBetween) {
                    keys[free] = keys[j];
                    values[free] = values[j];
                    free = j;
                }
            }
            values[free] = 0;
        }
    }
}
