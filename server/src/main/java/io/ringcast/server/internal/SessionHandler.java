package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionEncoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.WireCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The protocol end of one WebSocket connection, the last stage of its pipeline: opens the session
 * at the upgrade, refuses frames that are not binary Ringcast frames, decodes each binary frame
 * message by message into {@link SessionRequests} (which does what each asks), and pauses and
 * resumes reading. A message that is a command for the sequencer claims a slot of the inbound ring
 * ({@link SequencerProxy#tryClaim}) before it is decoded; when the ring is full, reading from this
 * socket pauses until there is room (backpressure, never a drop). It also turns idleness, failures
 * and the close into what {@code docs/protocol.md} says. Replies go through {@link SessionReplies}.
 *
 * <p>Thread contract: the channel's event loop only, like every Netty handler.
 */
final class SessionHandler extends SimpleChannelInboundHandler<WebSocketFrame> {
    private static final Logger log = LoggerFactory.getLogger(SessionHandler.class);
    /**
     * The most bytes of messages a session decodes before its event loop serves its other channels:
     * a large {@code SUBSCRIBE}'s resume list takes milliseconds to decode, and a client sending them
     * back to back held a loop, and every session on it, for a third of a second.
     */
    static final int TURN_BYTES = 256 * 1024;

    private final SessionServices node;
    private final SequencerProxy sequencer;
    private Session session;
    private SessionReplies replies;
    private SessionRequests requests;
    /** When the session opened, for its one INFO line, written at its close. */
    private long openedNanos;
    /** Frames (or the rest of one) waiting for room in the inbound ring, oldest first. */
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>(2);
    /** Reading stopped until the inbound ring has room, or until the loop served others ({@link #TURN_BYTES}). */
    private boolean paused;
    /** Bytes of messages decoded since the end of the last read burst or pause. */
    private long decodedThisTurn;
    /**
     * Reading stopped until the channel is writable again: a client that reads none of its replies
     * is held back by TCP rather than by a queue that grows with every request it sends.
     */
    private boolean waitingForWritable;

    SessionHandler(SessionServices node) {
        super(false); // frames are released here, after the pause logic decided
        this.node = node;
        this.sequencer = node.sequencer();
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            openSession(ctx);
        } else if (evt instanceof IdleStateEvent && session != null) {
            idle(ctx, ((IdleStateEvent) evt).isFirst());
        } else {
            super.userEventTriggered(ctx, evt);
        }
    }

    private void idle(ChannelHandlerContext ctx, boolean firstTime) {
        if (waitingForWritable) {
            // reads are stopped because the client reads nothing: its silence is ours, not its
            if (!firstTime && !session.closing) {
                node.outboundLimit().close(session, "the client read none of " + session.pendingOutboundBytes()
                        + " bytes unsent for session.idleTimeoutMs = " + node.idleTimeoutMs() + " ms");
            }
        } else if (firstTime) {
            // half the timeout without a byte: ask for a pong, which every WebSocket stack sends by
            // itself, even in a browser tab whose timers (and so its PINGs) are throttled
            node.counters().idlePings.increment();
            ctx.writeAndFlush(new PingWebSocketFrame());
        } else {
            replies.fatal(ErrorCode.IDLE_TIMEOUT, "nothing received for session.idleTimeoutMs = "
                    + node.idleTimeoutMs() + " ms, not even a pong to the server's ping");
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
        // a connection that published over HTTP before its upgrade: the session's frames must not pass it
        if (ctx.pipeline().get(HttpPublisher.class) != null) {
            ctx.pipeline().remove(HttpPublisher.class);
        }
        session = node.sessions().newSession(ctx, deflateNegotiated(ctx.pipeline()));
        session.continueReplies = this::sendContinueReplies;
        replies = new SessionReplies(session, node.limits().maxFrameBytes(), node.outboundLimit(), node.counters(),
                this::holdReadsUntilWritable);
        int sessions = node.sessions().add(session);
        openedNanos = System.nanoTime();
        // at DEBUG: 10,000 clients connecting made 10,000 lines on the threads that serve them; the
        // close line says it all once (the channel keeps its remote address after the close)
        log.debug("session {} opened from {}", session, ctx.channel().remoteAddress());
        int maxConnections = node.limits().maxConnections();
        if (sessions > maxConnections) {
            replies.fatal(ErrorCode.TOO_MANY_CONNECTIONS, "the server has limits.maxConnections = " + maxConnections
                    + " sessions; try another address or later");
            return;
        }
        requests = new SessionRequests(node, session, replies);
    }

    /** Whether the upgrade installed permessage-deflate (the only extension the server offers). */
    private static boolean deflateNegotiated(ChannelPipeline pipeline) {
        return pipeline.get(WebSocketExtensionEncoder.class) != null; // walks the contexts; iterating copied them into a map
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (session != null && ctx.channel().isWritable()) {
            node.sessions().pollerOf(session).onWritable(session);
            if (waitingForWritable) {
                waitingForWritable = false;
                updateAutoRead();
            }
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (requests != null) {
            requests.closed();
        }
        for (ByteBuf b : pending) {
            b.release();
        }
        pending.clear();
        if (session != null) {
            replies.release();
            session.releaseConflated();
            session.releaseHeldForReply();
            node.sessions().remove(session);
            if (log.isInfoEnabled()) {
                log.info("session {} (client '{}') from {} closed after {} ms: {}", session, session.clientName,
                        ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - openedNanos),
                        session.closeReason != null ? session.closeReason : "connection closed by the client");
            }
            sequencer.sessionClosed(session);
        }
        super.channelInactive(ctx);
    }

    /**
     * Asks the sequencer for the next window of the session's streamed subscribe reply; retried on
     * this loop while the ring is full. Not once the session is closing: its close drops the reply.
     */
    private void sendContinueReplies() {
        if (session.closing || !session.channel.isActive()) {
            return;
        }
        if (!sequencer.tryContinueReplies(session)) {
            session.channel.eventLoop().schedule(this::sendContinueReplies, SequencerProxy.RING_FULL_RETRY_US, TimeUnit.MICROSECONDS);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        FatalErrors.haltIfFatal(cause, "event loop " + Thread.currentThread().getName());
        Verdict frameError = FrameErrors.of(cause, node.limits().maxFrameBytes());
        if (session == null) {
            log.debug("connection {} failed before the WebSocket handshake: {}", ctx.channel().remoteAddress(),
                    cause.toString());
            ctx.close();
        } else if (frameError != null) {
            replies.fatal(frameError);
        } else if (cause instanceof IOException) {
            if (session.closeReason == null) {
                session.closeReason = "I/O error: " + cause.getMessage();
            }
            ctx.close();
        } else {
            log.error("session {} failed", session, cause);
            replies.fatal(ErrorCode.INTERNAL_ERROR, "internal error: " + cause);
        }
    }

    /** Tells the client the server is stopping and closes. The channel's event loop only. */
    void shutdown() {
        if (session != null) {
            session.closeWithError(ErrorCode.SERVER_SHUTDOWN, "the server is stopping",
                    SessionReplies.FATAL_CLOSE_GRACE_MS);
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
            replies.fatal(ErrorCode.TEXT_FRAME_NOT_SUPPORTED,
                    "text frame received; Ringcast messages travel in binary frames");
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
            replies.fatal(ErrorCode.MALFORMED_FRAME, "frame with reserved bits 0x" + Integer.toHexString(rsv << 4)
                    + " set, but no extension that defines them was negotiated on this connection");
            return;
        }
        read(frame.content());
    }

    /** A binary frame's content: decoded now, or queued while reading is paused. */
    private void read(ByteBuf content) {
        node.counters().receivedBytes.add(content.readableBytes());
        if (paused) {
            pending.addLast(content);
            return;
        }
        if (!content.isReadable()) {
            content.release();
            replies.fatal(ErrorCode.MALFORMED_FRAME, "empty frame: a frame holds at least one message");
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
        decodedThisTurn = 0; // the loop goes on to its other channels now
        if (replies != null) {
            replies.flush();
        }
        if (session != null && !ctx.channel().isWritable()) {
            holdReadsUntilWritable();
        }
        ctx.fireChannelReadComplete();
    }

    /** Stops reading until the channel is writable again ({@link #channelWritabilityChanged}). */
    private void holdReadsUntilWritable() {
        if (!waitingForWritable) {
            waitingForWritable = true;
            updateAutoRead();
        }
    }

    /**
     * Reads unless the inbound ring is full or replies wait unwritten; a closing session reads (and
     * drops) whatever comes, until its peer closes (see {@link Session#closeWithError}).
     */
    private void updateAutoRead() {
        session.channel.config().setAutoRead(session.closing || !paused && !waitingForWritable);
    }

    /**
     * Decodes messages until the frame is done, the inbound ring (in a cluster: for a publish, the
     * cluster's queue) is full, or the session had its turn ({@link #TURN_BYTES}).
     *
     * @return true when the frame was consumed (or the session failed), false when it must wait
     */
    private boolean decodeFrom(ByteBuf content) {
        while (content.isReadable() && !session.closing) {
            if (decodedThisTurn >= TURN_BYTES) {
                return false;
            }
            int start = content.readerIndex();
            try {
                if (!requests.decodeNext(content)) {
                    return false;
                }
                decodedThisTurn += content.readerIndex() - start;
            } catch (ProtocolException e) {
                replies.fatal(e.code(), e.reason());
            }
        }
        return true;
    }

    private void pause() {
        paused = true;
        updateAutoRead();
        if (decodedThisTurn >= TURN_BYTES) {
            session.channel.eventLoop().execute(this::resume); // after the loop's other channels
        } else {
            session.channel.eventLoop().schedule(this::resume, SequencerProxy.RING_FULL_RETRY_US, TimeUnit.MICROSECONDS);
        }
    }

    private void resume() {
        paused = false;
        decodedThisTurn = 0;
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
        replies.flush();
        waitingForWritable = !session.channel.isWritable();
        updateAutoRead();
    }
}
