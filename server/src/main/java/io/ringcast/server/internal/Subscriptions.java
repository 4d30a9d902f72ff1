package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.UpdateFlags;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Who receives which topic: each session's subscriptions, indexed by selector so a new topic
 * finds its subscribers, and each topic's {@link SubscriberSet}. Answers a subscribe with the
 * topics it matches (definitions, then a snapshot, a replay from a resume position, or a gap),
 * through the {@link DirectedReplies}. Sequencer thread only.
 *
 * <p><b>Streamed replies.</b> A reply larger than {@link #REPLY_WINDOW_BYTES} is not produced at
 * once: a thousand sessions subscribing to {@code #} over 100,000 topics would otherwise put
 * gigabytes of frames in direct memory before any of them is read. It is produced a window at a
 * time: the window goes to the session's poller, which tells the sequencer when its last frame
 * reached the socket ({@link InboundEvent#CONTINUE_REPLIES}), and only then is the next one made.
 * It goes through the topics in the order of their creation, from where it got to up to the topics
 * that existed when the subscription opened ({@link SubscriptionRequest}).
 *
 * <p>A topic is joined (added to its subscribers) when the reply reaches it, in the step that
 * writes its {@code TOPIC} and its snapshot, replay or gap, exactly as a small reply joins all of its
 * topics at once: what the reply holds of it is just older than its next update. A topic updated
 * before the reply reached it is sent as it is then (its value, or the replay of everything after
 * the resume position). It joins as a <em>held</em> member ({@link SubscriberSet#holds}), and so
 * does a topic created while the reply streams: the poller keeps its updates, and the session's
 * acks behind them, until the reply's {@code SUBSCRIBED} is written, then writes them
 * ({@link #releaseHeld} makes the memberships ordinary). So the client sees what
 * {@code docs/protocol.md} promises: nothing of the subscription's topics between the reply's first
 * {@code TOPIC} and its {@code SUBSCRIBED}, except updates of topics the session received before
 * through another subscription, which stay ordinary, in order with the snapshots the reply sends
 * of them. The session's later {@code SUBSCRIBE}s and {@code UNSUBSCRIBE}s wait behind the reply,
 * in order ({@link Session#pendingRequests}); its publishes do not. A window ends with at most one
 * reply's {@code SUBSCRIBED}.
 *
 * <p><b>Turns.</b> Producing a window takes the sequencer milliseconds, and every session waits on
 * the sequencer. So windows are made in turns, not as they are asked for: a session whose window
 * reached its socket ({@link #continueReplies}), or whose subscribe comes once this batch made a
 * turn's worth of replies already, queues for its turn ({@link #due}); at the end of each batch
 * {@link #takeTurn} makes a turn's worth ({@link #TURN_BYTES}), oldest first, and the sequencer asks
 * itself for another turn through the inbound ring while sessions wait. Two hundred clients reading
 * their replies of {@code #} at once held every other session's publishes for 0.3-0.4 s, each asking
 * for its next window in the same batch; now a publish waits for about two windows. That is why a
 * window is small: with 200 sessions streaming {@code #} and reading nothing, a 256 KiB window took
 * 6-15 ms on two shared cores and a witness session's p99 was 40-50 ms; at 64 KiB (one reply frame)
 * it is 25-30 ms ({@code UnreadWholeTreeTest}).
 */
final class Subscriptions {
    /**
     * The most bytes of a subscribe reply a session has produced and not yet written to its socket:
     * a reply that fits is answered at once, a larger one is streamed a window of this size at a
     * time. Small, so that a turn is short (see the class comment): one gathered reply frame, ended
     * before a topic whose messages would not fit in it ({@link #advance}), unless the window is
     * empty: a topic's messages are never cut, so a window may be one topic's messages larger.
     */
    static final int REPLY_WINDOW_BYTES = OutboundFrame.GATHERED_PAYLOAD_BYTES;
    /** The resume position of a topic the client never received an update of: it gets them from #1. */
    private static final Long NOTHING_SEEN = 0L;

    /** What a subscription's reply holds for one topic, after its {@code TOPIC} ({@link #start}). */
    private static final int SENDS_NOTHING = 0;
    private static final int SENDS_SNAPSHOT = 1;
    private static final int SENDS_REPLAY = 2;
    private static final int SENDS_GAP = 3;
    /** Through a view: the client had a value of the topic that no longer passes the view's filter. */
    private static final int SENDS_UNMATCHED = 4;

    private final TopicTree tree;
    private final SelectorIndex index = new SelectorIndex();
    private final DirectedReplies replies;
    private final ViewedUpdates viewed;
    private final Views views;
    private final SubscriberSets sets;
    private final ServerCounters counters;
    private final SubscribeMemory memory;
    private final int loops;
    /**
     * In a cluster a client may resume on a node that has not applied yet what another node showed
     * it: it is then ahead, not after a lost state, and this node's next updates carry on its stream.
     */
    private final boolean clusterMode;
    private long visitCounter;
    /** Sessions with a streamed reply pending: those whose {@link Session#pendingRequests} is set. */
    private int repliesPending;
    /** Sessions waiting for their turn to produce a window of their streamed reply, oldest first. */
    private final ArrayDeque<Session> due = new ArrayDeque<>();
    /**
     * What a turn makes, bytes of replies: one window (a window ends short of its size only past
     * this much, {@link #advance}), or the ends of several replies.
     */
    private static final int TURN_BYTES = REPLY_WINDOW_BYTES / 2;
    /** Bytes of replies made since the last turn: past {@link #TURN_BYTES}, a new streamed reply waits for its turn. */
    private long madeSinceTurn;
    /** Reused while creating a topic: the sessions its path matches through a plain subscription, each once. */
    private final ArrayList<Session> plainSessions = new ArrayList<>();
    /** Reused while creating a topic: those of {@link #plainSessions} that join it as ordinary members. */
    private final ArrayList<Session> matchedSessions = new ArrayList<>();
    /** Reused while creating a topic: those of {@link #matchedSessions} whose streamed reply is pending. */
    private final ArrayList<Session> heldSessions = new ArrayList<>();
    /** Reused while creating a topic: matched sessions that had resumed its path from an earlier server. */
    private final ArrayList<Session> resettingSessions = new ArrayList<>();
    /** Reused while creating a topic: the sessions its path matches through each view. */
    private final LinkedHashMap<View, LinkedHashSet<Session>> matchedByView = new LinkedHashMap<>();

    /**
     * @param memory what subscribe requests keep, charged by the sessions' event loops: the
     *               sequencer credits it as it answers them and drops what they kept
     */
    Subscriptions(TopicTree tree, DirectedReplies replies, ViewedUpdates viewed, Views views, SubscriberSets sets,
                  boolean clusterMode, ServerCounters counters, SubscribeMemory memory) {
        this.tree = tree;
        this.memory = memory;
        this.replies = replies;
        this.viewed = viewed;
        this.views = views;
        this.loops = sets.empty().loops();
        this.sets = sets;
        this.clusterMode = clusterMode;
        this.counters = counters;
    }

    /**
     * Opens subscription {@code subscriptionId} and replies with what it matches, then {@code SUBSCRIBED}:
     * at once when the reply fits in a window, else streamed. Behind a reply of the session that is
     * still streaming, it waits its turn. A non-empty {@code resume} list makes it a resume of a
     * subscription the client had before: a matching topic the list leaves out is resumed from
     * {@link #NOTHING_SEEN}, since it came while the client was away (or the client cut its list to
     * fit a frame): a plain snapshot would hide the updates before it. With a {@code view} (one use
     * of it, taken over), the reply starts with {@code VIEW} and everything comes through the view.
     * A first subscribe whose {@code options} rewind starts each topic from its history
     * ({@link #rewindFrom}) instead of its value.
     */
    void subscribe(Session session, int subscriptionId, Selector selector, Map<String, Long> resume, View view,
                   SubscribeOptions options) {
        SubscriptionRequest request = SubscriptionRequest.subscribe(subscriptionId, selector, resume, view, options);
        if (session.pendingRequests != null) {
            session.pendingRequests.addLast(request);
            return;
        }
        if (madeSinceTurn >= TURN_BYTES) {
            pend(session, request);
            queueForTurn(session); // this batch made a turn's worth already
            return;
        }
        answerOrStream(session, request);
    }

    /** Answers the request at once when its reply fits in a window, else streams it: its first window now. */
    private void answerOrStream(Session session, SubscriptionRequest request) {
        long windowStart = replies.writtenBytes();
        if (openAndAnswerWithin(session, request, REPLY_WINDOW_BYTES)) {
            answered(session, request);
            replies.flush();
        } else {
            pend(session, request);
            produce(session, windowStart);
        }
        madeSinceTurn += replies.writtenBytes() - windowStart; // either way, made in this turn
    }

    /** {@link #produce}, the window counted in what this turn made. */
    private void produceCounted(Session session, long windowStart) {
        produce(session, windowStart);
        madeSinceTurn += replies.writtenBytes() - windowStart;
    }

    /** The session's reply to {@code request} streams: it and the session's later requests wait their turn. */
    private void pend(Session session, SubscriptionRequest request) {
        session.pendingRequests = new ArrayDeque<>(2);
        session.pendingRequests.addLast(request);
        counters.subscribeRepliesPending(++repliesPending);
    }

    /** Closes subscription {@code subscriptionId}, behind a reply of the session still streaming. */
    void unsubscribe(Session session, int subscriptionId) {
        if (session.pendingRequests != null) {
            session.pendingRequests.addLast(SubscriptionRequest.unsubscribe(subscriptionId));
            return;
        }
        unsubscribeNow(session, subscriptionId);
    }

    /**
     * The last window of the session's streamed reply reached its socket: the next one. Nothing when
     * the session closed meanwhile (its requests were dropped).
     */
    void continueReplies(Session session) {
        if (session.pendingRequests != null) {
            queueForTurn(session);
        }
    }

    private void queueForTurn(Session session) {
        if (!session.replyDue) {
            session.replyDue = true;
            due.addLast(session);
        }
    }

    /**
     * A turn, at the end of a batch: the next window of the sessions waiting for one, oldest first,
     * until a turn's worth is made. Returns whether sessions are still waiting: the caller
     * asks for another turn.
     */
    boolean takeTurn() {
        madeSinceTurn = 0;
        Session session;
        while (madeSinceTurn < TURN_BYTES && (session = due.pollFirst()) != null) {
            session.replyDue = false;
            ArrayDeque<SubscriptionRequest> pending = session.pendingRequests;
            if (pending == null) {
                continue; // closed meanwhile
            }
            SubscriptionRequest first = pending.peekFirst();
            if (pending.size() == 1 && !first.unsubscribe && !first.opened) {
                // a subscribe that waited for its turn, alone: answered as it would have been at
                // once, its topics joined as ordinary members when its reply fits in a window
                session.pendingRequests = null;
                counters.subscribeRepliesPending(--repliesPending);
                answerOrStream(session, first);
            } else {
                produceCounted(session, replies.writtenBytes());
            }
        }
        madeSinceTurn = 0;
        return !due.isEmpty();
    }

    /**
     * Serves the session's pending requests, oldest first, until this window's
     * {@link #REPLY_WINDOW_BYTES} are written (counted from {@code windowStart}) or a reply is
     * complete, and puts the window on the fan-out ring: its end asks for the next while requests
     * remain. A window holds the end of one reply at most: the poller writes what it held for the
     * session right after that reply's {@code SUBSCRIBED} ({@link #releaseHeld}).
     */
    private void produce(Session session, long windowStart) {
        ArrayDeque<SubscriptionRequest> pending = session.pendingRequests;
        boolean replied = false;
        replies.holdFrames(false); // the reply itself goes out as it is made
        try {
            while (!pending.isEmpty()) {
                SubscriptionRequest r = pending.peekFirst();
                if (r.unsubscribe) {
                    unsubscribeNow(session, r.subscriptionId);
                    pending.pollFirst();
                    continue;
                }
                if (replied || replies.writtenBytes() - windowStart >= REPLY_WINDOW_BYTES) {
                    break;
                }
                boolean done = !r.opened
                        && openAndAnswerWithin(session, r, REPLY_WINDOW_BYTES - (replies.writtenBytes() - windowStart));
                if (!done) {
                    done = advance(session, r, windowStart); // a reply too large for what is left of the window
                }
                if (!done) {
                    break; // the window is full
                }
                answered(session, pending.pollFirst());
                replied = true;
            }
            boolean continues = !pending.isEmpty();
            if (!continues) {
                session.pendingRequests = null;
                counters.subscribeRepliesPending(--repliesPending);
            }
            int windowBytes = (int) (replies.writtenBytes() - windowStart);
            if (windowBytes > 0) {
                counters.replyWindowProduced(windowBytes);
                replies.flushWindow(windowBytes, continues, replied);
            } else {
                // only unsubscribes were waiting: nothing to write, nothing held, nothing to wait for
                assert !continues && !replied : "a window that asks for the next, or ends a reply, has bytes";
            }
            if (replied) {
                releaseHeld(session);
            }
        } finally {
            replies.holdFrames(null);
        }
    }

    /**
     * The session's reply is written up to its {@code SUBSCRIBED}: every topic it joined while the
     * reply was streamed (or that was created then) becomes an ordinary subscription of it, whose
     * updates its poller writes at once; the poller writes those it held right after the reply's
     * last frame. One look at every topic, once per streamed reply.
     */
    private void releaseHeld(Session session) {
        for (int i = 0, n = tree.createdSize(); i < n; i++) {
            Topic topic = tree.inCreationOrder(i);
            if (topic.removed) {
                continue;
            }
            if (topic.subscribers.holds(session)) {
                sets.release(topic, session);
            }
            for (int v = 0; v < topic.viewCount(); v++) {
                TopicView view = topic.view(v);
                if (view.subscribers.holds(session)) {
                    sets.release(view, session);
                }
            }
        }
    }

    /**
     * The request has its {@code SUBSCRIBED}: it keeps only the resume positions of topics this node
     * does not have, and the rest of what its session was charged for it goes back.
     */
    private void answered(Session session, SubscriptionRequest r) {
        long kept = SubscribeMemory.resumeBytes(session.subscriptions.get(r.subscriptionId).missing().keySet());
        memory.credit(session, SubscribeMemory.requestBytes(r.resume) - kept);
    }

    /**
     * Opens the subscription. When its whole reply fits in {@code roomBytes} (or the selector names
     * one topic, whose reply cannot be cut anyway), answers it now, in the tree's order, and returns
     * true; else leaves it to {@link #advance} from the first topic created.
     */
    private boolean openAndAnswerWithin(Session session, SubscriptionRequest r, long roomBytes) {
        Map<String, Long> missing = Map.of();
        for (Map.Entry<String, Long> resumed : r.resume.entrySet()) {
            // a position of a named incarnation needs no keeping: a topic made at the path later is
            // another incarnation, which the client takes from its first update (it is told by TOPIC)
            if (!clusterMode && tree.get(resumed.getKey()) == null && r.incarnationOf(resumed.getKey()) == 0) {
                if (missing.isEmpty()) {
                    missing = new HashMap<>();
                }
                missing.put(resumed.getKey(), resumed.getValue());
            }
        }
        session.subscriptions.put(r.subscriptionId, new OpenSubscription(r.selector, r.view, missing));
        index.add(r.selector, session, r.subscriptionId);
        if (r.view != null) {
            replies.view(session, r.subscriptionId, r.view.id);
        }
        r.unlisted = r.resume.isEmpty() ? null : NOTHING_SEEN;
        r.opened = true;
        if (!r.selector.isExact() && !replyFits(session, r, roomBytes)) {
            r.next = 0;
            r.end = tree.createdSize();
            return false;
        }
        int[] matched = {0};
        tree.forEachMatch(r.selector, topic -> {
            if (session.permissions.mayRead(topic.segments)) { // a subscription to # sees only what the session may read
                matched[0]++;
                join(session, r, topic);
            }
        });
        replies.subscribed(session, r.subscriptionId, matched[0]);
        return true;
    }

    /** Whether the reply to {@code r} would take at most {@code roomBytes}; stops counting past them. */
    private boolean replyFits(Session session, SubscriptionRequest r, long roomBytes) {
        long[] bytes = {0};
        return tree.forEachMatchWhile(r.selector, topic -> {
            if (session.permissions.mayRead(topic.segments)) {
                bytes[0] += replyBytes(session, r, topic);
            }
            return bytes[0] <= roomBytes;
        });
    }

    /**
     * Joins the streamed reply's next topics, in the order of their creation, until the window is
     * written; then, at the end, {@code SUBSCRIBED}. Returns whether the reply is complete.
     */
    private boolean advance(Session session, SubscriptionRequest r, long windowStart) {
        replies.expect(REPLY_WINDOW_BYTES - (int) (replies.writtenBytes() - windowStart));
        while (r.next < r.end) {
            long made = replies.writtenBytes() - windowStart;
            if (made >= REPLY_WINDOW_BYTES) {
                return false;
            }
            Topic topic = tree.inCreationOrder(r.next);
            if (!topic.removed && r.selector.matches(topic.segments) && session.permissions.mayRead(topic.segments)) {
                // the window is one frame: a topic that would start another waits for the next
                // window; measured only past a turn's worth, so a window cut short still fills a turn
                if (made > TURN_BYTES && made + replyBytes(session, r, topic) > REPLY_WINDOW_BYTES) {
                    return false;
                }
                r.matched++;
                join(session, r, topic);
            }
            r.next++;
        }
        replies.subscribed(session, r.subscriptionId, r.matched);
        return true;
    }

    /**
     * What the subscription starts {@code topic} from: null for a first subscribe, else the client's
     * last sequence; 0, nothing seen, when that was of another incarnation of the path.
     */
    private static Long resumeFrom(SubscriptionRequest r, Topic topic) {
        if (r.unlisted == null) {
            return null;
        }
        Long last = r.resume.get(topic.path);
        if (last == null) {
            return r.unlisted;
        }
        int incarnation = r.incarnationOf(topic.path);
        return incarnation != 0 && incarnation != topic.incarnation ? NOTHING_SEEN : last;
    }

    /**
     * What the reply holds for {@code topic} after its {@code TOPIC}: {@code resumeFrom} null for a
     * first subscribe (the value), else the last sequence the client has (the updates after it, or
     * a gap); {@code joined} when the session receives the topic already through another subscription.
     */
    private int start(Topic topic, Long resumeFrom, boolean joined) {
        if (joined) {
            // live already through another subscription, whose reply brought the session up to
            // date; a resumed listener took it too, only a new one needs the value
            return resumeFrom == null && topic.hasValue() ? SENDS_SNAPSHOT : SENDS_NOTHING;
        }
        if (resumeFrom == null) {
            return topic.hasValue() ? SENDS_SNAPSHOT : SENDS_NOTHING;
        }
        if (resumeFrom == topic.sequence || (clusterMode && resumeFrom > topic.sequence)) {
            // the client is up to date (or, in a cluster, this node is catching up with it: the
            // client drops what it has seen already)
            return SENDS_NOTHING;
        }
        // else history no longer reaches back (or the client is ahead of a restarted server)
        return topic.canReplayAfter(resumeFrom) ? SENDS_REPLAY : SENDS_GAP;
    }

    /** The bytes {@link #join} would write for the request's subscription to {@code topic}; at most those through a view. */
    private long replyBytes(Session session, SubscriptionRequest r, Topic topic) {
        Long resumeFrom = resumeFrom(r, topic);
        long rewindFrom = rewindFrom(r, topic, resumeFrom);
        if (r.view != null) {
            return DirectedReplies.topicBytes(topic) + (rewindFrom > 0
                    ? DirectedReplies.viewedRewindBytes(topic, rewindFrom) : DirectedReplies.viewedSnapshotBytes(topic));
        }
        boolean joined = topic.subscribers.contains(session);
        long bytes = joined ? 0 : DirectedReplies.topicBytes(topic);
        return bytes + switch (start(topic, resumeFrom, joined)) {
            case SENDS_SNAPSHOT -> rewindFrom > 0 ? DirectedReplies.rewindBytes(topic, rewindFrom)
                    : DirectedReplies.snapshotBytes(topic);
            case SENDS_GAP -> DirectedReplies.snapshotBytes(topic);
            case SENDS_REPLAY -> DirectedReplies.replayBytes(topic, resumeFrom);
            default -> 0;
        };
    }

    /**
     * The update a first subscribe that rewinds starts {@code topic} from ({@link Topic#rewindFrom});
     * 0 when it does not rewind: a resume, no rewind asked, or no value kept.
     */
    private static long rewindFrom(SubscriptionRequest r, Topic topic, Long resumeFrom) {
        return resumeFrom == null && r.rewinds() && topic.hasValue() ? topic.rewindFrom(r.rewind, r.rewindSince) : 0;
    }

    /** Whether the session received the topic's {@code TOPIC}: it is a member of its plain set or of one of its views. */
    private static boolean knows(Session session, Topic topic) {
        return topic.subscribers.contains(session) || knowsThroughAView(session, topic);
    }

    /** Whether the session is a member of one of the topic's views (so it received the topic's {@code TOPIC}). */
    private static boolean knowsThroughAView(Session session, Topic topic) {
        for (int i = 0; i < topic.viewCount(); i++) {
            if (topic.view(i).subscribers.contains(session)) {
                return true;
            }
        }
        return false;
    }

    /** Joins the request's subscription to {@code topic}: plainly ({@link #join(Session, int, Topic, Long)}) or through its view. */
    private void join(Session session, SubscriptionRequest r, Topic topic) {
        Long resumeFrom = resumeFrom(r, topic);
        long rewindFrom = rewindFrom(r, topic, resumeFrom);
        if (r.view == null) {
            join(session, r.subscriptionId, topic, resumeFrom, rewindFrom);
        } else {
            joinView(session, r.subscriptionId, topic, resumeFrom, r.view, rewindFrom);
        }
    }

    /**
     * Adds the session to the topic's subscribers and sends what the subscription starts from
     * ({@link #start}), after the topic's {@code TOPIC} where the session did not receive it yet:
     * instead of the value, the updates from {@code rewindFrom} on when above 0.
     */
    private void join(Session session, int subscriptionId, Topic topic, Long resumeFrom, long rewindFrom) {
        boolean joined = topic.subscribers.contains(session);
        int start = start(topic, resumeFrom, joined);
        if (!joined) {
            // not in the plain set, as just found: searching it again took some 6% of the sequencer's time in a reply storm
            boolean known = knowsThroughAView(session, topic);
            // held while a reply of the session streams: see the class comment
            sets.add(topic, session, session.pendingRequests != null);
            if (!known) {
                replies.topic(session, topic);
            }
        }
        switch (start) {
            case SENDS_SNAPSHOT -> {
                if (rewindFrom > 0) {
                    replies.rewind(session, subscriptionId, topic, rewindFrom);
                } else {
                    replies.snapshot(session, subscriptionId, topic, 0);
                }
            }
            case SENDS_REPLAY -> replies.replay(session, topic, resumeFrom);
            case SENDS_GAP -> gap(session, topic);
            default -> { }
        }
    }

    /**
     * Adds the session to the members of the topic's {@code view} and sends what the subscription
     * starts from through it ({@link #startViewed}), after the topic's {@code TOPIC} where the
     * session did not receive it yet: instead of what the view shows, the updates from
     * {@code rewindFrom} on through the view when above 0 ({@link ViewedUpdates#rewind}).
     */
    private void joinView(Session session, int subscriptionId, Topic topic, Long resumeFrom, View view,
                          long rewindFrom) {
        TopicView v = viewed.open(topic, view);
        boolean joined = v.subscribers.contains(session);
        viewed.showHeld(v); // before the join: the members are told what the joiner will be
        if (!joined) {
            boolean known = knows(session, topic);
            sets.add(v, session, session.pendingRequests != null);
            if (!known) {
                replies.topic(session, topic);
            }
        }
        if (rewindFrom > 0) {
            viewed.rewind(replies, session, subscriptionId, v, rewindFrom);
            return;
        }
        switch (startViewed(v, resumeFrom)) {
            case SENDS_SNAPSHOT -> viewed.snapshot(replies, session, subscriptionId, v, 0);
            case SENDS_GAP -> viewed.snapshot(replies, session, subscriptionId, v, UpdateFlags.GAP);
            case SENDS_UNMATCHED -> replies.unmatched(session, v, topic.sequence);
            default -> { }
        }
    }

    /**
     * What a subscription through a view starts {@code v}'s topic from: for a first subscribe, what
     * the view shows (nothing when the newest value does not pass); for a resume, what the view shows
     * when it is newer than what the client has ({@code resumeFrom}), or {@code UNMATCHED} when the
     * client had a value and the newest one no longer passes. Sequences through a view jump anyway,
     * so the newest is all a resume needs. Unlike {@link #start}, the same whether or not the
     * session receives the view already through another subscription: a client keeps what it
     * received per subscription, and each subscription takes its view's messages from its own
     * {@code VIEW} on, so each is brought up to date by its own reply.
     */
    private int startViewed(TopicView v, Long resumeFrom) {
        if (resumeFrom == null) {
            return v.matched ? SENDS_SNAPSHOT : SENDS_NOTHING;
        }
        if (v.matched) {
            if (v.currentSequence > resumeFrom) {
                return SENDS_SNAPSHOT;
            }
            // a single node numbering below what the client saw restarted without its state: the
            // client drops what it takes for seen already, unless told of the gap
            return !clusterMode && v.currentSequence < resumeFrom ? SENDS_GAP : SENDS_NOTHING;
        }
        return resumeFrom > 0 && v.topic.hasValue() && v.topic.sequence > resumeFrom ? SENDS_UNMATCHED : SENDS_NOTHING;
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
                // in order with the topic's updates, which the poller holds for a held member
                replies.holdFrames(topic.subscribers.holds(session));
                if (created) {
                    replies.topic(session, topic);
                }
                if (replay) {
                    replies.replay(session, topic, sequenceBefore);
                } else {
                    gap(session, topic);
                }
                replies.flush();
                replies.holdFrames(null);
            }
        }
        for (int i = 0; i < topic.viewCount(); i++) {
            replacedThroughView(topic.view(i), created);
        }
    }

    /**
     * {@link #replaced} for the members of a view of the topic: the view takes the new value; they
     * are sent what it shows when that changed, or {@code UNMATCHED} when it no longer passes.
     */
    private void replacedThroughView(TopicView v, boolean created) {
        boolean wasMatched = v.matched;
        long before = v.currentSequence;
        viewed.refresh(v);
        boolean changed = v.matched && (!wasMatched || v.currentSequence != before);
        boolean unmatched = v.shownMatch && !v.matched;
        for (int loop = 0; loop < loops; loop++) {
            for (Session session : v.subscribers.forLoop(loop)) {
                replies.holdFrames(v.subscribers.holds(session));
                if (created) {
                    replies.topic(session, v.topic);
                }
                if (changed) {
                    viewed.snapshot(replies, session, 0, v, 0);
                } else if (unmatched) {
                    replies.unmatched(session, v, v.topic.sequence);
                }
                replies.flush();
                replies.holdFrames(null);
            }
        }
        if (changed || unmatched) {
            v.shownMatch = changed;
        }
    }

    /**
     * Closes subscription {@code subscriptionId}: the session leaves the topics (plain, or the
     * subscription's view of them) no other of its subscriptions with the same view matches.
     */
    private void unsubscribeNow(Session session, int subscriptionId) {
        OpenSubscription closed = session.subscriptions.remove(subscriptionId);
        if (closed == null) {
            return;
        }
        index.remove(closed.selector(), session, subscriptionId);
        memory.credit(session, SubscribeMemory.resumeBytes(closed.missing().keySet()));
        tree.forEachMatch(closed.selector(), topic -> {
            for (OpenSubscription other : session.subscriptions.values()) {
                if (other.view() == closed.view() && other.selector().matches(topic.segments)) {
                    return;
                }
            }
            leave(topic, session, closed.view());
        });
        if (closed.view() != null) {
            views.release(closed.view());
        }
    }

    /** The session leaves the topic's plain subscribers ({@code view} null) or its view; an emptied view is dropped. */
    private void leave(Topic topic, Session session, View view) {
        if (view == null) {
            sets.remove(topic, session);
            return;
        }
        TopicView v = topic.viewOf(view);
        if (v != null) {
            sets.remove(v, session);
            if (v.subscribers.size() == 0) {
                viewed.close(v);
            }
        }
    }

    /** Sessions with a streamed reply pending, which walk the tree's creation order ({@link TopicTree#compact}). */
    int repliesPending() {
        return repliesPending;
    }

    /**
     * The topic is being removed: every session that has its {@code TOPIC} (its plain subscribers,
     * and each view's members) is sent {@code TOPIC_REMOVED} through the fan-out ring, after the
     * topic's updates before it, and leaves it; its views are closed. The sets go as they are, held
     * members included: their poller writes it after their streamed reply, in order.
     */
    void removed(Topic topic) {
        if (topic.subscribers.size() > 0) {
            replies.topicRemoved(topic);
            sets.assign(topic, List.of());
        }
        while (topic.viewCount() > 0) {
            TopicView v = topic.view(topic.viewCount() - 1);
            if (v.subscribers.size() > 0) {
                replies.topicRemoved(v);
                sets.assign(v, List.of());
            }
            viewed.close(v);
        }
    }

    /**
     * The session is gone: its pending requests are dropped, and it leaves the index and every topic
     * its subscriptions match (it joined no other), and their views. No set of its topics is kept for this: at a thousand sessions on {@code #} over a
     * thousand topics that was a million map entries; the topics are found again instead, and
     * removing the session from each shared set is one step after the first ({@link SubscriberSets}).
     */
    void sessionClosed(Session session) {
        if (session.pendingRequests != null) {
            // a streamed reply stops here; topics it had not reached were never joined, and
            // leaving them below is a lookup each
            session.pendingRequests = null;
            counters.subscribeRepliesPending(--repliesPending);
        }
        for (Map.Entry<Integer, OpenSubscription> s : session.subscriptions.entrySet()) {
            OpenSubscription open = s.getValue();
            index.remove(open.selector(), session, s.getKey());
            tree.forEachMatch(open.selector(), topic -> leave(topic, session, open.view()));
            if (open.view() != null) {
                views.release(open.view());
            }
        }
        session.subscriptions.clear();
        sets.sessionClosed(session);
        memory.creditAll(session); // its requests and their resume lists, and what its subscriptions kept
    }

    /**
     * Gives a topic being created its subscribers: every session with a matching subscription that
     * may read it, each once. Sessions that had resumed its path from an earlier server are kept
     * apart for {@link #resetResumed}.
     */
    void subscribeNew(Topic topic) {
        long mark = ++visitCounter;
        index.forEachMatch(topic.segments, (session, subscriptionId) -> {
            OpenSubscription subscription = session.subscriptions.get(subscriptionId);
            boolean resumed = forgetMissing(session, subscription, topic.path);
            if (!session.permissions.mayRead(topic.segments)) {
                return;
            }
            if (resumed) {
                session.resumedMark = mark;
            }
            View view = subscription.view();
            if (view != null) {
                matchedByView.computeIfAbsent(view, v -> new LinkedHashSet<>()).add(session);
                return;
            }
            if (session.visitMark != mark) { // a session with several matching subscriptions joins once
                session.visitMark = mark;
                plainSessions.add(session);
            }
        });
        for (Session session : plainSessions) {
            if (session.resumedMark == mark) {
                resettingSessions.add(session);
            } else {
                matchedSessions.add(session);
                if (session.pendingRequests != null) {
                    heldSessions.add(session);
                }
            }
        }
        plainSessions.clear();
        // one pass: adding sessions one by one would copy the set once per session, O(n^2)
        sets.assign(topic, matchedSessions, heldSessions);
        matchedSessions.clear();
        heldSessions.clear();
        if (!matchedByView.isEmpty()) {
            for (Map.Entry<View, LinkedHashSet<Session>> m : matchedByView.entrySet()) {
                for (Session session : m.getValue()) {
                    matchedSessions.add(session);
                    if (session.pendingRequests != null) {
                        heldSessions.add(session);
                    }
                }
                sets.assign(viewed.open(topic, m.getKey()), matchedSessions, heldSessions);
                matchedSessions.clear();
                heldSessions.clear();
            }
            matchedByView.clear();
        }
    }

    /**
     * Whether the subscription kept a resume position for {@code path}, a topic being created; it is
     * forgotten, and what it was charged goes back.
     */
    private boolean forgetMissing(Session session, OpenSubscription subscription, String path) {
        if (subscription.missing().isEmpty() || subscription.missing().remove(path) == null) {
            return false;
        }
        memory.credit(session, SubscribeMemory.resumeEntryBytes(path));
        return true;
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
            replies.flush(); // held with the topic's updates while a reply of the session streams
            sets.add(topic, s, s.pendingRequests != null);
        }
        resettingSessions.clear();
    }
}
