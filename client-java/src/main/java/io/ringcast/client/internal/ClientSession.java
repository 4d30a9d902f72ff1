package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.ringcast.client.PublishOutcomeUnknownException;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client's protocol state that outlives connections, and its one way to the wire. It holds
 * <ul>
 *   <li>the {@link SubscriptionTable}: subscriptions by id, open until the application closes them
 *       or the server refuses them, and topics by path with the last sequence delivered;</li>
 *   <li>the {@link PublishWindow}: publishes and removals waiting for a session, and those sent and
 *       waiting for their answer;</li>
 *   <li>the {@link UpdateDelivery} that hands inbound updates to subscriptions;</li>
 *   <li>while a session is open ({@link #attach} .. {@link #detach}), its channel and the
 *       {@link FrameBatcher} that packs outbound messages into frames.</li>
 * </ul>
 *
 * <p>Thread contract: event-loop confined, and so is everything it holds. Application threads
 * reach it only through {@link CommandProxy}; inbound messages come from {@link ConnectionHandler}
 * on the same loop. The entry points assert it. Listeners are called from here, on the event loop.
 *
 * <p>Views: a subscription with options that make a view (see {@link ClientSubscription#hasView()})
 * sends them in each of its {@code SUBSCRIBE}s and receives its own stream, through the view the
 * server names in {@code VIEW}; {@link UpdateDelivery} routes both kinds of stream.
 *
 * <p>Ids: subscription ids count up from 1 and the correlation ids of publishes and removals
 * cycle through {@code [2^30, 2^31)}, so an {@code ERROR}'s correlation id names one or the other
 * without looking at its code.
 */
final class ClientSession {
    /** Frames one drain may write before it yields the event loop to reads. */
    static final int MAX_FRAMES_PER_DRAIN = 8;

    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);

    private final EventLoop eventLoop;
    private final SubscriptionTable subscriptions = new SubscriptionTable();
    private final PublishWindow publishes = new PublishWindow();
    private final UpdateDelivery delivery = new UpdateDelivery(subscriptions);
    private final FrameBatcher frames = new FrameBatcher();
    private long pingNonce;
    /** The open session's channel, null between sessions. */
    private Channel channel;
    /** Counts sessions attached; {@link ClientSubscription#liveConnection} compares with it. */
    private int connection;
    private RingcastException closedError;
    /**
     * How many server addresses the client has: a publish a cluster node refuses
     * ({@code NO_MAJORITY}) or cannot tell ({@code REPLICATION_TIMEOUT}) is retried through the
     * others, up to once each.
     */
    private final int addressCount;
    /**
     * This session's node is on the minority side: new publishes and removals wait, and the session
     * ends once nothing sent is unanswered.
     */
    private boolean leavingMinorityNode;
    /**
     * Sent in {@code HELLO} on every connection: with it and correlation ids never reused, a publish
     * whose connection was lost before its ack is sent again ({@code REPUBLISH}) and applied once.
     */
    private final long publisherId = newPublisherId();
    /**
     * {@code HELLO}s sent with the publisher id, the last one's number: each connection gets the
     * next, so a cluster's log orders this client's sessions and refuses a publish of one it has
     * moved past (a copy a node still held after the client left it). Taken on the connection's
     * event loop, which may not be this session's.
     */
    private final AtomicLong hellos = new AtomicLong();

    ClientSession(EventLoop eventLoop, int addressCount) {
        this.eventLoop = eventLoop;
        this.addressCount = addressCount;
    }

    // ------------------------------------------------------------------ commands (CommandProxy)

    void subscribe(ClientSubscription s) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            s.abandon(closedError);
            return;
        }
        if (s.isClosed()) {
            return; // closed before it got here
        }
        if (!subscriptions.add(s)) {
            s.refused(new RingcastException("subscription ids exhausted: " + SubscriptionTable.LAST_ID + " made"));
            return;
        }
        if (channel != null) {
            sendSubscribe(s);
        }
    }

    void unsubscribe(ClientSubscription s) {
        assert eventLoop.inEventLoop();
        if (!subscriptions.contains(s)) {
            return; // never registered, refused, or the client closed
        }
        subscriptions.remove(s.id);
        if (channel != null) {
            WireCodec.writeUnsubscribe(frames.reserve(WireCodec.UNSUBSCRIBE_BYTES), s.id);
        }
    }

    void publish(PublishRequest p) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            p.fail(closedError);
        } else if (channel != null && !leavingMinorityNode && publishes.canSendNew()) {
            sendPublish(p);
        } else {
            publishes.addWaiting(p);
        }
    }

    /**
     * A removal: sent now when a session is open and nothing waits before it, else queued behind
     * what waits, so that it never overtakes a publish made before it.
     */
    void remove(RemoveRequest r) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            r.fail(closedError);
        } else if (channel != null && !leavingMinorityNode && publishes.noneWaiting()) {
            sendRemove(r);
        } else {
            publishes.addWaiting(r);
        }
    }

    /** Whether a drain should stop: the socket is backed up, or the drain wrote its share of frames. */
    boolean mustYield() {
        return channel != null && (!channel.isWritable() || frames.framesSinceFlush() >= MAX_FRAMES_PER_DRAIN);
    }

    /** Whether commands can be taken now: no session (they wait in memory), or a writable one. */
    boolean canTakeCommands() {
        return channel == null || channel.isWritable();
    }

    /** Ends a batch: writes the last frame and flushes once. */
    void flush() {
        assert eventLoop.inEventLoop();
        frames.flush();
    }

    /** Pauses a batch that has more to come: flushes the full frames, keeps filling the last one. */
    void flushWritten() {
        assert eventLoop.inEventLoop();
        frames.flushWritten();
    }

    /** Sends {@code PING} (the write side was idle). */
    void ping() {
        assert eventLoop.inEventLoop();
        if (channel != null) {
            WireCodec.writePing(frames.reserve(WireCodec.PING_BYTES), ++pingNonce);
            frames.flush();
        }
    }

    // ------------------------------------------------------------------ sessions (ConnectionHandler)

    /**
     * A session started ({@code WELCOME}): sends every open subscription (those the server had
     * confirmed before with their resume lists), then the publishes that waited, in one flush.
     */
    void attach(Channel ch, int serverMaxFrameBytes) {
        assert eventLoop.inEventLoop();
        assert channel == null : "a session is attached already";
        if (closedError != null) {
            return;
        }
        channel = ch;
        connection++;
        leavingMinorityNode = false;
        frames.start(ch, serverMaxFrameBytes);
        for (ClientSubscription s : subscriptions.inIdOrder()) {
            sendSubscribe(s);
        }
        PublishRequest p;
        while ((p = publishes.pollToResend()) != null) {
            // with its id: an earlier send on a lost connection may have been applied
            sendRepublish(p);
        }
        sendWaiting();
        frames.flush();
    }

    /**
     * Sends the publishes and removals that waited, oldest first, while the window has room for
     * publishes (a removal takes none, but waits behind a publish that waits); not flushed.
     */
    private void sendWaiting() {
        CorrelatedRequest next;
        while (channel != null && !leavingMinorityNode && (next = publishes.peekWaiting()) != null) {
            if (next instanceof PublishRequest p) {
                if (!publishes.hasRoom()) {
                    return;
                }
                publishes.pollWaiting();
                sendPublish(p);
            } else {
                publishes.pollWaiting();
                sendRemove((RemoveRequest) next);
            }
        }
    }

    /**
     * The session ended: forgets the channel, keeps the publishes sent and not acked (they may or
     * may not have been applied) to send again on the next session, fails the removals sent and
     * not answered (the same, but never sent again), and with
     * {@code tellSubscriptions} gives every subscription's listener the reason (a fatal server error).
     */
    void detach(RingcastException reasonOrNull, boolean tellSubscriptions) {
        assert eventLoop.inEventLoop();
        if (channel == null) {
            return;
        }
        channel = null;
        frames.stop();
        publishes.connectionLost();
        if (tellSubscriptions && reasonOrNull != null) {
            for (ClientSubscription s : subscriptions.all()) {
                s.notifyError(reasonOrNull);
            }
        }
    }

    /** The client closed: fails everything pending with {@code error}; later commands fail with it too. */
    void close(RingcastException error) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            return;
        }
        closedError = error;
        channel = null;
        frames.stop();
        publishes.failAll(error);
        for (ClientSubscription s : subscriptions.all()) {
            s.abandon(error);
        }
        subscriptions.clear();
    }

    boolean isClosed() {
        return closedError != null;
    }

    // ------------------------------------------------------------------ inbound (ConnectionHandler)

    /**
     * {@code TOPIC}: the topic with this path, known from now on until it is removed. When the
     * client holds the path with another known incarnation, the topic it holds was removed while
     * it could not hear it: the subscriptions that had it are told and it is forgotten
     * ({@link UpdateDelivery#onIncarnationReplaced}), and the new one starts afresh. Incarnation 0
     * (a server of no incarnations) changes nothing.
     */
    TopicState topic(String path, int incarnation) throws ProtocolException {
        assert eventLoop.inEventLoop();
        TopicState t = subscriptions.topic(path);
        if (incarnation != 0 && t.incarnation != incarnation) {
            if (t.incarnation != 0) {
                delivery.onIncarnationReplaced(t, connection);
                t = subscriptions.topic(path);
            }
            t.incarnation = incarnation;
        }
        return t;
    }

    /** {@code TOPIC_REMOVED}: see {@link UpdateDelivery#onTopicRemoved}. */
    void onTopicRemoved(TopicState t, long lastSequence) {
        assert eventLoop.inEventLoop();
        delivery.onTopicRemoved(t, lastSequence, connection);
    }

    /** {@code SNAPSHOT}: see {@link UpdateDelivery#onSnapshot}. */
    void onSnapshot(int subscriptionId, TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                    int valueLength) {
        assert eventLoop.inEventLoop();
        delivery.onSnapshot(subscriptionId, t, sequence, flags, frame, valueIndex, valueLength);
    }

    /** {@code UPDATE} on this session: see {@link UpdateDelivery#onUpdate}. */
    void onUpdate(TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        assert eventLoop.inEventLoop();
        delivery.onUpdate(t, sequence, flags, frame, valueIndex, valueLength, connection);
    }

    /** {@code VIEW}: see {@link UpdateDelivery#onView}. */
    void onView(int subscriptionId, long viewId) {
        assert eventLoop.inEventLoop();
        delivery.onView(subscriptionId, viewId);
    }

    /** {@code SNAPSHOT} flagged {@code VIEWED}: see {@link UpdateDelivery#onViewedSnapshot}. */
    void onViewedSnapshot(int subscriptionId, long viewId, TopicState t, long sequence, int flags, ByteBuf frame,
                          int valueIndex, int valueLength) {
        assert eventLoop.inEventLoop();
        delivery.onViewedSnapshot(subscriptionId, viewId, t, sequence, flags, frame, valueIndex, valueLength);
    }

    /** {@code UPDATE} flagged {@code VIEWED} on this session: see {@link UpdateDelivery#onViewedUpdate}. */
    void onViewedUpdate(long viewId, TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                        int valueLength) throws ProtocolException {
        assert eventLoop.inEventLoop();
        delivery.onViewedUpdate(viewId, t, sequence, flags, frame, valueIndex, valueLength);
    }

    /** {@code UNMATCHED} on this session: see {@link UpdateDelivery#onUnmatched}. */
    void onUnmatched(long viewId, TopicState t, long sequence) {
        assert eventLoop.inEventLoop();
        delivery.onUnmatched(viewId, t, sequence);
    }

    void onPublishAck(int correlationId, long sequence) {
        assert eventLoop.inEventLoop();
        PublishRequest p = publishes.answered(correlationId);
        if (p != null) {
            p.acked(sequence);
        }
        leaveMinorityNodeOnceAnswered();
        sendWaiting();
    }

    /** {@code REMOVED}: completes the removal with the number of topics it removed. */
    void onRemoved(int correlationId, int removedTopics) {
        assert eventLoop.inEventLoop();
        RemoveRequest r = publishes.removalAnswered(correlationId);
        if (r != null) {
            r.answered(removedTopics);
        }
        leaveMinorityNodeOnceAnswered();
    }

    /**
     * After a {@code NO_MAJORITY}: once every publish and removal sent to this node is answered,
     * move to the next address.
     */
    private void leaveMinorityNodeOnceAnswered() {
        if (leavingMinorityNode && publishes.noneUnanswered() && channel != null) {
            channel.close();
        }
    }

    /**
     * {@code SUBSCRIBED}: the server confirmed the subscription; it takes updates from now on. A
     * subscription with a view confirmed without a {@code VIEW} is refused instead: a server from
     * before views skips the options and opens a plain subscription, whose messages a subscription
     * with a view never takes, so it would receive nothing and never know why.
     */
    void onSubscribed(int subscriptionId) {
        assert eventLoop.inEventLoop();
        ClientSubscription s = subscriptions.get(subscriptionId);
        if (s == null) {
            return;
        }
        if (s.hasView() && s.viewId == ClientSubscription.NO_VIEW) {
            subscriptions.remove(s.id);
            if (channel != null) {
                WireCodec.writeUnsubscribe(frames.reserve(WireCodec.UNSUBSCRIBE_BYTES), s.id);
            }
            s.refused(new RingcastException("the server opened the subscription to '" + s.selector.text()
                    + "' without a view: it does not serve the options " + s.options
                    + " (a server from before subscription options, issue 16)", ErrorCode.INVALID_OPTIONS, 0));
            return;
        }
        s.confirmedOnce = true;
        s.liveConnection = connection;
        s.confirm();
    }

    /**
     * A non-fatal {@code ERROR}: fails the publish or removal, or drops the subscription, its
     * correlation id names. {@code code} is null for a code this version does not know. A removal
     * refused by a cluster node ({@code NO_MAJORITY}, {@code REPLICATION_TIMEOUT}) fails like any
     * other refusal: it is not sent again elsewhere.
     *
     * @return whether the id named a pending publish or removal, or an open subscription
     */
    boolean onRequestError(ErrorCode code, int wireCode, int correlationId, String reason) {
        assert eventLoop.inEventLoop();
        String message = (code != null ? code.name() : "error " + wireCode) + ": " + reason;
        if (correlationId >= PublishWindow.FIRST_CORRELATION_ID) {
            RemoveRequest r = publishes.removalAnswered(correlationId);
            if (r != null) {
                r.fail(new RingcastException(message, code, 0));
                leaveMinorityNodeOnceAnswered();
                return true;
            }
        }
        RingcastException error = code == ErrorCode.PUBLISH_OUTCOME_UNKNOWN
                ? new PublishOutcomeUnknownException(message) : new RingcastException(message, code, 0);
        if (correlationId >= PublishWindow.FIRST_CORRELATION_ID) {
            PublishRequest p = publishes.answered(correlationId);
            if (p == null) {
                return false;
            }
            if ((code == ErrorCode.NO_MAJORITY || code == ErrorCode.REPLICATION_TIMEOUT)
                    && ++p.minorityRefusals < addressCount) {
                // NO_MAJORITY: nothing was applied; REPLICATION_TIMEOUT: maybe it was, and a REPUBLISH
                // through another node tells (the cluster's ledger applies it once). Either way it goes
                // again through another node, in the order first sent, once this one answered the
                // others (it refuses those with NO_MAJORITY: they must not overtake this one)
                publishes.retryElsewhere(p);
                leavingMinorityNode = true;
                LOG.info("publish to '{}' refused by a cluster node ({}); trying another address", p.topic, code);
            } else {
                p.fail(error);
            }
            leaveMinorityNodeOnceAnswered();
            sendWaiting();
            return true;
        }
        ClientSubscription s = subscriptions.remove(correlationId);
        if (s == null) {
            return false;
        }
        s.refused(error);
        return true;
    }

    // ------------------------------------------------------------------ diagnostics

    long duplicatesDropped() {
        return delivery.duplicatesDropped();
    }

    long viewMessagesDropped() {
        return delivery.viewMessagesDropped();
    }

    long framesWritten() {
        return frames.framesWritten();
    }

    int unackedPublishes() {
        return publishes.unackedCount();
    }

    long publisherId() {
        return publisherId;
    }

    /** The number of the connection about to send {@code HELLO}: one more than the last. */
    long nextConnection() {
        return hellos.incrementAndGet();
    }

    // ------------------------------------------------------------------ private

    /**
     * Sends the subscription's {@code SUBSCRIBE}, with its options, and with a resume list once
     * the server has confirmed it (and the list's incarnations with the options, when they go:
     * {@link SubscriptionTable#resumeList}). Either way its view id is forgotten until the
     * {@code VIEW} of the reply: the server (another node, or one restarted) may number views
     * otherwise.
     */
    private void sendSubscribe(ClientSubscription s) {
        int maxFrameBytes = frames.maxFrameBytes();
        int bytes = WireCodec.subscribeBytes(s.selectorBytes);
        if (bytes > maxFrameBytes) {
            refuseUnsent(s, "selector '" + s.selector.text() + "' does not fit in the server's frame limit of "
                    + maxFrameBytes + " bytes", ErrorCode.INVALID_SELECTOR);
            return;
        }
        bytes += WireCodec.subscribeOptionsBytes(s.options);
        if (bytes > maxFrameBytes) {
            refuseUnsent(s, "options " + s.options + " of the subscription to '" + s.selector.text() + "' do not fit, "
                    + "with its selector, in the server's frame limit of " + maxFrameBytes + " bytes",
                    ErrorCode.INVALID_OPTIONS);
            return;
        }
        Map<String, Long> resume = Collections.emptyMap();
        SubscribeOptions options = s.options;
        if (s.confirmedOnce) {
            SubscriptionTable.ResumeList list = subscriptions.resumeList(s, maxFrameBytes - bytes, maxFrameBytes);
            resume = list.positions();
            options = list.options();
            bytes = WireCodec.subscribeBytes(s.selectorBytes) + list.positionBytes()
                    + WireCodec.subscribeOptionsBytes(options);
            s.liveConnection = connection;
        }
        s.viewId = ClientSubscription.NO_VIEW;
        WireCodec.writeSubscribe(frames.reserve(bytes), s.id, s.selector.text(), resume, options);
    }

    /** A subscription this server can never take as it is: refused here, as the server would, without sending it. */
    private void refuseUnsent(ClientSubscription s, String reason, ErrorCode code) {
        subscriptions.remove(s.id);
        s.refused(new RingcastException(reason, code, 0));
    }

    private void sendPublish(PublishRequest p) {
        if (failsUnlessItFits(p)) {
            return;
        }
        int id = publishes.sent(p);
        WireCodec.writePublish(frames.reserve(p.messageBytes), id, p.topic, p.value);
    }

    /**
     * Sends a removal with the next correlation id, or fails it with {@code INVALID_SELECTOR} when
     * it exceeds this server's frame limit, as a subscription to the selector would be refused.
     */
    private void sendRemove(RemoveRequest r) {
        int maxFrameBytes = frames.maxFrameBytes();
        if (r.messageBytes > maxFrameBytes) {
            r.fail(new RingcastException("selector '" + r.selector + "' of a removal does not fit in the server's "
                    + "frame limit of " + maxFrameBytes + " bytes", ErrorCode.INVALID_SELECTOR, 0));
            return;
        }
        int id = publishes.removalSent(r);
        WireCodec.writeRemove(frames.reserve(r.messageBytes), id, r.selector);
    }

    /** A publish sent before whose ack never came, with the correlation id it had, as {@code REPUBLISH}. */
    private void sendRepublish(PublishRequest p) {
        if (failsUnlessItFits(p)) {
            return;
        }
        publishes.resent(p);
        WireCodec.writeRepublish(frames.reserve(p.messageBytes), p.correlationId, p.topic, p.value);
    }

    /** Fails the publish with {@code VALUE_TOO_LARGE} when it exceeds this server's frame limit; whether it did. */
    private boolean failsUnlessItFits(PublishRequest p) {
        int maxFrameBytes = frames.maxFrameBytes();
        if (p.messageBytes <= maxFrameBytes) {
            return false;
        }
        p.fail(new RingcastException("publish to '" + p.topic + "' takes " + p.messageBytes
                + " bytes, more than the server's frame limit of " + maxFrameBytes, ErrorCode.VALUE_TOO_LARGE, 0));
        return true;
    }

    private static long newPublisherId() {
        long id;
        do {
            id = new SecureRandom().nextLong();
        } while (id == 0);
        return id;
    }
}
