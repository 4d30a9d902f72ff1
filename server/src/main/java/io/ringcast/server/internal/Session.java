package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.AttributeKey;
import io.ringcast.log.PublishingSessions;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One WebSocket connection. Fields are grouped by the only thread allowed to touch them:
 * <ul>
 *   <li>final fields: any thread;</li>
 *   <li>"I/O" fields: the channel's event loop ({@link SessionHandler} and the {@link FanOutPoller}
 *       of that loop);</li>
 *   <li>"sequencer" fields: the {@code ringcast-sequencer} thread ({@link TopicSequencer}) only.</li>
 * </ul>
 * The two sides never share mutable state: they meet through the inbound and fan-out rings.
 */
final class Session {
    /** The channel's session, set when it is made ({@link OpenSessions#newSession}): for those who hold only the channel. */
    static final AttributeKey<Session> OF_CHANNEL = AttributeKey.valueOf(Session.class, "session");
    final long id;
    final String name;
    final Channel channel;
    final ChannelHandlerContext ctx;
    /** Index of the event loop (and so of its {@link FanOutPoller}) that owns this channel. */
    final int loopIndex;
    /**
     * The client negotiated permessage-deflate: it gets an update's compressed frame where there is
     * one. Fixed before the sequencer hears of the session.
     */
    final boolean compressed;
    /**
     * What this session's subscribe requests make the node keep ({@link SubscribeMemory}): charged on
     * its event loop, credited by the sequencer.
     */
    final AtomicLong subscribeBytes = new AtomicLong();

    // ---- I/O fields (the channel's event loop)
    boolean welcomed;
    /** Set once a fatal error was sent: nothing more is written, the channel is closing. */
    boolean closing;
    /**
     * Cluster: a publish of this session was refused unapplied or timed out, so its later ones are
     * refused ({@link ClusterRoute}). Set on the cluster's answer thread or the event loop, read on
     * the event loop.
     */
    volatile boolean clusterPublishesStopped;
    /**
     * Names this session to its publisher's ledger, so that the ledger takes its publishes in the
     * order it sent them (a single node's sequencer, or a cluster's log through {@link ClusterRoute}):
     * {@link PublishingSessions#of} the connection number its {@code HELLO} gave, set with the
     * publisher id before the welcome; never 0.
     */
    long publishingSession = PublishingSessions.of(0);
    /**
     * Cluster: per Raft group, the publishes this session handed to that group's log so far, the
     * last one's place (each group's log keeps the session's order among the publishes it gets);
     * made at the first publish. Event loop.
     */
    long[] clusterSessionSequences;
    /** Written to during the current fan-out batch and not flushed yet. */
    boolean dirty;
    String clientName = "";
    /**
     * What the session may receive and publish; set on its event loop when it is welcomed, before
     * any of its commands, so the sequencer reads it after the inbound ring's hand-over.
     */
    Permissions permissions;
    /**
     * The client's publisher id from {@code HELLO} (0: none): with it, a {@code REPUBLISH} is
     * applied once. Set before the welcome, so the sequencer reads it after the ring's hand-over.
     */
    long publisherId;
    final Set<Integer> openSubscriptionIds = new HashSet<>();
    /** The view of each open subscription that has one, by subscription id ({@code limits.maxViewsPerSession}). */
    final Map<Integer, View.Key> openViews = new HashMap<>();
    String closeReason;
    /** Updates held back by conflation; null until the session first falls behind on a conflated topic. */
    ConflationBuffer conflation;
    /** In its poller's list of sessions with held updates. */
    boolean draining;
    /**
     * Frames kept back while this session's streamed subscribe reply is written, oldest first:
     * updates of topics it joined meanwhile ({@link SubscriberSet#holds}), and its acks and refusals
     * behind them; written right after the reply's {@code SUBSCRIBED} ({@link FanOutPoller}). Null
     * when none.
     */
    ArrayDeque<ByteBuf> heldForReply;
    /** The bytes of {@link #heldForReply}. */
    long heldForReplyBytes;
    /**
     * Asks the sequencer for the next window of this session's streamed subscribe reply, once the
     * last reached the socket ({@link FanOutPoller}); set by {@link SessionHandler} when it opens the
     * session (through the inbound ring, retried on this loop while the ring is full).
     */
    Runnable continueReplies = () -> {
        throw new IllegalStateException("no way to the sequencer set for session " + this);
    };

    // ---- sequencer fields (ringcast-sequencer)
    /** Open subscriptions by id. */
    final Map<Integer, OpenSubscription> subscriptions = new HashMap<>();
    /**
     * Single node, a publisher id given: the publishes of this session the sequencer decided, the
     * place of the last in the session's order ({@link RepublishAnswers#screen}).
     */
    long publishesDecided;
    /** Marker the sequencer uses to visit a session once while matching (no per-match set). */
    long visitMark;
    /** Marks the session as resuming the topic being created ({@link OpenSubscription#missing}). */
    long resumedMark;
    /**
     * While a subscribe reply is streamed ({@link Subscriptions}): that reply, first, then the
     * {@code SUBSCRIBE}s and {@code UNSUBSCRIBE}s the session sent after it, in order; null when
     * no reply is pending.
     */
    ArrayDeque<SubscriptionRequest> pendingRequests;
    /** Whether it waits in {@link Subscriptions}' queue for a turn to produce its next reply window. Sequencer only. */
    boolean replyDue;

    Session(long id, ChannelHandlerContext ctx, int loopIndex, boolean compressed) {
        this.id = id;
        this.name = "s-" + Long.toHexString(id);
        this.ctx = ctx;
        this.channel = ctx.channel();
        this.loopIndex = loopIndex;
        this.compressed = compressed;
    }

    /** Whether updates may still be written to this session. I/O thread. */
    boolean acceptsWrites() {
        return !closing && channel.isActive();
    }

    /**
     * Writes a frame shared with other sessions: a retained duplicate, never a copy; {@code promise}
     * completes when the socket took it (or is the void promise). Not flushed. I/O thread.
     */
    void writeShared(ByteBuf frame, ChannelPromise promise) {
        assert channel.eventLoop().inEventLoop();
        ctx.write(frame.retainedDuplicate(), promise);
    }

    /**
     * Whether an update of {@code topic} under {@code policy} must be held back rather than written:
     * always with {@link Conflation#ALWAYS}; with {@link Conflation#ON_BACKPRESSURE} while the channel
     * is not writable (its unsent bytes passed the high water mark, {@code features.conflationBacklogBytes});
     * and, whatever the policy (it may have been reloaded), whenever an older update of the topic is
     * held, so the topic's order is kept. I/O thread.
     */
    boolean mustConflate(Conflation policy, Audience topic) {
        if (policy == Conflation.ALWAYS || policy == Conflation.ON_BACKPRESSURE && !channel.isWritable()) {
            return true;
        }
        return conflation != null && !conflation.isEmpty() && conflation.holds(topic);
    }

    /** Keeps {@code frame} (taking over its reference) in {@link #heldForReply}. I/O thread. */
    void holdForReply(ByteBuf frame) {
        if (heldForReply == null) {
            heldForReply = new ArrayDeque<>();
        }
        heldForReply.addLast(frame);
        heldForReplyBytes += frame.readableBytes();
    }

    /** Releases what {@link #heldForReply} keeps: the session is closing. I/O thread. */
    void releaseHeldForReply() {
        if (heldForReply != null) {
            for (ByteBuf frame; (frame = heldForReply.poll()) != null; ) {
                frame.release();
            }
            heldForReply = null;
            heldForReplyBytes = 0;
        }
    }

    /** Releases updates held back by conflation: the session is closing. I/O thread. */
    void releaseConflated() {
        if (conflation != null) {
            conflation.release();
        }
    }

    /** Unsent bytes queued on the channel, the measure of a slow consumer. I/O thread. */
    long pendingOutboundBytes() {
        return OutboundQueues.pendingBytes(channel);
    }

    /**
     * Sends {@code ERROR} and a WebSocket close frame with the code's close status, stops all
     * further writes to the session, and closes the connection once they are flushed or after
     * {@code graceMs}, whichever comes first. Idempotent. I/O thread.
     */
    void closeWithError(ErrorCode code, String reason, long graceMs) {
        assert channel.eventLoop().inEventLoop();
        if (closing) {
            return;
        }
        closing = true;
        closeReason = code + ": " + reason;
        if (!channel.isActive()) {
            return;
        }
        channel.config().setAutoRead(true); // read and drop, even if reading was paused
        if (channel.pipeline().get(ClosingSessionInput.NAME) == null) {
            channel.pipeline().addFirst(ClosingSessionInput.NAME, ClosingSessionInput.INSTANCE);
        }
        ByteBuf out = OutboundFrame.allocate(ctx.alloc(), WireCodec.errorBytes(reason));
        WireCodec.writeError(out, code, 0, reason);
        ctx.write(OutboundFrame.finish(out), ctx.voidPromise());
        // Half-close once they are out, and go on reading (and dropping, undecoded: ClosingSessionInput) until
        // the peer closes or the grace ends. Closing at once with input still unread, such as the rest
        // of an oversized frame, makes the kernel send a reset, which can destroy the ERROR and the
        // close frame in the peer's receive buffer before it reads them.
        ctx.writeAndFlush(new CloseWebSocketFrame(code.closeCode(), code.name())).addListener(written -> {
            if (written.isSuccess() && channel instanceof SocketChannel socket && socket.isActive()) {
                socket.shutdownOutput();
            } else {
                channel.close();
            }
        });
        ctx.executor().schedule(() -> {
            if (channel.isActive()) {
                channel.close();
            }
        }, Math.max(graceMs, 1), TimeUnit.MILLISECONDS);
    }

    @Override
    public String toString() {
        return name;
    }
}
