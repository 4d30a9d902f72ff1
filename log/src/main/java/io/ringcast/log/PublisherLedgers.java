package io.ringcast.log;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The publishers' ledgers: what each publisher published lately, so that a publish sent again
 * ({@code REPUBLISH} after a lost connection, or a plain publish carried twice) is applied at most
 * once and answered honestly (docs/protocol.md, "Sending a publish again"). The one rule for a
 * single node (its sequencer asks in-line) and for every Raft group of a cluster (its state
 * machine asks as it applies the log): both hold one of these and ask {@link Ledger#screen} before
 * a publish is sequenced, so both modes decide alike.
 *
 * <p>A publisher is the pair (principal, publisher id): the login identity of its sessions and the
 * id its client gives in {@code HELLO}, so that another principal giving the same id has a ledger of
 * its own. A ledger holds the publisher's newest {@value #PUBLISHES_PER_PUBLISHER} publishes as
 * (correlation id, topic, sequence), and the order of its sessions' publishes ({@link Ledger#screen}).
 *
 * <p>Every change comes from a publish decided, in the order decided, never from time or from
 * sessions opening and closing: so a group's ledgers are the same on every node that applied the
 * same log, and are part of its snapshot ({@link #write}, {@link #read}).
 *
 * <p><b>Why "not in the ledger" can mean "never applied".</b> A client that gives a publisher id keeps
 * at most {@value #PUBLISHES_PER_PUBLISHER} publishes unacked and, on each new connection, sends all
 * of them again ({@code REPUBLISH}) before any new {@code PUBLISH} (docs/protocol.md). A ledger made
 * while no ledger of its principal can have been lost (none was forgotten, and the node did not
 * start from a state it kept without its ledgers: {@link #startedWithHistory}) <em>vouches</em> from
 * the start: nothing of its publisher was applied before it. Any other ledger vouches once it
 * records a new publish (not sent again) of a session. A ledger decides a session's publishes only
 * from the session's first one on ({@link Ledger#screen}: a publish that is not the next of its
 * session is refused), so every publish of that session went through it, and every publish of an
 * earlier session that the client may still send again was sent again at that session's start,
 * before the new one, and recorded (as applied, or as unknown). A publish without a session gives
 * no such order and never makes a ledger vouch: one of its publisher's publishes before it may
 * have gone into a ledger forgotten since. {@link Ledger#screen} gives the answers.
 *
 * <p>Bounds: at most {@code maxLedgers} ledgers in all and {@code maxLedgersPerPrincipal} per
 * principal (all anonymous sessions are one). Making one more forgets, past the principal's bound,
 * the principal's own least recently used ledger (used: looked up for a publish), and past the
 * total, the least recently used of the principal holding the most: so one principal's publishers,
 * anonymous ones say, only ever evict that principal's ledgers. A forgotten ledger costs its
 * publisher nothing but honest answers: its publishes sent again are answered
 * {@link PublishResult.Outcome#OUTCOME_UNKNOWN}, never applied twice. A ledger's arrays grow on
 * demand up to the window: about 20 bytes per publish remembered, 20 KiB at most per ledger.
 *
 * <p>Thread contract: one thread, the one that decides publishes (a single node's sequencer, a
 * group's apply thread); not thread-safe.
 */
public final class PublisherLedgers {
    /**
     * Publishes remembered per publisher, and the most a client giving a publisher id may keep
     * unacked (the protocol's rule; both clients keep it).
     */
    public static final int PUBLISHES_PER_PUBLISHER = 1024;
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

    private final int maxLedgers;
    private final int maxLedgersPerPrincipal;
    private final int window;
    /**
     * Each principal's ledgers, least recently used first (access order); the principals in the
     * order they got their first ledger, which breaks ties between those holding the most.
     */
    private LinkedHashMap<String, LinkedHashMap<Long, Ledger>> byPrincipal = new LinkedHashMap<>();
    private int size;
    /** Principals that lost a ledger, in the order they first did; past the bound, {@link #forgotAny} stands for all. */
    private LinkedHashSet<String> principalsForgotten = new LinkedHashSet<>();
    private boolean forgotAny;
    private long forgotten;

    /**
     * @param maxLedgers             ledgers kept at most ({@code limits.publisherLedgers}; at least 1)
     * @param maxLedgersPerPrincipal of which one principal's ({@code limits.publisherLedgersPerPrincipal}; at least 1)
     */
    public PublisherLedgers(int maxLedgers, int maxLedgersPerPrincipal) {
        this(maxLedgers, maxLedgersPerPrincipal, PUBLISHES_PER_PUBLISHER);
    }

    /**
     * @param window publishes remembered per ledger: {@link #PUBLISHES_PER_PUBLISHER} but in tests
     */
    public PublisherLedgers(int maxLedgers, int maxLedgersPerPrincipal, int window) {
        if (maxLedgers < 1 || maxLedgersPerPrincipal < 1 || window < 1) {
            throw new IllegalArgumentException("maxLedgers " + maxLedgers + ", maxLedgersPerPrincipal "
                    + maxLedgersPerPrincipal + " and window " + window + " must be at least 1");
        }
        this.maxLedgers = maxLedgers;
        this.maxLedgersPerPrincipal = maxLedgersPerPrincipal;
        this.window = window;
    }

    /** Empty ledgers with the same bounds. */
    public PublisherLedgers emptyCopy() {
        return new PublisherLedgers(maxLedgers, maxLedgersPerPrincipal, window);
    }

    /**
     * The publisher's ledger, made if it has none (which may forget others, never this one); a use,
     * which makes it its principal's most recently used. Ask once per publish.
     */
    public Ledger ledgerOf(String principal, long publisherId) {
        Objects.requireNonNull(principal, "principal");
        LinkedHashMap<Long, Ledger> own = byPrincipal.get(principal);
        Ledger ledger = own == null ? null : own.get(publisherId); // access order: now the most recent
        if (ledger == null) {
            ledger = new Ledger(principal, publisherId, Math.min(INITIAL_CAPACITY, window), window);
            ledger.vouches = !forgotAny && !principalsForgotten.contains(principal);
            if (own == null) {
                own = new LinkedHashMap<>(16, 0.75f, true);
                byPrincipal.put(principal, own);
            }
            own.put(publisherId, ledger);
            size++;
            forgetBeyondBounds(own);
        }
        return ledger;
    }

    /**
     * Forgets past the bounds: the principal's own least recently used past its bound, then past the
     * total the least recently used of the principal holding the most (the first of them, in the
     * order they came, on a tie). Never the ledger just made: it is the most recent of its
     * principal's, and a principal holding only it comes after any other holding one.
     */
    private void forgetBeyondBounds(LinkedHashMap<Long, Ledger> own) {
        while (own.size() > maxLedgersPerPrincipal) {
            forgetOldest(own);
        }
        while (size > maxLedgers) {
            forgetOldest(largestPrincipal());
        }
    }

    /** The ledgers of the principal holding the most. O(principals), only when the total is reached. */
    private LinkedHashMap<Long, Ledger> largestPrincipal() {
        LinkedHashMap<Long, Ledger> largest = null;
        for (LinkedHashMap<Long, Ledger> own : byPrincipal.values()) {
            if (largest == null || own.size() > largest.size()) {
                largest = own;
            }
        }
        return largest;
    }

    private void forgetOldest(LinkedHashMap<Long, Ledger> own) {
        Iterator<Ledger> oldest = own.values().iterator();
        Ledger gone = oldest.next();
        oldest.remove();
        if (own.isEmpty()) {
            byPrincipal.remove(gone.principal);
        }
        size--;
        forgotten++;
        if (!forgotAny && principalsForgotten.add(gone.principal)
                && principalsForgotten.size() > MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL) {
            forgotAny = true;
            principalsForgotten.clear();
        }
    }

    /**
     * A single node restored topics from a state file that keeps no ledgers: publishes before its
     * start may have been applied, so no ledger made from now on vouches from the start.
     */
    public void startedWithHistory() {
        forgotAny = true;
        principalsForgotten.clear();
    }

    /** Ledgers held. */
    public int size() {
        return size;
    }

    /** Ledgers forgotten to keep within the bounds since this object was made (not replicated: a count for metrics). */
    public long forgotten() {
        return forgotten;
    }

    // ---------------------------------------------------------------- snapshot

    /**
     * Writes every ledger, principal by principal in the order they came, each principal's least
     * recently used first, so that {@link #read} restores the same order. A ledger entry's topic is
     * written as {@code topicIndex(path) + 1}, or 0 and the path when the topic is not among
     * {@code topicIndexes}.
     */
    public void write(DataOutput out, Map<String, Integer> topicIndexes) throws IOException {
        freeze().write(out, topicIndexes);
    }

    /**
     * The ledgers as they are now, copied (their arrays, oldest entry first), to be written later on
     * any thread while these go on changing: a snapshot holds its thread for the copy, not the write.
     */
    public Frozen freeze() {
        List<Ledger> copies = new ArrayList<>(size);
        for (LinkedHashMap<Long, Ledger> own : byPrincipal.values()) {
            for (Ledger ledger : own.values()) {
                copies.add(ledger.copyOldestFirst());
            }
        }
        return new Frozen(forgotAny, new ArrayList<>(principalsForgotten), copies);
    }

    /** Ledgers frozen by {@link #freeze}: what {@link #write} writes, and nothing else. Any one thread. */
    public static final class Frozen {
        private final boolean forgotAny;
        private final List<String> principalsForgotten;
        private final List<Ledger> ledgers;

        private Frozen(boolean forgotAny, List<String> principalsForgotten, List<Ledger> ledgers) {
            this.forgotAny = forgotAny;
            this.principalsForgotten = principalsForgotten;
            this.ledgers = ledgers;
        }

        /** The snapshot format of the ledgers ({@link PublisherLedgers#read} reads it). */
        public void write(DataOutput out, Map<String, Integer> topicIndexes) throws IOException {
            out.writeByte(SNAPSHOT_VERSION);
            out.writeBoolean(forgotAny);
            SnapshotFields.writeVarLong(out, principalsForgotten.size());
            for (String principal : principalsForgotten) {
                SnapshotFields.writeString(out, principal);
            }
            SnapshotFields.writeVarLong(out, ledgers.size());
            for (Ledger ledger : ledgers) {
                SnapshotFields.writeString(out, ledger.principal);
                out.writeLong(ledger.publisherId);
                out.writeBoolean(ledger.vouches);
                out.writeLong(ledger.session);
                SnapshotFields.writeVarLong(out, ledger.lastSessionSequence);
                SnapshotFields.writeVarLong(out, ledger.size);
                for (int i = 0; i < ledger.size; i++) { // a copy is oldest first
                    SnapshotFields.writeVarLong(out, Integer.toUnsignedLong(ledger.correlationIds[i]));
                    Integer index = topicIndexes.get(ledger.topics[i]);
                    if (index != null) {
                        SnapshotFields.writeVarLong(out, index + 1L);
                    } else {
                        SnapshotFields.writeVarLong(out, 0);
                        SnapshotFields.writeString(out, ledger.topics[i]);
                    }
                    SnapshotFields.writeVarLong(out, ledger.sequences[i] + 1); // OUTCOME_UNKNOWN as 0
                }
            }
        }
    }

    /**
     * Reads what {@link #write} wrote into a new object with this one's bounds; this one is left as
     * it was. Ledgers written by an older version (least recently used first over all principals)
     * are grouped by principal, each keeping its order.
     *
     * @param topics the paths of the snapshot's topics, by index
     */
    public PublisherLedgers read(DataInput in, String[] topics) throws IOException {
        int version = in.readUnsignedByte();
        if (version < SNAPSHOT_VERSION_WITHOUT_ORDER || version > SNAPSHOT_VERSION) {
            throw new IOException("unknown ledger snapshot version " + version);
        }
        PublisherLedgers read = emptyCopy();
        read.forgotAny = in.readBoolean();
        int principals = SnapshotFields.readVarInt(in, MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL, "principals forgotten");
        for (int i = 0; i < principals; i++) {
            read.principalsForgotten.add(SnapshotFields.readString(in, MAX_STRING_BYTES, "principal"));
        }
        int ledgers = SnapshotFields.readVarInt(in, Integer.MAX_VALUE, "ledgers");
        for (int l = 0; l < ledgers; l++) {
            String principal = SnapshotFields.readString(in, MAX_STRING_BYTES, "principal");
            long publisherId = in.readLong();
            String who = "the ledger of publisher " + Long.toHexString(publisherId) + " of " + principal;
            boolean vouches = in.readBoolean();
            long session = 0;
            long lastSessionSequence = 0;
            if (version == SNAPSHOT_VERSION) {
                session = in.readLong();
                lastSessionSequence = SnapshotFields.readVarLong(in);
                if ((session == 0) != (lastSessionSequence == 0) || lastSessionSequence < 0) {
                    throw new IOException("session " + session + " with last sequence " + lastSessionSequence
                            + " in " + who);
                }
            }
            int entries = SnapshotFields.readVarInt(in, PUBLISHES_PER_PUBLISHER, "publishes of a ledger");
            Ledger ledger = new Ledger(principal, publisherId,
                    Math.max(Math.min(INITIAL_CAPACITY, window), Math.min(entries, window)), window);
            ledger.vouches = vouches;
            ledger.session = session;
            ledger.lastSessionSequence = lastSessionSequence;
            for (int i = 0; i < entries; i++) {
                long correlationId = SnapshotFields.readVarLong(in);
                if (correlationId < 0 || correlationId > 0xFFFF_FFFFL) {
                    throw new IOException("correlation id " + correlationId + " beyond 32 bits in " + who);
                }
                int topicRef = SnapshotFields.readVarInt(in, topics.length, "topic of a ledger entry");
                String topic = topicRef == 0 ? SnapshotFields.readString(in, MAX_STRING_BYTES, "topic of a ledger entry")
                        : topics[topicRef - 1];
                long sequence = SnapshotFields.readVarLong(in) - 1;
                if (sequence < 1 && sequence != OUTCOME_UNKNOWN) {
                    throw new IOException("sequence " + Long.toUnsignedString(sequence) + " in " + who);
                }
                if (ledger.find((int) correlationId) != ABSENT) {
                    throw new IOException("correlation id " + correlationId + " twice in " + who);
                }
                ledger.record((int) correlationId, topic, sequence);
            }
            LinkedHashMap<Long, Ledger> own = read.byPrincipal.computeIfAbsent(principal,
                    p -> new LinkedHashMap<>(16, 0.75f, true));
            if (own.put(publisherId, ledger) != null) {
                throw new IOException("two ledgers for publisher " + Long.toHexString(publisherId) + " of " + principal);
            }
            read.size++;
        }
        // smaller bounds than the snapshot's writer had: forget as making them one by one would have
        for (LinkedHashMap<Long, Ledger> own : List.copyOf(read.byPrincipal.values())) {
            while (own.size() > read.maxLedgersPerPrincipal) {
                read.forgetOldest(own);
            }
        }
        while (read.size > read.maxLedgers) {
            read.forgetOldest(read.largestPrincipal());
        }
        return read;
    }

    /**
     * One publisher's newest publishes: a ring that grows on demand up to its window, and an index
     * from correlation id to slot, so that every publish is checked in constant time (a scan of the
     * window per publish would cost a thousand comparisons at every one). A correlation id is in a
     * ledger at most once: a publish whose id is there already is answered, not recorded. And the
     * order of its sessions' publishes: the session of the last one decided and its place there.
     */
    public static final class Ledger {
        private final String principal;
        private final long publisherId;
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

        private Ledger(String principal, long publisherId, int capacity, int window) {
            this.principal = principal;
            this.publisherId = publisherId;
            this.window = window;
            correlationIds = new int[capacity];
            topics = new String[capacity];
            sequences = new long[capacity];
            index = new CorrelationIndex(capacity);
        }

        /**
         * Decides a publish of this publisher by its ledger, before it is sequenced; with
         * {@link #recordApplied} once it was, these are the rules both modes share:
         * <ol>
         *   <li>its correlation id is in the ledger: for the same topic it is
         *       {@link PublishResult.Outcome#ALREADY_APPLIED} with the sequence it got then (or
         *       {@link PublishResult.Outcome#OUTCOME_UNKNOWN} if it was answered so), for another topic
         *       {@link PublishResult.Outcome#CONFLICT}. This holds for a plain publish as well: a
         *       client never reuses an id within its window, so one seen again was carried twice;</li>
         *   <li>a publish whose predecessor in its session was never decided (it went to a leader
         *       that died, or the node refused it before it got here), or a straggler of a session its
         *       client has left, is {@link PublishResult.Outcome#OUT_OF_ORDER}: applying it would put
         *       it before that one, which its client sends again first ({@link #inOrder}). So a
         *       ledger made in the middle of a session (its publisher's was forgotten) takes none of
         *       that session's publishes: the client publishes through a new connection, which
         *       starts with those it sends again;</li>
         *   <li>a {@code REPUBLISH} the ledger cannot vouch for is {@link PublishResult.Outcome#OUTCOME_UNKNOWN},
         *       and recorded so, so that it gets the same answer if it comes again;</li>
         *   <li>else null: the caller sequences it, unless its topic's bounds refuse it (then nothing is
         *       recorded: a ledger that vouches applies it if it comes again), and calls {@link #recordApplied}.</li>
         * </ol>
         *
         * @param session         the number naming its session ({@link PublishingSessions}), 0 for none (no order kept)
         * @param sessionSequence its place among its session's publishes decided here: 1 for the first (0 with no session)
         * @return the answer when the ledger decides it, or null to sequence it
         */
        public PublishResult screen(long session, long sessionSequence, int correlationId, boolean republish,
                                    String path) {
            boolean inOrder = inOrder(session, sessionSequence);
            int slot = find(correlationId);
            if (slot != ABSENT) {
                String first = topics[slot];
                long sequence = sequences[slot];
                if (inOrder) {
                    decidedInOrder(session, sessionSequence); // answered as before, wherever it comes: the next may follow
                    refresh(slot); // its client may hold it unacked still: the newest, the last forgotten
                }
                if (!first.equals(path)) {
                    return PublishResult.conflict(first);
                }
                return sequence == OUTCOME_UNKNOWN ? PublishResult.OUTCOME_UNKNOWN : PublishResult.alreadyApplied(sequence);
            }
            if (!inOrder) {
                return PublishResult.OUT_OF_ORDER;
            }
            decidedInOrder(session, sessionSequence);
            if (republish && !vouches) {
                record(correlationId, path, OUTCOME_UNKNOWN);
                return PublishResult.OUTCOME_UNKNOWN;
            }
            return null;
        }

        /**
         * A publish that {@link #screen} passed was applied with {@code sequence}: {@code topic}
         * should be the topic's own path string, so that an entry costs no string of its own. A new
         * publish (not sent again) of a session makes it vouch from here on (see the class comment).
         */
        public void recordApplied(long session, int correlationId, String topic, long sequence, boolean republished) {
            assert sequence > 0;
            record(correlationId, topic, sequence);
            vouches |= !republished && session != 0;
        }

        /**
         * Whether a publish comes right after the last this publisher had decided: the next of the
         * same session, or the first of another that is not, by its client's numbering
         * ({@link PublishingSessions#ordered}), older than the last one's. Otherwise a publish before
         * it in its session was never decided, and applying it would put it before that one, which
         * its client sends again through another connection; or it is a straggler of a session its
         * client has left. A publish without a session is always in order.
         */
        private boolean inOrder(long session, long sessionSequence) {
            if (session == 0) {
                return true;
            }
            if (session == this.session) {
                return sessionSequence == lastSessionSequence + 1;
            }
            // a session its client numbered before the last one decided is one the client has left: its
            // publishes still arriving are copies a node held (queued, or in an old leader's log), and
            // what they carry was sent again since, and may be forgotten here by now (issue 28: 1,024
            // publishes applied twice after a one-way cut and a flapping partition)
            boolean older = PublishingSessions.isOrdered(session) && PublishingSessions.isOrdered(this.session)
                    && session < this.session;
            return !older && sessionSequence == 1;
        }

        /** A publish that was {@link #inOrder} was decided (applied, or answered): the next must follow it. */
        private void decidedInOrder(long session, long sessionSequence) {
            if (session != 0) {
                this.session = session;
                lastSessionSequence = sessionSequence;
            }
        }

        /** The slot of {@code correlationId}, or {@link #ABSENT}. */
        int find(int correlationId) {
            return index.get(correlationId);
        }

        /** Whether a publish not in it is known never to have been applied. */
        public boolean vouches() {
            return vouches;
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
        private void refresh(int slot) {
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

        /** A copy holding what {@link Frozen#write} writes: the entries oldest first, no index. */
        private Ledger copyOldestFirst() {
            return new Ledger(this);
        }

        /** {@link #copyOldestFirst}: without the index, which only deciding publishes needs. */
        private Ledger(Ledger source) {
            principal = source.principal;
            publisherId = source.publisherId;
            window = source.window;
            size = source.size;
            vouches = source.vouches;
            session = source.session;
            lastSessionSequence = source.lastSessionSequence;
            correlationIds = new int[size];
            topics = new String[size];
            sequences = new long[size];
            for (int i = 0; i < size; i++) {
                int slot = source.slotFromOldest(i);
                correlationIds[i] = source.correlationIds[slot];
                topics[i] = source.topics[slot];
                sequences[i] = source.sequences[slot];
            }
            index = null;
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
        public int size() {
            return size;
        }

        /** Entries the arrays have room for now (they grow on demand). */
        int capacity() {
            return correlationIds.length;
        }

        @Override
        public String toString() {
            return "publisher " + Long.toHexString(publisherId) + " of " + principal;
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
