package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.log.PublishingSessions;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.TopicPath;
import io.ringcast.protocol.WireCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What each request of one session's client does, as {@link SessionHandler} decodes it: the
 * {@code HELLO} goes to the {@link Login} (within {@code limits.handshakeTimeoutMs}); a publish or a
 * subscription climbs its checks ({@link PublishChecks}, {@link SubscribeChecks}) and then fills the
 * inbound slot the handler claimed for it ({@link SequencerProxy}), or in a cluster goes to the
 * Raft group's log ({@link ClusterRoute}, which acks it through the sequencer, as a single node's
 * publish, once this node applied it); a refusal is an {@code ERROR} for that request alone
 * ({@link SessionReplies}); a {@code PING} gets its {@code PONG}.
 *
 * <p>Thread contract: the session's event loop only.
 */
final class SessionRequests implements MessageHandler, Login.Outcome {
    private static final Logger log = LoggerFactory.getLogger(SessionRequests.class);

    private final SessionServices node;
    private final Session session;
    private final SessionReplies replies;
    private final PublishChecks publishChecks;
    /** The {@code HELLO}'s deadline; null for a session welcomed by its caller. */
    private final ScheduledFuture<?> handshakeTimer;
    /** The inbound slot claimed for the message being decoded, or {@link SequencerProxy#RING_FULL}. */
    private long claimed = SequencerProxy.RING_FULL;
    /** A password is being checked off the event loop; the session is not welcomed yet. */
    private boolean authenticating;

    /**
     * A WebSocket session's requests: starts its handshake deadline, a {@code HELLO} within
     * {@code limits.handshakeTimeoutMs}.
     */
    SessionRequests(SessionServices node, Session session, SessionReplies replies) {
        this(node, session, replies, new PublishChecks(node.limits(), node.clusterRoute() != null, System.nanoTime()),
                session.ctx.executor().schedule(() -> {
                    if (!session.welcomed) {
                        replies.fatal(ErrorCode.HANDSHAKE_TIMEOUT, "no HELLO within limits.handshakeTimeoutMs = "
                                + node.limits().handshakeTimeoutMs() + " ms");
                    }
                }, node.limits().handshakeTimeoutMs(), TimeUnit.MILLISECONDS));
    }

    /**
     * The requests of a session its caller logged in and welcomed already ({@link HttpPublisher}):
     * no {@code HELLO} comes, so no handshake deadline runs; its publishes climb {@code publishChecks},
     * which the caller may share between sessions of one connection (its rate bucket with them).
     */
    SessionRequests(SessionServices node, Session session, SessionReplies replies, PublishChecks publishChecks) {
        this(node, session, replies, publishChecks, null);
        assert session.welcomed && session.permissions != null : "a session welcomed by its caller";
    }

    private SessionRequests(SessionServices node, Session session, SessionReplies replies, PublishChecks publishChecks,
                            ScheduledFuture<?> handshakeTimer) {
        this.node = node;
        this.session = session;
        this.replies = replies;
        this.publishChecks = publishChecks;
        this.handshakeTimer = handshakeTimer;
    }

    /**
     * Decodes the next message of {@code content} and does what it asks. A command for the
     * sequencer first claims its inbound slot, published whatever happens (as NOOP if refused); a
     * publish in a cluster is none (its group's log sequences it): it claims no slot and first finds
     * room in the cluster's queue. The one place a session's message meets the ring, for a
     * WebSocket's frames ({@link SessionHandler}) and for an HTTP publish's ({@link HttpPublisher}).
     *
     * @return false when the ring (or the cluster's queue) is full: nothing was read, the caller
     *         retries later
     */
    boolean decodeNext(ByteBuf content) throws ProtocolException {
        byte type = WireCodec.peekType(content);
        boolean clusterPublish = isPublish(type) && node.clusterRoute() != null;
        if (session.welcomed && clusterPublish && !node.clusterRoute().hasRoom()) {
            return false;
        }
        long slot = SequencerProxy.RING_FULL;
        if (session.welcomed && needsSlot(type) && !clusterPublish) {
            slot = node.sequencer().tryClaim();
            if (slot == SequencerProxy.RING_FULL) {
                return false;
            }
        }
        claimed = slot;
        try {
            WireCodec.decodeOne(content, this);
        } finally {
            claimed = SequencerProxy.RING_FULL;
            if (slot != SequencerProxy.RING_FULL) {
                node.sequencer().commit(slot);
            }
        }
        return true;
    }

    private static boolean isPublish(byte type) {
        return type == MessageType.PUBLISH || type == MessageType.REPUBLISH;
    }

    /** Whether a message of this type is a command for the sequencer, which needs an inbound slot. */
    private static boolean needsSlot(byte type) {
        return type == MessageType.PUBLISH || type == MessageType.REPUBLISH
                || type == MessageType.SUBSCRIBE || type == MessageType.UNSUBSCRIBE || type == MessageType.REMOVE;
    }

    /** The connection closed: the handshake deadline no longer matters. */
    void closed() {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
    }

    @Override
    public void onHello(int version, String clientName, Credentials credentials, long publisherId, long connection)
            throws ProtocolException {
        if (session.welcomed || authenticating) {
            throw new ProtocolException(ErrorCode.HANDSHAKE_REQUIRED, "second HELLO on session " + session);
        }
        if (version != WireCodec.VERSION) {
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, "client speaks protocol version " + version
                    + "; this server speaks version " + WireCodec.VERSION);
        }
        session.clientName = clientName;
        session.publisherId = publisherId;
        if (publisherId != 0 && connection != 0) {
            session.publishingSession = PublishingSessions.of(connection);
        }
        authenticating = true;
        node.login().check(credentials, session.ctx.executor(), this);
    }

    /** The login refused the credentials ({@link Login}). */
    @Override
    public void refused(Credentials credentials, String reason) {
        authenticating = false;
        if (session.closing) {
            return;
        }
        log.info("session {} (client '{}'): login with {} refused: {}", session, session.clientName, credentials, reason);
        replies.fatal(ErrorCode.AUTHENTICATION_FAILED, "authentication failed: " + reason);
    }

    /** The login granted {@code permissions} ({@link Login}): the session is welcomed. */
    @Override
    public void granted(Permissions permissions) {
        authenticating = false;
        if (session.closing) {
            return;
        }
        String heapRefusal = node.sessions().heapRefusal(permissions.who());
        if (heapRefusal != null) {
            log.info("session {} (client '{}'): {}", session, session.clientName, heapRefusal);
            replies.fatal(ErrorCode.TOO_MANY_CONNECTIONS, heapRefusal);
            return;
        }
        if (!node.sessions().admit(permissions.who())) {
            log.info("session {} (client '{}'): {} refused, at limits.maxConnectionsPerPrincipal", session,
                    session.clientName, permissions.who());
            replies.fatal(ErrorCode.TOO_MANY_CONNECTIONS, permissions.who() + " has "
                    + node.sessions().maxPerPrincipal() + " sessions open, its share of the server"
                    + " (limits.maxConnectionsPerPrincipal); try later or log in");
            return;
        }
        session.permissions = permissions;
        session.welcomed = true;
        handshakeTimer.cancel(false); // a HELLO came: this is a WebSocket session's
        replies.welcome(node.limits().maxFrameBytes(), (int) node.idleTimeoutMs());
        replies.flush(); // the answer may come from the login executor, outside a read
        log.debug("session {} welcomed client '{}' as {}", session, session.clientName, permissions.who());
    }

    /**
     * A {@code SUBSCRIBE}: refused at the first fault of its selector, options ({@link
     * SubscribeChecks#options}), the ladder ({@link SubscribeChecks#check}), the node's and the
     * principal's counts ({@link OpenSessions#takeSubscription}) or what it keeps ({@link SubscribeMemory}),
     * else opened by the sequencer, with its view ({@link Views#acquire}) when its options make one.
     */
    @Override
    public void onSubscribe(int subscriptionId, String selectorText, Map<String, Long> resume,
                            SubscribeOptions options) throws ProtocolException {
        requireWelcome(MessageType.SUBSCRIBE);
        Selector selector;
        try {
            selector = Selector.parse(selectorText, node.limits().pathLimits());
        } catch (ProtocolException e) {
            replies.refuse(e.code(), subscriptionId, e.reason());
            return;
        }
        Verdict verdict = node.subscribeChecks().options(options);
        if (verdict.passed()) {
            verdict = node.subscribeChecks().check(session, subscriptionId, selector, selectorText);
        }
        if (verdict.passed()) {
            verdict = node.sessions().takeSubscription(session, selectorText);
        }
        if (!verdict.passed()) {
            replies.refuse(verdict, subscriptionId);
            return;
        }
        long requestBytes = SubscribeMemory.requestBytes(resume);
        verdict = node.subscribeChecks().memory().charge(session, requestBytes);
        if (!verdict.passed()) {
            node.sessions().giveSubscription(session);
            replies.refuse(verdict, subscriptionId);
            return;
        }
        View view = null;
        if (options.makesView()) {
            View.Key key = View.Key.of(options);
            verdict = node.subscribeChecks().view(session, key);
            if (verdict.passed()) {
                view = node.subscribeChecks().views().acquire(options, session.permissions.who());
                if (view == null) {
                    verdict = node.subscribeChecks().noViewLeft(session, selectorText);
                }
            }
            if (!verdict.passed()) {
                node.subscribeChecks().memory().credit(session, requestBytes); // never handed on
                node.sessions().giveSubscription(session);
                replies.refuse(verdict, subscriptionId);
                return;
            }
            session.openViews.put(subscriptionId, key);
        }
        session.openSubscriptionIds.add(subscriptionId); // counted by takeSubscription
        node.sequencer().fillSubscribe(claimedSlot(), session, subscriptionId, selector, resume, view, options);
    }

    /** A {@code SUBSCRIBE} whose options block the codec found well framed but wrong ({@code INVALID_OPTIONS}). */
    @Override
    public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) throws ProtocolException {
        requireWelcome(MessageType.SUBSCRIBE);
        replies.refuse(code, subscriptionId, reason);
    }

    @Override
    public void onUnsubscribe(int subscriptionId) throws ProtocolException {
        requireWelcome(MessageType.UNSUBSCRIBE);
        if (session.openSubscriptionIds.remove(subscriptionId)) {
            session.openViews.remove(subscriptionId);
            node.sessions().giveSubscription(session);
            node.sequencer().fillUnsubscribe(claimedSlot(), session, subscriptionId);
        }
    }

    /**
     * A {@code REMOVE}: refused for a bad selector, or one that can match nothing the session may
     * publish to; else the sequencer removes what it matches that the session may publish to.
     */
    @Override
    public void onRemove(int correlationId, String selectorText) throws ProtocolException {
        requireWelcome(MessageType.REMOVE);
        Selector selector;
        try {
            selector = Selector.parse(selectorText, node.limits().pathLimits());
        } catch (ProtocolException e) {
            replies.refuse(e.code(), correlationId, e.reason());
            return;
        }
        if (!session.permissions.mayEverPublish(selector)) {
            replies.refuse(ErrorCode.PERMISSION_DENIED, correlationId, "remove of '" + selectorText
                    + "' refused: the session's roles grant publishing to no topic it can match");
            return;
        }
        ClusterRoute cluster = node.clusterRoute();
        // in a cluster the sequencer finds what it matches here, and the logs remove it on every node
        node.sequencer().fillRemove(claimedSlot(), session, correlationId, selector, cluster == null ? null
                : paths -> session.ctx.executor().execute(() -> cluster.remove(session, selectorText, paths,
                        (removed, refusal) -> removedByCluster(correlationId, removed, refusal))));
    }

    /** The cluster's answer to a {@code REMOVE}. Event loop. */
    private void removedByCluster(int correlationId, int removed, Verdict refusal) {
        if (session.closing) {
            return;
        }
        if (refusal != null) {
            replies.refuse(refusal, correlationId);
        } else {
            replies.removed(correlationId, removed);
        }
        replies.flush();
    }

    @Override
    public void onPublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        requireWelcome(MessageType.PUBLISH);
        publish(correlationId, topicPath, frame, valueIndex, valueLength, false);
    }

    @Override
    public void onRepublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        requireWelcome(MessageType.REPUBLISH);
        publish(correlationId, topicPath, frame, valueIndex, valueLength, true);
    }

    /** A publish, or with {@code republish} one sent again (applied once per publisher id and correlation id). */
    private void publish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength,
                         boolean republish) {
        String[] segments;
        try {
            segments = TopicPath.validate(topicPath, node.limits().pathLimits());
        } catch (ProtocolException e) {
            replies.refuse(e.code(), correlationId, e.reason());
            return;
        }
        Verdict verdict = publishChecks.check(session, topicPath, segments, valueLength, republish, System.nanoTime());
        if (!verdict.passed()) {
            replies.refuse(verdict, correlationId);
        } else if (node.clusterRoute() != null) {
            // the group's log sequences it (no inbound slot was claimed). decodeNext asked hasRoom
            // before decoding, so a full queue here is a race past ClusterNode.ROOM_RESERVE: refused
            if (session.clusterPublishesStopped) {
                // an earlier one was refused unapplied: this one must not be applied before it is sent again
                replies.refuse(node.clusterRoute().stopped(topicPath), correlationId);
            } else if (!node.clusterRoute().publish(session, correlationId, topicPath, frame, valueIndex, valueLength,
                    republish, this::refusedByCluster)) {
                session.clusterPublishesStopped = true;
                replies.refuse(node.clusterRoute().noMajority(topicPath), correlationId);
            }
        } else {
            node.sequencer().fillPublish(claimedSlot(), session, correlationId, topicPath, segments,
                    frame.retainedSlice(valueIndex, valueLength), republish, verdict == Verdict.PASSED_OVER_RATE);
        }
    }

    /** The cluster refused a publish of this session (an acked one is acked by the sequencer). Event loop. */
    private void refusedByCluster(int correlationId, Verdict refusal) {
        if (session.closing || !session.channel.isActive()) {
            return;
        }
        replies.refuse(refusal, correlationId);
        replies.flush(); // outside a read: nothing else will
    }

    @Override
    public void onPing(long nonce) throws ProtocolException {
        requireWelcome(MessageType.PING);
        node.counters().clientPings.increment();
        replies.pong(nonce);
    }

    /** The inbound slot claimed for the command being decoded. */
    private long claimedSlot() {
        assert claimed != SequencerProxy.RING_FULL : "a command message without a claimed inbound slot";
        return claimed;
    }

    private void requireWelcome(byte type) throws ProtocolException {
        if (!session.welcomed) {
            throw new ProtocolException(ErrorCode.HANDSHAKE_REQUIRED, MessageType.name(type)
                    + " before HELLO: the first message of a session must be HELLO");
        }
    }
}
