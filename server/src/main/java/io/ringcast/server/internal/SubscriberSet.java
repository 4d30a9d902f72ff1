package io.ringcast.server.internal;

import java.util.Arrays;
import java.util.List;

/**
 * The sessions receiving one topic, grouped by owning event loop so each {@link FanOutPoller}
 * reads only its own array. Immutable: the sequencer replaces a topic's set on every change
 * (copy on write, rare) and each fan-out event carries the set that was current when the update
 * was sequenced, so a poller never sees a subscriber that joined after that update (it got the
 * value in its snapshot) and never needs a lock.
 */
final class SubscriberSet {
    private static final Session[] NONE = new Session[0];

    private final Session[][] byLoop;
    private final int size;
    /** How many sessions negotiated permessage-deflate: none, and nothing is compressed for this set. */
    private final int compressedSessions;

    private SubscriberSet(Session[][] byLoop) {
        this.byLoop = byLoop;
        int n = 0;
        int compressed = 0;
        for (Session[] loop : byLoop) {
            n += loop.length;
            for (Session s : loop) {
                if (s.compressed) {
                    compressed++;
                }
            }
        }
        this.size = n;
        this.compressedSessions = compressed;
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

    /** The sessions of event loop {@code loopIndex}. The array must not be modified. */
    Session[] forLoop(int loopIndex) {
        return byLoop[loopIndex];
    }

    boolean contains(Session session) {
        for (Session s : byLoop[session.loopIndex]) {
            if (s == session) {
                return true;
            }
        }
        return false;
    }

    /** A set of exactly these (distinct) sessions, built in one pass: O(n), not n copies. */
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
        return new SubscriberSet(byLoop);
    }

    /** A set with {@code session} added (this set if already there). */
    SubscriberSet with(Session session) {
        if (contains(session)) {
            return this;
        }
        Session[][] copy = byLoop.clone();
        Session[] old = byLoop[session.loopIndex];
        Session[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = session;
        copy[session.loopIndex] = grown;
        return new SubscriberSet(copy);
    }

    /** A set with {@code session} removed (this set if absent). */
    SubscriberSet without(Session session) {
        Session[] old = byLoop[session.loopIndex];
        for (int i = 0; i < old.length; i++) {
            if (old[i] == session) {
                Session[] shrunk = new Session[old.length - 1];
                System.arraycopy(old, 0, shrunk, 0, i);
                System.arraycopy(old, i + 1, shrunk, i, old.length - i - 1);
                Session[][] copy = byLoop.clone();
                copy[session.loopIndex] = shrunk.length == 0 ? NONE : shrunk;
                return new SubscriberSet(copy);
            }
        }
        return this;
    }
}
