package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.UpdateFlags;

import java.util.ArrayList;
import java.util.Map;

/**
 * Who receives which topic: each session's subscriptions, indexed by selector so a new topic
 * finds its subscribers, and each topic's {@link SubscriberSet}. Answers a subscribe with the
 * topics it matches (definitions, then a snapshot, a replay from a resume position, or a gap),
 * through the {@link DirectedReplies}. Sequencer thread only.
 */
final class Subscriptions {
    /** The resume position of a topic the client never received an update of: it gets them from #1. */
    private static final Long NOTHING_SEEN = 0L;

    private final TopicTree tree;
    private final SelectorIndex index = new SelectorIndex();
    private final DirectedReplies replies;
    private final SubscriberSets sets;
    private final int loops;
    /**
     * In a cluster a client may resume on a node that has not applied yet what another node showed
     * it: it is then ahead, not after a lost state, and this node's next updates carry on its stream.
     */
    private final boolean clusterMode;
    private long visitCounter;
    /** Reused while creating a topic: the sessions its path matches. */
    private final ArrayList<Session> matchedSessions = new ArrayList<>();
    /** Reused while creating a topic: matched sessions that had resumed its path from an earlier server. */
    private final ArrayList<Session> resettingSessions = new ArrayList<>();

    Subscriptions(TopicTree tree, DirectedReplies replies, int loops, boolean clusterMode) {
        this.tree = tree;
        this.replies = replies;
        this.loops = loops;
        this.sets = new SubscriberSets(loops);
        this.clusterMode = clusterMode;
    }

    /**
     * Opens subscription {@code subscriptionId} and replies with what it matches, then {@code SUBSCRIBED}.
     * A non-empty {@code resume} list makes it a resume of a subscription the client had before: a
     * matching topic the list leaves out is resumed from {@link #NOTHING_SEEN}, since it came while
     * the client was away (or the client cut its list to fit a frame): a plain snapshot would hide
     * the updates before it.
     */
    void subscribe(Session session, int subscriptionId, Selector selector, Map<String, Long> resume) {
        session.subscriptions.put(subscriptionId, selector);
        index.add(selector, session, subscriptionId);
        for (Map.Entry<String, Long> r : resume.entrySet()) {
            if (!clusterMode && tree.get(r.getKey()) == null) {
                session.resumeForMissingTopics.put(r.getKey(), r.getValue());
            }
        }
        Long unlisted = resume.isEmpty() ? null : NOTHING_SEEN;
        int[] matched = {0};
        tree.forEachMatch(selector, topic -> {
            if (session.permissions.mayRead(topic.segments)) { // a subscription to # sees only what the session may read
                matched[0]++;
                join(session, subscriptionId, topic, resume.getOrDefault(topic.path, unlisted));
            }
        });
        replies.subscribed(session, subscriptionId, matched[0]);
        replies.flush();
    }

    /**
     * Adds the session to the topic's subscribers and sends what the subscription starts from:
     * {@code resumeFrom} null for a first subscribe (the value), else the last sequence the client
     * has (the updates after it, or a gap).
     */
    private void join(Session session, int subscriptionId, Topic topic, Long resumeFrom) {
        if (topic.subscribers.contains(session)) {
            // live already through another subscription, whose reply brought the session up to
            // date; a resumed listener took it too, only a new one needs the value
            if (resumeFrom == null && topic.hasValue()) {
                replies.snapshot(session, subscriptionId, topic, 0);
            }
            return;
        }
        sets.add(topic, session);
        replies.topic(session, topic);
        if (resumeFrom == null) {
            if (topic.hasValue()) {
                replies.snapshot(session, subscriptionId, topic, 0);
            }
        } else if (resumeFrom == topic.sequence || (clusterMode && resumeFrom > topic.sequence)) {
            // the client is up to date (or, in a cluster, this node is catching up with it: the
            // client drops what it has seen already)
        } else if (topic.canReplayAfter(resumeFrom)) {
            replies.replay(session, topic, resumeFrom);
        } else {
            // history no longer reaches back (or the client is ahead of a restarted server)
            gap(session, topic);
        }
    }

    /**
     * Tells {@code session} it missed updates of {@code topic} it cannot be sent: the current value
     * as {@code SNAPSHOT} with {@code GAP} to every matching subscription, or {@code GAP} and
     * {@code NO_VALUE} when the topic keeps none.
     */
    private void gap(Session session, Topic topic) {
        if (topic.hasValue()) {
            replies.snapshot(session, 0, topic, UpdateFlags.GAP);
        } else {
            replies.gapWithoutValue(session, topic);
        }
    }

    /**
     * A cluster snapshot replaced the topic's state ({@code created}: made it here): its
     * subscribers were last sent update {@code sequenceBefore} (0: none), and each is sent what lies
     * between that and the new state as a resume would be: replayed from the snapshot's history
     * when it reaches back that far, so a node that fell behind its leader's log loses its
     * subscribers nothing; else told as across any gap ({@link #gap}). After the topic's
     * {@code TOPIC} when it is new here.
     */
    void replaced(Topic topic, boolean created, long sequenceBefore) {
        // only outside a cluster does a new topic keep sessions apart for resetResumed
        assert clusterMode && resettingSessions.isEmpty() : "a snapshot is taken over by a cluster node only";
        boolean replay = sequenceBefore < topic.sequence && topic.canReplayAfter(sequenceBefore);
        for (int loop = 0; loop < loops; loop++) {
            for (Session session : topic.subscribers.forLoop(loop)) {
                if (created) {
                    replies.topic(session, topic);
                }
                if (replay) {
                    replies.replay(session, topic, sequenceBefore);
                } else {
                    gap(session, topic);
                }
                replies.flush();
            }
        }
    }

    /** Closes subscription {@code subscriptionId}: the session leaves the topics no other of its subscriptions matches. */
    void unsubscribe(Session session, int subscriptionId) {
        Selector selector = session.subscriptions.remove(subscriptionId);
        if (selector == null) {
            return;
        }
        index.remove(selector, session, subscriptionId);
        tree.forEachMatch(selector, topic -> {
            for (Selector other : session.subscriptions.values()) {
                if (other.matches(topic.segments)) {
                    return;
                }
            }
            sets.remove(topic, session);
        });
    }

    /**
     * The session is gone: it leaves the index and every topic its subscriptions match (it joined
     * no other). No set of its topics is kept for this: at a thousand sessions on {@code #} over a
     * thousand topics that was a million map entries; the topics are found again instead, and
     * removing the session from each shared set is one step after the first ({@link SubscriberSets}).
     */
    void sessionClosed(Session session) {
        for (Map.Entry<Integer, Selector> s : session.subscriptions.entrySet()) {
            index.remove(s.getValue(), session, s.getKey());
            tree.forEachMatch(s.getValue(), topic -> sets.remove(topic, session));
        }
        session.subscriptions.clear();
    }

    /**
     * Gives a topic being created its subscribers: every session with a matching subscription that
     * may read it, each once. Sessions that had resumed its path from an earlier server are kept
     * apart for {@link #resetResumed}.
     */
    void subscribeNew(Topic topic) {
        long mark = ++visitCounter;
        index.forEachMatch(topic.segments, (session, subscriptionId) -> {
            if (session.visitMark == mark || !session.permissions.mayRead(topic.segments)) {
                return; // a session with several matching subscriptions joins once
            }
            session.visitMark = mark;
            if (!session.resumeForMissingTopics.isEmpty() && session.resumeForMissingTopics.remove(topic.path) != null) {
                resettingSessions.add(session);
            } else {
                matchedSessions.add(session);
            }
        });
        // one pass: adding sessions one by one would copy the set once per session, O(n^2)
        sets.assign(topic, matchedSessions);
        matchedSessions.clear();
    }

    /**
     * After the first update of a new topic: the sessions that saw its path numbered higher on a
     * server before a restart get the value as a snapshot after a gap (a plain {@code UPDATE 1} would
     * look like a duplicate to them), then join its subscribers.
     */
    void resetResumed(Topic topic, ByteBuf value, int valueIndex, int valueLength) {
        for (Session s : resettingSessions) {
            replies.topic(s, topic);
            replies.snapshot(s, 0, topic, UpdateFlags.GAP, value, valueIndex, valueLength);
            replies.flush();
            sets.add(topic, s);
        }
        resettingSessions.clear();
    }
}
