package io.ringcast.server.internal;

import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionEncoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringcast.cluster.PublishOutcome;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.TopicPath;
import io.ringcast.protocol.WireCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.DataFormatException;

/**
 * The protocol end of one WebSocket connection, on its event loop: handshake, decoding of each
 * binary frame message by message, validation (paths, selectors, limits) before anything reaches
 * the sequencer, and errors as {@code docs/protocol.md} says. Publishes and subscription changes
 * claim a slot in the inbound ring; when it is full, reading from this socket pauses until there is
 * room (backpressure, never a drop).
 */
final class SessionHandler extends SimpleChannelInboundHandler<WebSocketFrame> implements MessageHandler {
    private static final Logger log = LoggerFactory.getLogger(SessionHandler.class);
    /** How long a connection that just got a fatal error is kept at most, for its peer to read it. */
    private static final long FATAL_CLOSE_GRACE_MS = 1000;
    private static final long RING_FULL_RETRY_US = 100;

    private final ServerContext server;
    private final RingBuffer<InboundEvent> inbound;
    private final PathLimits pathLimits;
    private Session session;
    private ScheduledFuture<?> handshakeTimer;
    /** Frames (or the rest of one) waiting for room in the inbound ring, oldest first. */
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>(2);
    /** Reading stopped until the inbound ring has room. */
    private boolean paused;
    /**
     * Reading stopped until the channel is writable again: a client that reads none of its replies
     * is held back by TCP rather than by a queue that grows with every request it sends.
     */
    private boolean waitingForWritable;
    private boolean wroteControl;
    /** Replies written while decoding, gathered into frames; made when the session opens. */
    private ReplyFrames replies;
    /** The inbound slot claimed for the message being decoded, or -1. */
    private long claimed = -1;
    private boolean closeCommandSent;
    /** A password is being checked off the event loop; the session is not welcomed yet. */
    private boolean authenticating;
    /** {@code limits.publishRatePerSession}, or null when there is none. */
    private final PublishRateLimit publishRate;

    SessionHandler(ServerContext server) {
        super(false); // frames are released here, after the pause logic decided
        this.server = server;
        this.inbound = server.inbound;
        this.pathLimits = server.config.limits().pathLimits();
        int rate = server.config.limits().publishRatePerSession();
        this.publishRate = rate > 0 ? new PublishRateLimit(rate, System.nanoTime()) : null;
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            openSession(ctx);
        } else if (evt instanceof IdleStateEvent && session != null) {
            if (waitingForWritable) {
                // reads are stopped because the client reads nothing: its silence is ours, not its
                if (!((IdleStateEvent) evt).isFirst() && !session.closing) {
                    server.outboundLimit.close(session, "the client read none of " + session.pendingOutboundBytes()
                            + " bytes unsent for session.idleTimeoutMs = " + server.config.session().idleTimeoutMs() + " ms");
                }
            } else if (((IdleStateEvent) evt).isFirst()) {
                // half the timeout without a byte: ask for a pong, which every WebSocket stack sends by
                // itself, even in a browser tab whose timers (and so its PINGs) are throttled
                server.counters.idlePings.increment();
                ctx.writeAndFlush(new PingWebSocketFrame());
            } else {
                fatal(ErrorCode.IDLE_TIMEOUT, "nothing received for session.idleTimeoutMs = "
                        + server.config.session().idleTimeoutMs() + " ms, not even a pong to the server's ping");
            }
        } else {
            super.userEventTriggered(ctx, evt);
        }
    }

    /**
     * Starts the session when the WebSocket upgrade completes, or at its first frame if that comes
     * first: Netty installs the frame decoder before the 101 response is fully written, so under
     * load a client's HELLO can be read before the HandshakeComplete event.
     */
    private void openSession(ChannelHandlerContext ctx) {
        if (session != null) {
            return;
        }
        // upgraded: the HTTP phase's deadline ends and its place among limits.maxConnectionsBeforeUpgrade is released
        if (ctx.pipeline().get(HttpPhaseDeadline.class) != null) {
            ctx.pipeline().remove(HttpPhaseDeadline.class);
        }
        session = new Session(server.nextSessionId(), ctx, server.loopIndexOf(ctx.channel().eventLoop()),
                deflateNegotiated(ctx.pipeline()));
        replies = new ReplyFrames(ctx, server.config.limits().maxFrameBytes());
        int sessions = server.counters.sessions.incrementAndGet();
        server.channels.add(ctx.channel());
        log.info("session {} opened from {}", session, ctx.channel().remoteAddress());
        int maxConnections = server.config.limits().maxConnections();
        if (sessions > maxConnections) {
            fatal(ErrorCode.TOO_MANY_CONNECTIONS, "the server has limits.maxConnections = " + maxConnections
                    + " sessions; try another address or later");
            return;
        }
        handshakeTimer = ctx.executor().schedule(() -> {
            if (!session.welcomed) {
                fatal(ErrorCode.HANDSHAKE_TIMEOUT, "no HELLO within limits.handshakeTimeoutMs = "
                        + server.config.limits().handshakeTimeoutMs() + " ms");
            }
        }, server.config.limits().handshakeTimeoutMs(), TimeUnit.MILLISECONDS);
    }

    /** Whether the upgrade installed permessage-deflate (the only extension the server offers). */
    private static boolean deflateNegotiated(ChannelPipeline pipeline) {
        for (Map.Entry<String, ChannelHandler> handler : pipeline) {
            if (handler.getValue() instanceof WebSocketExtensionEncoder) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (session != null && ctx.channel().isWritable()) {
            server.pollers[session.loopIndex].onWritable(session);
            if (waitingForWritable) {
                waitingForWritable = false;
                updateAutoRead();
            }
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        for (ByteBuf b : pending) {
            b.release();
        }
        pending.clear();
        if (session != null) {
            replies.release();
            session.releaseConflated();
            server.counters.sessions.decrementAndGet();
            server.counters.subscriptions.addAndGet(-session.openSubscriptionIds.size());
            log.info("session {} (client '{}') closed: {}", session, session.clientName,
                    session.closeReason != null ? session.closeReason : "connection closed by the client");
            sendSessionClosed();
        }
        super.channelInactive(ctx);
    }

    /** Tells the sequencer to forget the session; retried on this loop while the ring is full. */
    private void sendSessionClosed() {
        if (closeCommandSent) {
            return;
        }
        try {
            long seq = inbound.tryNext();
            InboundEvent e = inbound.get(seq);
            e.clear();
            e.kind = InboundEvent.SESSION_CLOSED;
            e.session = session;
            inbound.publish(seq);
            closeCommandSent = true;
        } catch (InsufficientCapacityException full) {
            session.channel.eventLoop().schedule(this::sendSessionClosed, RING_FULL_RETRY_US, TimeUnit.MICROSECONDS);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        FatalErrors.haltIfFatal(cause, "event loop " + Thread.currentThread().getName());
        if (session == null) {
            log.debug("connection {} failed before the WebSocket handshake: {}", ctx.channel().remoteAddress(),
                    cause.toString());
            ctx.close();
        } else if (cause instanceof CorruptedWebSocketFrameException
                && ((CorruptedWebSocketFrameException) cause).closeStatus().code()
                        == WebSocketCloseStatus.MESSAGE_TOO_BIG.code()
                || cause instanceof TooLongFrameException) {
            fatal(ErrorCode.FRAME_TOO_LARGE, "frame larger than limits.maxFrameBytes = "
                    + server.config.limits().maxFrameBytes() + " (" + cause.getMessage() + ")");
        } else if (cause instanceof DecompressionException) {
            // Netty's inflater throws this one type both for its maxAllocation and for bad data
            if (cause.getCause() instanceof DataFormatException) {
                fatal(ErrorCode.MALFORMED_FRAME, "bad permessage-deflate data: " + cause.getCause().getMessage());
            } else {
                fatal(ErrorCode.FRAME_TOO_LARGE, "permessage-deflate message inflates to more than "
                        + "limits.maxFrameBytes = " + server.config.limits().maxFrameBytes());
            }
        } else if (cause instanceof CorruptedFrameException) {
            fatal(ErrorCode.MALFORMED_FRAME, "bad WebSocket frame: " + cause.getMessage());
        } else if (cause instanceof IOException) {
            if (session.closeReason == null) {
                session.closeReason = "I/O error: " + cause.getMessage();
            }
            ctx.close();
        } else {
            log.error("session {} failed", session, cause);
            fatal(ErrorCode.INTERNAL_ERROR, "internal error: " + cause);
        }
    }

    /** Tells the client the server is stopping and closes. The channel's event loop only. */
    void shutdown() {
        if (session != null) {
            closeWithError(session, ErrorCode.SERVER_SHUTDOWN, "the server is stopping", FATAL_CLOSE_GRACE_MS);
        }
    }

    // ------------------------------------------------------------------ frames

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
        openSession(ctx);
        if (session.closing) {
            frame.release();
            return;
        }
        if (frame instanceof TextWebSocketFrame) {
            frame.release();
            fatal(ErrorCode.TEXT_FRAME_NOT_SUPPORTED, "text frame received; Ringcast messages travel in binary frames");
            return;
        }
        if (!(frame instanceof BinaryWebSocketFrame)) {
            frame.release(); // ping and close are answered by the WebSocket layer; a pong only counts as traffic
            return;
        }
        if (frame.rsv() != 0) {
            // a negotiated permessage-deflate decoder clears RSV1 of what it decompressed
            int rsv = frame.rsv();
            frame.release();
            fatal(ErrorCode.MALFORMED_FRAME, "frame with reserved bits 0x" + Integer.toHexString(rsv << 4)
                    + " set, but no extension that defines them was negotiated on this connection");
            return;
        }
        ByteBuf content = frame.content();
        server.counters.receivedBytes.add(content.readableBytes());
        if (paused) {
            pending.addLast(content);
            return;
        }
        if (!content.isReadable()) {
            content.release();
            fatal(ErrorCode.MALFORMED_FRAME, "empty frame: a frame holds at least one message");
            return;
        }
        if (decodeFrom(content)) {
            content.release();
        } else {
            pending.addLast(content);
            pause();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flushReplies();
        if (session != null && !ctx.channel().isWritable() && !waitingForWritable) {
            waitingForWritable = true;
            updateAutoRead();
        }
        ctx.fireChannelReadComplete();
    }

    /**
     * Reads unless the inbound ring is full or replies wait unwritten; a closing session reads (and
     * drops) whatever comes, until its peer closes (see {@link #closeWithError}).
     */
    private void updateAutoRead() {
        session.channel.config().setAutoRead(session.closing || !paused && !waitingForWritable);
    }

    /**
     * Decodes messages until the frame is done or the inbound ring is full.
     *
     * @return true when the frame was consumed (or the session failed), false when it must wait for room
     */
    private boolean decodeFrom(ByteBuf content) {
        while (content.isReadable() && !session.closing) {
            byte type = WireCodec.peekType(content);
            boolean needsSlot = type == MessageType.PUBLISH || type == MessageType.REPUBLISH
                    || type == MessageType.SUBSCRIBE || type == MessageType.UNSUBSCRIBE;
            if (needsSlot && session.welcomed) {
                try {
                    claimed = inbound.tryNext();
                } catch (InsufficientCapacityException full) {
                    return false;
                }
                inbound.get(claimed).clear();
            }
            try {
                WireCodec.decodeOne(content, this);
            } catch (ProtocolException e) {
                fatal(e.code(), e.reason());
            } finally {
                if (claimed >= 0) {
                    inbound.publish(claimed); // a claimed slot is always published, as NOOP if refused
                    claimed = -1;
                }
            }
        }
        return true;
    }

    private void pause() {
        paused = true;
        updateAutoRead();
        session.channel.eventLoop().schedule(this::resume, RING_FULL_RETRY_US, TimeUnit.MICROSECONDS);
    }

    private void resume() {
        paused = false;
        while (!pending.isEmpty()) {
            if (session.closing) {
                pending.poll().release();
                continue;
            }
            ByteBuf head = pending.peekFirst();
            if (!decodeFrom(head)) {
                pause();
                return;
            }
            pending.pollFirst().release();
        }
        flushReplies();
        waitingForWritable = !session.channel.isWritable();
        updateAutoRead();
    }

    // ------------------------------------------------------------------ messages (MessageHandler)

    @Override
    public void onHello(int version, String clientName, Credentials credentials, long publisherId)
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
        if (!Authenticator.slow(credentials)) {
            authenticated(credentials);
            return;
        }
        // a password hash takes tens of milliseconds: never on an event loop
        authenticating = true;
        ChannelHandlerContext ctx = session.ctx;
        try {
            server.authExecutor.execute(() -> {
                Permissions granted;
                try {
                    granted = server.authenticator.authenticate(credentials);
                } catch (Authenticator.Refused refused) {
                    ctx.executor().execute(() -> refuseLogin(credentials, refused.getMessage()));
                    return;
                }
                ctx.executor().execute(() -> welcome(granted));
            });
        } catch (RejectedExecutionException busy) {
            refuseLogin(credentials, "the server is busy checking other logins; try again");
        }
    }

    /** Quick credentials (anonymous, token): checked here, on the event loop. */
    private void authenticated(Credentials credentials) {
        try {
            welcome(server.authenticator.authenticate(credentials));
        } catch (Authenticator.Refused refused) {
            refuseLogin(credentials, refused.getMessage());
        }
    }

    private void refuseLogin(Credentials credentials, String reason) {
        authenticating = false;
        if (session.closing) {
            return;
        }
        log.info("session {} (client '{}'): login with {} refused: {}", session, session.clientName, credentials, reason);
        fatal(ErrorCode.AUTHENTICATION_FAILED, "authentication failed: " + reason);
    }

    private void welcome(Permissions granted) {
        authenticating = false;
        if (session.closing) {
            return;
        }
        session.permissions = granted;
        session.welcomed = true;
        handshakeTimer.cancel(false);
        WireCodec.writeWelcome(replies.room(64), WireCodec.VERSION, session.name,
                server.config.limits().maxFrameBytes(), (int) server.config.session().idleTimeoutMs());
        replied();
        flushReplies(); // the answer may come from the login executor, outside a read
        log.debug("session {} welcomed client '{}' as {}", session, session.clientName, granted.who());
    }

    @Override
    public void onSubscribe(int subscriptionId, String selectorText, Map<String, Long> resume)
            throws ProtocolException {
        requireWelcome(MessageType.SUBSCRIBE);
        Selector selector;
        try {
            selector = Selector.parse(selectorText, pathLimits);
        } catch (ProtocolException e) {
            refuse(e.code(), subscriptionId, e.reason());
            return;
        }
        if (!session.permissions.mayEverRead(selector)) {
            refuse(ErrorCode.PERMISSION_DENIED, subscriptionId, "subscription to '" + selectorText + "' refused: "
                    + session.permissions.who() + " may read no topic it could match");
            return;
        }
        if (subscriptionId == 0 || session.openSubscriptionIds.contains(subscriptionId)) {
            refuse(ErrorCode.DUPLICATE_SUBSCRIPTION_ID, subscriptionId, "subscription id " + subscriptionId
                    + (subscriptionId == 0 ? " is reserved" : " is already open on this session"));
            return;
        }
        int max = server.config.limits().maxSubscriptionsPerSession();
        if (session.openSubscriptionIds.size() >= max) {
            refuse(ErrorCode.TOO_MANY_SUBSCRIPTIONS, subscriptionId, "session already has " + max
                    + " subscriptions, the limit limits.maxSubscriptionsPerSession");
            return;
        }
        session.openSubscriptionIds.add(subscriptionId);
        server.counters.subscriptions.incrementAndGet();
        InboundEvent e = claimedEvent(InboundEvent.SUBSCRIBE, subscriptionId);
        e.selector = selector;
        e.resume = resume;
    }

    @Override
    public void onUnsubscribe(int subscriptionId) throws ProtocolException {
        requireWelcome(MessageType.UNSUBSCRIBE);
        if (session.openSubscriptionIds.remove(subscriptionId)) {
            server.counters.subscriptions.decrementAndGet();
            claimedEvent(InboundEvent.UNSUBSCRIBE, subscriptionId);
        }
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
            segments = TopicPath.validate(topicPath, pathLimits);
        } catch (ProtocolException e) {
            refuse(e.code(), correlationId, e.reason());
            return;
        }
        if (!session.permissions.mayPublish(segments)) {
            refuse(ErrorCode.PERMISSION_DENIED, correlationId, "publish to '" + topicPath + "' refused: "
                    + session.permissions.who() + " may not publish there");
            return;
        }
        boolean overRate = publishRate != null && !publishRate.tryAcquire(System.nanoTime());
        // a publish sent again may have been applied the first time: the sequencer's ledger answers
        // it honestly, and the rate only keeps it from being applied now
        if (overRate && !(republish && session.publisherId != 0 && server.cluster == null)) {
            refuse(ErrorCode.PUBLISH_RATE_EXCEEDED, correlationId, "publish to '" + topicPath + "' refused: over "
                    + "limits.publishRatePerSession = " + server.config.limits().publishRatePerSession() + " per second");
            return;
        }
        int maxValueBytes = server.config.limits().maxValueBytes();
        if (valueLength > maxValueBytes) {
            refuse(ErrorCode.VALUE_TOO_LARGE, correlationId, "value of " + valueLength + " bytes for '" + topicPath
                    + "' is over limits.maxValueBytes = " + maxValueBytes);
            return;
        }
        // the update, with a TOPIC message in front, must fit in one frame for every subscriber
        int outBytes = valueLength + WireCodec.SNAPSHOT_OVERHEAD_BYTES + WireCodec.HEADER_BYTES + 6
                + topicPath.length() * 3;
        if (outBytes > server.config.limits().maxFrameBytes()) {
            refuse(ErrorCode.VALUE_TOO_LARGE, correlationId, "value of " + valueLength + " bytes for '" + topicPath
                    + "' would not fit in a frame of limits.maxFrameBytes = " + server.config.limits().maxFrameBytes());
            return;
        }
        if (server.cluster != null) {
            // the partition's owner sequences it, on whichever node; the claimed slot stays a NOOP
            byte[] value = new byte[valueLength];
            frame.getBytes(valueIndex, value);
            // with a publisher id the owner recognises a publish sent again, whichever node it came through
            server.cluster.publish(topicPath, value, session.publisherId, correlationId,
                    (outcome, sequence) -> session.ctx.executor().execute(
                    () -> answerClusterPublish(correlationId, topicPath, outcome, sequence)));
            return;
        }
        InboundEvent e = claimedEvent(InboundEvent.PUBLISH, correlationId);
        e.receivedNanos = System.nanoTime();
        e.path = topicPath;
        e.segments = segments;
        e.value = frame.retainedSlice(valueIndex, valueLength);
        e.republish = republish;
        e.overRate = overRate;
    }

    @Override
    public void onPing(long nonce) throws ProtocolException {
        requireWelcome(MessageType.PING);
        server.counters.clientPings.increment();
        WireCodec.writePong(replies.room(WireCodec.HEADER_BYTES + 8), nonce);
        replied();
    }

    /** The inbound slot claimed for the message being decoded, filled with what every command has. */
    private InboundEvent claimedEvent(int kind, int id) {
        assert claimed >= 0 : "a command message without a claimed inbound slot";
        InboundEvent e = inbound.get(claimed);
        e.kind = kind;
        e.session = session;
        e.id = id;
        return e;
    }

    private void requireWelcome(byte type) throws ProtocolException {
        if (!session.welcomed) {
            throw new ProtocolException(ErrorCode.HANDSHAKE_REQUIRED, MessageType.name(type)
                    + " before HELLO: the first message of a session must be HELLO");
        }
    }

    /** A non-fatal error for one request; the session stays open. */
    /** The cluster's answer to a publish of this session. Event loop. */
    private void answerClusterPublish(int correlationId, String topicPath, PublishOutcome outcome, long sequence) {
        if (session.closing || !session.channel.isActive()) {
            return;
        }
        switch (outcome) {
            case ACKED: {
                WireCodec.writePublishAck(replies.room(WireCodec.HEADER_BYTES + 12), correlationId, sequence);
                replied();
                break;
            }
            case NO_MAJORITY:
                refuse(ErrorCode.NO_MAJORITY, correlationId, "publish to '" + topicPath + "' refused: node '"
                        + server.cluster.settings().nodeName() + "' is on the minority side of a split (fewer than "
                        + server.cluster.settings().majority() + " of " + server.cluster.settings().members().size()
                        + " members in its view); publish through another node");
                break;
            default:
                refuse(ErrorCode.REPLICATION_TIMEOUT, correlationId, "publish to '" + topicPath + "' not confirmed by "
                        + "its partition's owner and backup within cluster.replicationTimeoutMs = "
                        + server.config.cluster().replicationTimeoutMs() + "; it may or may not have been applied");
                break;
        }
        flushReplies(); // outside a read: nothing else will
    }

    private void refuse(ErrorCode code, int correlationId, String reason) {
        server.counters.error(code);
        WireCodec.writeError(replies.room(64 + reason.length() * 3), code, correlationId, reason);
        replied();
    }

    /**
     * A reply was gathered ({@link ReplyFrames}), to go out at the end of the read. It counts
     * against {@code limits.outboundQueueBytes} like an update: past it the session is closed as a
     * slow consumer, which also ends the decoding of the frame that asked for it.
     */
    private void replied() {
        wroteControl = true;
        if (!server.outboundLimit.closeIfOver(session, replies.gatheredBytes()) && !waitingForWritable
                && !session.channel.isWritable()) {
            waitingForWritable = true; // no more reads in this batch: what is read already is still decoded
            updateAutoRead();
        }
    }

    /** Hands the gathered replies to the channel and flushes; a closing session's are dropped. */
    private void flushReplies() {
        if (!wroteControl) {
            return;
        }
        wroteControl = false;
        if (session.closing) {
            replies.release();
        } else {
            replies.write();
            session.ctx.flush();
        }
    }

    private void fatal(ErrorCode code, String reason) {
        server.counters.error(code);
        if (!session.closing) {
            replies.write(); // the replies before it go out before the ERROR
        }
        closeWithError(session, code, reason, FATAL_CLOSE_GRACE_MS);
    }

    /**
     * Sends {@code ERROR} and a WebSocket close frame with the code's close status, stops all
     * further writes to the session, and closes the connection once they are flushed or after
     * {@code graceMs}, whichever comes first. Idempotent. The session's event loop only.
     */
    static void closeWithError(Session session, ErrorCode code, String reason, long graceMs) {
        assert session.channel.eventLoop().inEventLoop();
        if (session.closing) {
            return;
        }
        session.closing = true;
        session.closeReason = code + ": " + reason;
        ChannelHandlerContext ctx = session.ctx;
        if (!session.channel.isActive()) {
            return;
        }
        session.channel.config().setAutoRead(true); // read and drop, even if reading was paused
        ByteBuf out = OutboundFrame.allocate(ctx.alloc(), 64 + reason.length() * 3);
        WireCodec.writeError(out, code, 0, reason);
        ctx.write(OutboundFrame.finish(out), ctx.voidPromise());
        String closeText = code.name();
        // Half-close once they are out, and go on reading (and dropping: the session is closing) until
        // the peer closes or the grace ends. Closing at once with input still unread, such as the rest
        // of an oversized frame, makes the kernel send a reset, which can destroy the ERROR and the
        // close frame in the peer's receive buffer before it reads them.
        ctx.writeAndFlush(new CloseWebSocketFrame(code.closeCode(), closeText)).addListener(written -> {
            if (written.isSuccess() && session.channel instanceof SocketChannel socket && socket.isActive()) {
                socket.shutdownOutput();
            } else {
                session.channel.close();
            }
        });
        ctx.executor().schedule(() -> {
            if (session.channel.isActive()) {
                session.channel.close();
            }
        }, Math.max(graceMs, 1), TimeUnit.MILLISECONDS);
    }
}
