package io.ringcast.server.internal;

import java.util.Arrays;
import java.util.List;

/**
 * The sessions receiving one topic, grouped by owning event loop so each {@link FanOutPoller}
 * reads only its own loop's, each loop's sessions in the order of their ids ({@link ChunkedSessions}).
 * Immutable: the sequencer replaces a topic's set on every change (copy on write, of one chunk of
 * a loop's sessions and the indexes: a set one session apart shares the rest) and each fan-out event
 * carries the set that was current when the update was sequenced, so a poller never sees a
 * subscriber that joined after that update (it got the value in its snapshot) and never needs a lock.
 *
 * <p>Two sets of the same sessions are {@link #equals equal}, whatever the order they joined in:
 * {@link SubscriberSets} keeps one instance of each, so that a poller can tell by identity that two
 * updates go to the same sessions and put them in one frame.
 *
 * <p>A session may be a <em>held</em> member ({@link #holds}): it joined the topic while a
 * subscribe reply of its own was being streamed, and its poller keeps the topic's updates for it
 * until the reply's {@code SUBSCRIBED} is written ({@link Subscriptions}). Held members are members:
 * {@link #forLoop} lists them with the others.
 *
 * <p>The mutable fields ({@link #uses} and the memos) belong to {@link SubscriberSets}, on the
 * sequencer thread; pollers never read them.
 */
final class SubscriberSet {
    private final ChunkedSessions[] byLoop;
    /** The indexes of the loops with at least one session, ascending: the pollers an update of this set wakes. */
    private final int[] loopsWithSessions;
    /** The held members of each loop, a subset of {@link #byLoop}'s. */
    private final ChunkedSessions[] heldByLoop;
    private final int size;
    private final int heldSize;
    /** A sum over the members (and held members), so that a set one session apart has it at once. */
    private final int hash;
    /** How many sessions negotiated permessage-deflate: none, and nothing is compressed for this set. */
    private final int compressedSessions;

    // ---- sequencer thread only (SubscriberSets)
    /** Topics whose current set this is, while it is the canonical instance. */
    int uses;
    /**
     * The session last added to this set, whether held ({@link #memoAddedHeld}), and the canonical
     * set that made: the next topic asks the same.
     */
    Session memoAdded;
    boolean memoAddedHeld;
    SubscriberSet memoAddedResult;
    /** The session last removed from this set, and the canonical set that made. */
    Session memoRemoved;
    SubscriberSet memoRemovedResult;
    /** The session last released from holding in this set, and the canonical set that made. */
    Session memoReleased;
    SubscriberSet memoReleasedResult;

    /** A set of these members and held members, whose counts and hash the caller worked out. */
    private SubscriberSet(ChunkedSessions[] byLoop, ChunkedSessions[] heldByLoop, int size, int heldSize, int hash,
            int compressedSessions) {
        this.byLoop = byLoop;
        this.heldByLoop = heldByLoop;
        this.size = size;
        this.heldSize = heldSize;
        this.hash = hash;
        this.compressedSessions = compressedSessions;
        int busy = 0;
        for (ChunkedSessions loop : byLoop) {
            busy += loop.isEmpty() ? 0 : 1;
        }
        this.loopsWithSessions = new int[busy];
        for (int i = 0, j = 0; i < byLoop.length; i++) {
            if (!byLoop[i].isEmpty()) {
                loopsWithSessions[j++] = i;
            }
        }
    }

    /** A member's share of {@link #hash}. */
    private static int memberHash(Session s) {
        return Long.hashCode(s.id * 0x9E3779B97F4A7C15L);
    }

    /** A held member's share of {@link #hash}, on top of its {@link #memberHash}. */
    private static int heldHash(Session s) {
        return Integer.rotateLeft(memberHash(s), 16) ^ 0x5BD1E995;
    }

    /**
     * Drops every memo: no topic has this set any more, and a memo would keep its result, and that
     * one's, alive (the chain from the empty set reached every set ever made). Sequencer thread
     * ({@link SubscriberSets}).
     */
    void forgetAll() {
        memoAdded = null;
        memoAddedResult = null;
        memoRemoved = null;
        memoRemovedResult = null;
        memoReleased = null;
        memoReleasedResult = null;
    }

    /** Drops the memos naming {@code session}. Sequencer thread ({@link SubscriberSets}). */
    void forget(Session session) {
        if (memoAdded == session) {
            memoAdded = null;
            memoAddedResult = null;
        }
        if (memoRemoved == session) {
            memoRemoved = null;
            memoRemovedResult = null;
        }
        if (memoReleased == session) {
            memoReleased = null;
            memoReleasedResult = null;
        }
    }

    /** The number of sessions, all loops together. */
    int size() {
        return size;
    }

    /** Whether any session negotiated permessage-deflate. */
    boolean anyCompressed() {
        return compressedSessions > 0;
    }

    static SubscriberSet empty(int loops) {
        ChunkedSessions[] none = none(loops);
        return new SubscriberSet(none, none, 0, 0, loops, 0);
    }

    private static ChunkedSessions[] none(int loops) {
        ChunkedSessions[] byLoop = new ChunkedSessions[loops];
        Arrays.fill(byLoop, ChunkedSessions.NONE);
        return byLoop;
    }

    /** The number of event loops, empty ones too. */
    int loops() {
        return byLoop.length;
    }

    /** The indexes of the event loops with at least one session of this set, ascending. The array must not be modified. */
    int[] loopsWithSessions() {
        return loopsWithSessions;
    }

    /** The sessions of event loop {@code loopIndex}, held ones included. */
    ChunkedSessions forLoop(int loopIndex) {
        return byLoop[loopIndex];
    }

    boolean contains(Session session) {
        return byLoop[session.loopIndex].contains(session);
    }

    /** Whether {@code session} is a held member: its updates wait until its streamed reply is written. */
    boolean holds(Session session) {
        return heldSize > 0 && heldByLoop[session.loopIndex].contains(session);
    }

    /** A set of exactly these (distinct) sessions, built in one pass: O(n log n), not n copies. */
    static SubscriberSet of(List<Session> sessions, int loops) {
        return of(sessions, List.of(), loops);
    }

    /** The same, {@code held} (among {@code sessions}) held. */
    static SubscriberSet of(List<Session> sessions, List<Session> held, int loops) {
        int hash = loops;
        int compressed = 0;
        for (Session s : sessions) {
            hash += memberHash(s);
            compressed += s.compressed ? 1 : 0;
        }
        for (Session s : held) {
            hash += heldHash(s);
        }
        return new SubscriberSet(byLoop(sessions, loops), held.isEmpty() ? none(loops) : byLoop(held, loops),
                sessions.size(), held.size(), hash, compressed);
    }

    private static ChunkedSessions[] byLoop(List<Session> sessions, int loops) {
        int[] perLoop = new int[loops];
        for (Session s : sessions) {
            perLoop[s.loopIndex]++;
        }
        Session[][] flat = new Session[loops][];
        for (int i = 0; i < loops; i++) {
            flat[i] = new Session[perLoop[i]];
            perLoop[i] = 0;
        }
        for (Session s : sessions) {
            flat[s.loopIndex][perLoop[s.loopIndex]++] = s;
        }
        ChunkedSessions[] byLoop = new ChunkedSessions[loops];
        for (int i = 0; i < loops; i++) {
            Arrays.sort(flat[i], ChunkedSessions.BY_ID);
            byLoop[i] = ChunkedSessions.of(flat[i]);
        }
        return byLoop;
    }

    /** A set with {@code session} added (this set if already there, held or not). */
    SubscriberSet with(Session session) {
        ChunkedSessions[] added = replaced(byLoop, session, byLoop[session.loopIndex].with(session));
        return added == null ? this : new SubscriberSet(added, heldByLoop, size + 1, heldSize,
                hash + memberHash(session), compressedSessions + (session.compressed ? 1 : 0));
    }

    /** A set with {@code session} added as a held member (this set if already there, held or not). */
    SubscriberSet withHeld(Session session) {
        ChunkedSessions[] added = replaced(byLoop, session, byLoop[session.loopIndex].with(session));
        if (added == null) {
            return this;
        }
        return new SubscriberSet(added, replaced(heldByLoop, session, heldByLoop[session.loopIndex].with(session)),
                size + 1, heldSize + 1, hash + memberHash(session) + heldHash(session),
                compressedSessions + (session.compressed ? 1 : 0));
    }

    /** A set where {@code session} is no longer held (this set if it was not). */
    SubscriberSet released(Session session) {
        ChunkedSessions[] held = replaced(heldByLoop, session, heldByLoop[session.loopIndex].without(session));
        return held == null ? this
                : new SubscriberSet(byLoop, held, size, heldSize - 1, hash - heldHash(session), compressedSessions);
    }

    /** A set with {@code session} removed (this set if absent). */
    SubscriberSet without(Session session) {
        ChunkedSessions[] shrunk = replaced(byLoop, session, byLoop[session.loopIndex].without(session));
        if (shrunk == null) {
            return this;
        }
        ChunkedSessions[] held = replaced(heldByLoop, session, heldByLoop[session.loopIndex].without(session));
        return new SubscriberSet(shrunk, held == null ? heldByLoop : held, size - 1,
                held == null ? heldSize : heldSize - 1,
                hash - memberHash(session) - (held == null ? 0 : heldHash(session)),
                compressedSessions - (session.compressed ? 1 : 0));
    }

    /** {@code sessions} with {@code session}'s loop's sessions {@code changed}, or null when they did not change. */
    private static ChunkedSessions[] replaced(ChunkedSessions[] sessions, Session session, ChunkedSessions changed) {
        if (changed == sessions[session.loopIndex]) {
            return null;
        }
        ChunkedSessions[] copy = sessions.clone();
        copy[session.loopIndex] = changed;
        return copy;
    }

    /** The same sessions (identity), loop by loop, the same of them held. */
    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof SubscriberSet other) || other.hash != hash || other.size != size
                || other.heldSize != heldSize || other.byLoop.length != byLoop.length) {
            return false;
        }
        return sameSessions(byLoop, other.byLoop) && (heldSize == 0 || sameSessions(heldByLoop, other.heldByLoop));
    }

    private static boolean sameSessions(ChunkedSessions[] x, ChunkedSessions[] y) {
        for (int i = 0; i < x.length; i++) {
            if (!x[i].sameSessions(y[i])) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
