package io.ringcast.server.internal;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A single node's memory of what each publisher published lately, so that a {@code REPUBLISH}
 * (a publish its client sent again after losing the connection before the ack) is applied at most
 * once, and answered honestly. A publisher is the pair (principal, publisher id): the login
 * identity of its sessions and the id its client gives in {@code HELLO}, so that another principal
 * giving the same id has a ledger of its own. A ledger holds the publisher's newest
 * {@value #PUBLISHES_PER_PUBLISHER} publishes as (correlation id, topic, sequence).
 *
 * <p>Why "not in the ledger" can mean "never applied": a client that gives a publisher id keeps at
 * most {@value #PUBLISHES_PER_PUBLISHER} publishes unacked and, on a new connection, sends all its
 * {@code REPUBLISH}es before any new {@code PUBLISH} (docs/protocol.md). So once a ledger has
 * recorded a new publish, every publish its client may still send again was either sent after
 * the ledger was made (recorded if applied, and still among the newest entries) or sent again
 * before that new publish (recorded then, as applied or as unknown). A ledger made while this
 * node cannot have lost one (it forgot no ledger of that principal and did not start from a state
 * file) vouches from the start: nothing of its publisher was applied here before it. Any other
 * ledger that has recorded no new publish yet <em>vouches</em> for nothing: what is not in it may
 * have been applied into a ledger that is gone (forgotten, or before a restart).
 * {@link Ledger#answer} gives the four answers.
 *
 * <p>Bounds: a ledger attached to a live session is never forgotten (live sessions are bounded by
 * {@code limits.maxConnections}, one ledger each). When its last session closes it is detached;
 * detached ledgers are bounded per principal (past it the principal's own least recently detached
 * is forgotten) and in total (past it the least recently detached of the principal holding the
 * most is forgotten), so sessions of one principal, e.g. anonymous ones, only ever evict that
 * principal's ledgers. A ledger's arrays grow on demand up to the window: about 20 bytes per
 * publish remembered, 20 KiB at most per ledger.
 *
 * <p>Thread contract: the sequencer thread only ({@link TopicSequencer} asserts it). A ledger costs
 * nothing per publish but three array writes; it is looked up once per session, on its first publish.
 */
final class PublisherLedgers {
    /**
     * Publishes remembered per publisher, and the most a client giving a publisher id may keep
     * unacked (the protocol's rule; both clients keep it).
     */
    static final int PUBLISHES_PER_PUBLISHER = 1024;
    /** A ledger's arrays start this small: most publishers publish little between reconnects. */
    private static final int INITIAL_CAPACITY = 8;

    /** {@link Ledger#answer}: not in the ledger, and the ledger vouches that it was never applied: apply it now. */
    static final long APPLY = 0;
    /** {@link Ledger#answer}: nobody can tell whether it was applied; it must not be applied again. */
    static final long OUTCOME_UNKNOWN = -1;
    /** {@link Ledger#answer}: its correlation id was first published to another topic; not applied. */
    static final long CONFLICT = -2;

    private final int maxDetached;
    private final int maxDetachedPerPrincipal;
    private final int publishesPerPublisher;
    private final Map<Key, Ledger> byPublisher = new HashMap<>();
    /** Detached ledgers of each principal, least recently detached first. */
    private final Map<String, LinkedHashSet<Ledger>> detachedByPrincipal = new HashMap<>();
    private int detached;
    private long forgotten;
    /**
     * Principals this node has forgotten a ledger of; past {@link #MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL}
     * of them, {@link #forgotAny} stands for all.
     */
    private final Set<String> principalsForgotten = new HashSet<>();
    private static final int MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL = 4096;
    private boolean forgotAny;
    /**
     * Whether this node may have applied publishes before it started (it restored topics from its
     * state file): then no new ledger can vouch for what came before it.
     */
    private boolean startedWithHistory;

    /**
     * @param maxDetached             {@code limits.publisherLedgers}
     * @param maxDetachedPerPrincipal {@code limits.publisherLedgersPerPrincipal}
     */
    PublisherLedgers(int maxDetached, int maxDetachedPerPrincipal) {
        this(maxDetached, maxDetachedPerPrincipal, PUBLISHES_PER_PUBLISHER);
    }

    PublisherLedgers(int maxDetached, int maxDetachedPerPrincipal, int publishesPerPublisher) {
        this.maxDetached = maxDetached;
        this.maxDetachedPerPrincipal = maxDetachedPerPrincipal;
        this.publishesPerPublisher = publishesPerPublisher;
    }

    /** The publisher's ledger for a session that publishes: found or made, and attached until {@link #detach}. */
    Ledger attach(String principal, long publisherId) {
        Key key = new Key(principal, publisherId);
        Ledger ledger = byPublisher.get(key);
        if (ledger == null) {
            ledger = new Ledger(key, Math.min(INITIAL_CAPACITY, publishesPerPublisher), publishesPerPublisher);
            // no ledger, and none could have been lost: nothing of this publisher was ever applied here
            ledger.vouches = !startedWithHistory && !forgotAny && !principalsForgotten.contains(principal);
            byPublisher.put(key, ledger);
        } else if (ledger.sessions == 0) {
            LinkedHashSet<Ledger> own = detachedByPrincipal.get(principal);
            own.remove(ledger);
            if (own.isEmpty()) {
                detachedByPrincipal.remove(principal);
            }
            detached--;
        }
        ledger.sessions++;
        return ledger;
    }

    /** A session that had attached {@code ledger} closed: once none is left, it may be forgotten. */
    void detach(Ledger ledger) {
        assert ledger.sessions > 0 : "a ledger detached more often than attached";
        if (--ledger.sessions > 0) {
            return; // another session of the publisher is open (an old connection not closed yet)
        }
        LinkedHashSet<Ledger> own = detachedByPrincipal.computeIfAbsent(ledger.key.principal, p -> new LinkedHashSet<>());
        own.add(ledger);
        detached++;
        if (own.size() > maxDetachedPerPrincipal) {
            forgetOldest(own);
        }
        if (detached > maxDetached) {
            forgetOldest(largestPrincipal());
        }
    }

    /** The detached ledgers of the principal holding the most. O(principals), only when the total is reached. */
    private LinkedHashSet<Ledger> largestPrincipal() {
        LinkedHashSet<Ledger> largest = null;
        for (LinkedHashSet<Ledger> own : detachedByPrincipal.values()) {
            if (largest == null || own.size() > largest.size()) {
                largest = own;
            }
        }
        return largest;
    }

    private void forgetOldest(LinkedHashSet<Ledger> own) {
        Iterator<Ledger> oldest = own.iterator();
        Ledger ledger = oldest.next();
        oldest.remove();
        if (own.isEmpty()) {
            detachedByPrincipal.remove(ledger.key.principal);
        }
        byPublisher.remove(ledger.key);
        detached--;
        forgotten++;
        if (!forgotAny && principalsForgotten.add(ledger.key.principal)
                && principalsForgotten.size() > MAX_PRINCIPALS_REMEMBERED_AS_FORGETFUL) {
            forgotAny = true;
            principalsForgotten.clear();
        }
    }

    /** The node restored topics from its state file: publishes before its start may have been applied. */
    void startedWithHistory() {
        startedWithHistory = true;
    }

    /** Ledgers held, attached and detached. */
    int size() {
        return byPublisher.size();
    }

    /** Ledgers held for publishers with no open session. */
    int detached() {
        return detached;
    }

    /** Ledgers forgotten so far to keep within the bounds. */
    long forgotten() {
        return forgotten;
    }

    private record Key(String principal, long publisherId) {
    }

    /**
     * One publisher's newest publishes, a ring that grows on demand up to its window: correlation
     * id, topic path and the sequence each got ({@link #OUTCOME_UNKNOWN} for a {@code REPUBLISH}
     * answered so, so that sending it once more gets the same answer).
     */
    static final class Ledger {
        private final Key key;
        private final int window;
        private int[] correlationIds;
        private String[] topics;
        private long[] sequences;
        private int next;
        private int size;
        /** Open sessions that attached it: never forgotten while there is one. */
        private int sessions;
        /** It recorded a new publish (not one sent again): from then on, absent means never applied. */
        private boolean vouches;

        private Ledger(Key key, int capacity, int window) {
            this.key = key;
            this.window = window;
            correlationIds = new int[capacity];
            topics = new String[capacity];
            sequences = new long[capacity];
        }

        /**
         * A publish applied: {@code topic} should be the topic's own path string (shared with the
         * tree), so an entry costs no string of its own.
         *
         * @param republished whether it came as {@code REPUBLISH} (does not make the ledger vouch)
         */
        void recordApplied(int correlationId, String topic, long sequence, boolean republished) {
            assert sequence > 0;
            record(correlationId, topic, sequence);
            vouches |= !republished;
        }

        /** A {@code REPUBLISH} answered {@link #OUTCOME_UNKNOWN}: the same answer if it comes again. */
        void recordOutcomeUnknown(int correlationId, String topic) {
            record(correlationId, topic, OUTCOME_UNKNOWN);
        }

        private void record(int correlationId, String topic, long sequence) {
            if (size == correlationIds.length && size < window) {
                grow();
            }
            correlationIds[next] = correlationId;
            topics[next] = topic;
            sequences[next] = sequence;
            next = next + 1 == correlationIds.length ? 0 : next + 1;
            size = Math.min(size + 1, correlationIds.length);
        }

        /** Doubles the full ring (up to the window), oldest entry first, so {@code next} is its end. */
        private void grow() {
            int capacity = Math.min(correlationIds.length * 2, window);
            int[] ids = new int[capacity];
            String[] paths = new String[capacity];
            long[] seqs = new long[capacity];
            for (int i = 0; i < size; i++) {
                int slot = (next + i) % correlationIds.length; // full: the oldest is at next
                ids[i] = correlationIds[slot];
                paths[i] = topics[slot];
                seqs[i] = sequences[slot];
            }
            correlationIds = ids;
            topics = paths;
            sequences = seqs;
            next = size;
        }

        /**
         * The answer to a {@code REPUBLISH} of {@code correlationId} to {@code topic}: the sequence
         * its first send got (positive: ack it, do not apply); {@link #OUTCOME_UNKNOWN}; {@link #CONFLICT}
         * (the id went to another topic, see {@link #topicOf}); or {@link #APPLY}.
         */
        long answer(int correlationId, String topic) {
            int slot = slotOf(correlationId, topic);
            if (slot >= 0) {
                return sequences[slot];
            }
            if (slotOf(correlationId, null) >= 0) {
                return CONFLICT;
            }
            return vouches ? APPLY : OUTCOME_UNKNOWN;
        }

        /** The topic the newest entry with {@code correlationId} went to, or null. */
        String topicOf(int correlationId) {
            int slot = slotOf(correlationId, null);
            return slot < 0 ? null : topics[slot];
        }

        /** The newest entry with that id (and topic, unless null), or -1. Newest first: a publish sent again is recent. */
        private int slotOf(int correlationId, String topic) {
            for (int i = 1; i <= size; i++) {
                int slot = Math.floorMod(next - i, correlationIds.length);
                if (correlationIds[slot] == correlationId && (topic == null || topic.equals(topics[slot]))) {
                    return slot;
                }
            }
            return -1;
        }

        /** Whether an absent publish is known never to have been applied. */
        boolean vouches() {
            return vouches;
        }

        /** Entries the arrays have room for now (they grow on demand). */
        int capacity() {
            return correlationIds.length;
        }

        @Override
        public String toString() {
            return "publisher " + Long.toHexString(key.publisherId) + " of " + key.principal;
        }
    }
}
