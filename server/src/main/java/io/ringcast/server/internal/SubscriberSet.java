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
 * <p>The mutable fields ({@link #uses} and the memos) belong to {@link SubscriberSets}, on the
 * sequencer thread; pollers never read them.
 */
final class SubscriberSet {
    private static final Session[] NONE = new Session[0];
    private static final Comparator<Session> BY_ID = Comparator.comparingLong(s -> s.id);

    private final Session[][] byLoop;
    private final int size;
    private final int hash;
    /** How many sessions negotiated permessage-deflate: none, and nothing is compressed for this set. */
    private final int compressedSessions;

    // ---- sequencer thread only (SubscriberSets)
    /** Topics whose current set this is, while it is the canonical instance. */
    int uses;
    /** The session last added to this set, and the canonical set that made: the next topic asks the same. */
    Session memoAdded;
    SubscriberSet memoAddedResult;
    /** The session last removed from this set, and the canonical set that made. */
    Session memoRemoved;
    SubscriberSet memoRemovedResult;

    private SubscriberSet(Session[][] byLoop) {
        this.byLoop = byLoop;
        int n = 0;
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
        this.size = n;
        this.hash = h;
        this.compressedSessions = compressed;
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
        Session[][] byLoop = new Session[loops][];
        Arrays.fill(byLoop, NONE);
        return new SubscriberSet(byLoop);
    }

    /** The number of event loops, empty ones too. */
    int loops() {
        return byLoop.length;
    }

    /** The sessions of event loop {@code loopIndex}. The array must not be modified. */
    Session[] forLoop(int loopIndex) {
        return byLoop[loopIndex];
    }

    boolean contains(Session session) {
        return Arrays.binarySearch(byLoop[session.loopIndex], session, BY_ID) >= 0;
    }

    /** A set of exactly these (distinct) sessions, built in one pass: O(n log n), not n copies. */
    static SubscriberSet of(List<Session> sessions, int loops) {
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
        return new SubscriberSet(byLoop);
    }

    /** A set with {@code session} added (this set if already there). */
    SubscriberSet with(Session session) {
        Session[] old = byLoop[session.loopIndex];
        int at = Arrays.binarySearch(old, session, BY_ID);
        if (at >= 0) {
            return this;
        }
        at = -at - 1;
        Session[] grown = new Session[old.length + 1];
        System.arraycopy(old, 0, grown, 0, at);
        grown[at] = session;
        System.arraycopy(old, at, grown, at + 1, old.length - at);
        Session[][] copy = byLoop.clone();
        copy[session.loopIndex] = grown;
        return new SubscriberSet(copy);
    }

    /** A set with {@code session} removed (this set if absent). */
    SubscriberSet without(Session session) {
        Session[] old = byLoop[session.loopIndex];
        int at = Arrays.binarySearch(old, session, BY_ID);
        if (at < 0) {
            return this;
        }
        Session[] shrunk = old.length == 1 ? NONE : new Session[old.length - 1];
        System.arraycopy(old, 0, shrunk, 0, at);
        System.arraycopy(old, at + 1, shrunk, at, old.length - at - 1);
        Session[][] copy = byLoop.clone();
        copy[session.loopIndex] = shrunk;
        return new SubscriberSet(copy);
    }

    /** The same sessions (identity), loop by loop. */
    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof SubscriberSet other) || other.hash != hash || other.size != size
                || other.byLoop.length != byLoop.length) {
            return false;
        }
        for (int i = 0; i < byLoop.length; i++) {
            Session[] a = byLoop[i];
            Session[] b = other.byLoop[i];
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
