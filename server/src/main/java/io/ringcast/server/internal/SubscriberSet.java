package io.ringcast.server.internal;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The sessions receiving one topic, grouped by owning event loop so each {@link FanOutPoller}
 * reads only its own array, each loop's sessions in the order of their ids. Immutable: the
 * sequencer replaces a topic's set on every change (copy on write, rare) and each fan-out event
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
    private static final Session[] NONE = new Session[0];
    private static final Comparator<Session> BY_ID = Comparator.comparingLong(s -> s.id);

    private final Session[][] byLoop;
    /** The indexes of the loops with at least one session, ascending: the pollers an update of this set wakes. */
    private final int[] loopsWithSessions;
    /** The held members of each loop, a subset of {@link #byLoop}'s, in the same order. */
    private final Session[][] heldByLoop;
    private final int size;
    private final int heldSize;
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

    private SubscriberSet(Session[][] byLoop, Session[][] heldByLoop) {
        this.byLoop = byLoop;
        this.heldByLoop = heldByLoop;
        int n = 0;
        int held = 0;
        int compressed = 0;
        int h = byLoop.length;
        for (Session[] loop : byLoop) {
            n += loop.length;
            for (Session s : loop) {
                h = 31 * h + Long.hashCode(s.id);
                if (s.compressed) {
                    compressed++;
                }
            }
        }
        for (Session[] loop : heldByLoop) {
            held += loop.length;
            for (Session s : loop) {
                h = 31 * h + ~Long.hashCode(s.id);
            }
        }
        this.size = n;
        this.heldSize = held;
        this.hash = h;
        this.compressedSessions = compressed;
        int busy = 0;
        for (Session[] loop : byLoop) {
            busy += loop.length > 0 ? 1 : 0;
        }
        this.loopsWithSessions = new int[busy];
        for (int i = 0, j = 0; i < byLoop.length; i++) {
            if (byLoop[i].length > 0) {
                loopsWithSessions[j++] = i;
            }
        }
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
        Session[][] none = none(loops);
        return new SubscriberSet(none, none);
    }

    private static Session[][] none(int loops) {
        Session[][] byLoop = new Session[loops][];
        Arrays.fill(byLoop, NONE);
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

    /** The sessions of event loop {@code loopIndex}, held ones included. The array must not be modified. */
    Session[] forLoop(int loopIndex) {
        return byLoop[loopIndex];
    }

    boolean contains(Session session) {
        return Arrays.binarySearch(byLoop[session.loopIndex], session, BY_ID) >= 0;
    }

    /** Whether {@code session} is a held member: its updates wait until its streamed reply is written. */
    boolean holds(Session session) {
        return heldSize > 0 && Arrays.binarySearch(heldByLoop[session.loopIndex], session, BY_ID) >= 0;
    }

    /** A set of exactly these (distinct) sessions, built in one pass: O(n log n), not n copies. */
    static SubscriberSet of(List<Session> sessions, int loops) {
        return of(sessions, List.of(), loops);
    }

    /** The same, {@code held} (among {@code sessions}) held. */
    static SubscriberSet of(List<Session> sessions, List<Session> held, int loops) {
        return new SubscriberSet(byLoop(sessions, loops), held.isEmpty() ? none(loops) : byLoop(held, loops));
    }

    private static Session[][] byLoop(List<Session> sessions, int loops) {
        int[] perLoop = new int[loops];
        for (Session s : sessions) {
            perLoop[s.loopIndex]++;
        }
        Session[][] byLoop = new Session[loops][];
        for (int i = 0; i < loops; i++) {
            byLoop[i] = perLoop[i] == 0 ? NONE : new Session[perLoop[i]];
            perLoop[i] = 0;
        }
        for (Session s : sessions) {
            byLoop[s.loopIndex][perLoop[s.loopIndex]++] = s;
        }
        for (Session[] loop : byLoop) {
            Arrays.sort(loop, BY_ID);
        }
        return byLoop;
    }

    /** A set with {@code session} added (this set if already there, held or not). */
    SubscriberSet with(Session session) {
        Session[][] added = inserted(byLoop, session);
        return added == null ? this : new SubscriberSet(added, heldByLoop);
    }

    /** A set with {@code session} added as a held member (this set if already there, held or not). */
    SubscriberSet withHeld(Session session) {
        Session[][] added = inserted(byLoop, session);
        return added == null ? this : new SubscriberSet(added, inserted(heldByLoop, session));
    }

    /** A set where {@code session} is no longer held (this set if it was not). */
    SubscriberSet released(Session session) {
        Session[][] held = removed(heldByLoop, session);
        return held == null ? this : new SubscriberSet(byLoop, held);
    }

    /** A set with {@code session} removed (this set if absent). */
    SubscriberSet without(Session session) {
        Session[][] shrunk = removed(byLoop, session);
        if (shrunk == null) {
            return this;
        }
        Session[][] held = removed(heldByLoop, session);
        return new SubscriberSet(shrunk, held == null ? heldByLoop : held);
    }

    /** {@code sessions} with {@code session} inserted in its place, or null when it is there already. */
    private static Session[][] inserted(Session[][] sessions, Session session) {
        Session[] old = sessions[session.loopIndex];
        int at = Arrays.binarySearch(old, session, BY_ID);
        if (at >= 0) {
            return null;
        }
        at = -at - 1;
        Session[] grown = new Session[old.length + 1];
        System.arraycopy(old, 0, grown, 0, at);
        grown[at] = session;
        System.arraycopy(old, at, grown, at + 1, old.length - at);
        Session[][] copy = sessions.clone();
        copy[session.loopIndex] = grown;
        return copy;
    }

    /** {@code sessions} without {@code session}, or null when it is not there. */
    private static Session[][] removed(Session[][] sessions, Session session) {
        Session[] old = sessions[session.loopIndex];
        int at = Arrays.binarySearch(old, session, BY_ID);
        if (at < 0) {
            return null;
        }
        Session[] shrunk = old.length == 1 ? NONE : new Session[old.length - 1];
        System.arraycopy(old, 0, shrunk, 0, at);
        System.arraycopy(old, at + 1, shrunk, at, old.length - at - 1);
        Session[][] copy = sessions.clone();
        copy[session.loopIndex] = shrunk;
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

    private static boolean sameSessions(Session[][] x, Session[][] y) {
        for (int i = 0; i < x.length; i++) {
            Session[] a = x[i];
            Session[] b = y[i];
            if (a.length != b.length) {
                return false;
            }
            for (int j = 0; j < a.length; j++) {
                if (a[j] != b[j]) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
