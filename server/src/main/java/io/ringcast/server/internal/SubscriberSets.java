package io.ringcast.server.internal;

import java.util.HashMap;
import java.util.List;

/**
 * One instance of each distinct {@link SubscriberSet} the topics have, and the only code that
 * changes a topic's set: its plain subscribers' or a view's ({@link Audience}; "topic" below is either). Topics with the same subscribers share one set: a {@link FanOutPoller}
 * then sees by identity that consecutive updates of different topics go to the same sessions and
 * writes them to each session in one frame, and a thousand topics under one {@code #} hold one
 * array of their subscribers, not a thousand.
 *
 * <p>A set leaves the table when no topic has it any more. A session subscribing to {@code #}
 * changes every topic's set the same way, so each set remembers its last addition and removal
 * ({@link SubscriberSet#memoAdded}): the first topic builds the new set, the others reuse it. A set
 * that leaves the table forgets its memos, so that a memo keeps at most one set alive, never a
 * chain of every set made since.
 *
 * <p>Thread contract: the sequencer thread only.
 */
final class SubscriberSets {
    private final HashMap<SubscriberSet, SubscriberSet> canonical = new HashMap<>();
    private final SubscriberSet empty;

    SubscriberSets(int loops) {
        this.empty = SubscriberSet.empty(loops);
    }

    /**
     * The empty set, every new audience's (a topic, a view): one instance, so that a memo on it is
     * forgotten with its session ({@link #sessionClosed}); an empty set of another audience's, living
     * as long as the node, kept the last session to join a new view alive after it closed.
     */
    SubscriberSet empty() {
        return empty;
    }

    /** The number of distinct non-empty sets the topics have. */
    int distinct() {
        return canonical.size();
    }

    /** Adds {@code session} to {@code topic}'s subscribers. */
    void add(Audience topic, Session session) {
        add(topic, session, false);
    }

    /**
     * Adds {@code session} to {@code topic}'s subscribers, as a held member when {@code held} (its
     * updates wait for its streamed reply: {@link SubscriberSet#holds}); a member stays as it was.
     */
    void add(Audience topic, Session session, boolean held) {
        SubscriberSet from = topic.subscribers;
        SubscriberSet to;
        if (from.memoAdded == session && from.memoAddedHeld == held && from.memoAddedResult.uses > 0) {
            to = from.memoAddedResult;
        } else {
            to = intern(held ? from.withHeld(session) : from.with(session));
            from.memoAdded = session;
            from.memoAddedHeld = held;
            from.memoAddedResult = to;
        }
        move(topic, to);
    }

    /** Makes {@code session}, a held member of {@code topic}'s subscribers, an ordinary one. */
    void release(Audience topic, Session session) {
        SubscriberSet from = topic.subscribers;
        SubscriberSet to;
        if (from.memoReleased == session && from.memoReleasedResult.uses > 0) {
            to = from.memoReleasedResult;
        } else {
            to = intern(from.released(session));
            from.memoReleased = session;
            from.memoReleasedResult = to;
        }
        move(topic, to);
    }

    /** Removes {@code session} from {@code topic}'s subscribers. */
    void remove(Audience topic, Session session) {
        SubscriberSet from = topic.subscribers;
        SubscriberSet to;
        if (from.memoRemoved == session && (from.memoRemovedResult.uses > 0 || from.memoRemovedResult == empty)) {
            to = from.memoRemovedResult;
        } else {
            to = intern(from.without(session));
            from.memoRemoved = session;
            from.memoRemovedResult = to;
        }
        // the session may be gone for good: a set that lives on must not keep it reachable
        // through a memo (the sets that still hold it are dropped once no topic has them)
        to.forget(session);
        move(topic, to);
    }

    /**
     * {@code session} closed and left every set: {@link #empty}, never dropped, forgets it (it named
     * the session in a memo from the session's first join until another session joined an empty
     * audience). Another set that lives on may still name it in a memo until its next change: at
     * most a few sessions per set, never more. Sequencer thread.
     */
    void sessionClosed(Session session) {
        empty.forget(session);
    }

    /** Gives {@code topic} exactly these (distinct) sessions. */
    void assign(Audience topic, List<Session> sessions) {
        assign(topic, sessions, List.of());
    }

    /** Gives {@code topic} exactly these (distinct) sessions, {@code held} among them held. */
    void assign(Audience topic, List<Session> sessions, List<Session> held) {
        move(topic, sessions.isEmpty() ? empty : intern(SubscriberSet.of(sessions, held, empty.loops())));
    }

    private SubscriberSet intern(SubscriberSet set) {
        if (set.size() == 0) {
            return empty;
        }
        SubscriberSet existing = canonical.putIfAbsent(set, set);
        return existing == null ? set : existing;
    }

    private void move(Audience topic, SubscriberSet to) {
        SubscriberSet from = topic.subscribers;
        if (from == to) {
            return;
        }
        if (to != empty) {
            to.uses++;
        }
        // a topic made outside this table (tests) starts with a set of its own, counted nowhere
        if (from != empty && from.size() > 0 && --from.uses == 0) {
            canonical.remove(from);
            from.forgetAll(); // it may live on in a memo of another set: it keeps none alive itself
        }
        topic.subscribers = to;
    }
}
