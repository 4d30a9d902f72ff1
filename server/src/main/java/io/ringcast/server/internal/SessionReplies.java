package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;

/**
 * The server's answers to one session's requests ({@code WELCOME}, {@code PONG}, {@code ERROR}),
 * gathered into frames ({@link ReplyFrames}) while a read is
 * decoded and flushed at its end. Each counts against {@code limits.outboundQueueBytes} like an
 * update: past it the session is closed as a slow consumer, which also ends the decoding of the
 * frame that asked for it. When the channel stops being writable the handler is told, to stop
 * reading until it is.
 *
 * <p>Thread contract: the session's event loop only.
 */
final class SessionReplies {
    /** How long a connection that just got a fatal error is kept at most, for its peer to read it. */
    static final long FATAL_CLOSE_GRACE_MS = 1000;

    private final Session session;
    private final ReplyFrames frames;
    private final OutboundLimit outboundLimit;
    private final ServerCounters counters;
    /** Tells the handler to stop reading until the channel is writable; idempotent. */
    private final Runnable holdReads;
    /** Replies were gathered and not flushed yet. */
    private boolean gathered;

    SessionReplies(Session session, int maxFrameBytes, OutboundLimit outboundLimit, ServerCounters counters,
                   Runnable holdReads) {
        this.session = session;
        this.frames = new ReplyFrames(session.ctx, maxFrameBytes);
        this.outboundLimit = outboundLimit;
        this.counters = counters;
        this.holdReads = holdReads;
    }

    void welcome(int maxFrameBytes, int idleTimeoutMs) {
        WireCodec.writeWelcome(frames.room(WireCodec.welcomeBytes(session.name)), WireCodec.VERSION, session.name, maxFrameBytes, idleTimeoutMs);
        replied();
    }

    void pong(long nonce) {
        WireCodec.writePong(frames.room(WireCodec.PONG_BYTES), nonce);
        replied();
    }

    /** {@code REMOVED}: the answer to a {@code REMOVE} a cluster's logs applied. */
    void removed(int correlationId, int removedTopics) {
        WireCodec.writeRemoved(frames.room(WireCodec.REMOVED_BYTES), correlationId, removedTopics);
        replied();
    }

    /** A non-fatal error for one request (counted); the session stays open. */
    void refuse(Verdict refusal, int correlationId) {
        refuse(refusal.code(), correlationId, refusal.reason());
    }

    void refuse(ErrorCode code, int correlationId, String reason) {
        counters.error(code);
        WireCodec.writeError(frames.room(WireCodec.errorBytes(reason)), code, correlationId, reason);
        replied();
    }

    private void replied() {
        gathered = true;
        if (!outboundLimit.closeIfOver(session, frames.gatheredBytes()) && !session.channel.isWritable()) {
            holdReads.run(); // no more reads in this batch: what is read already is still decoded
        }
    }

    /** Hands the gathered replies to the channel and flushes; a closing session's are dropped. */
    void flush() {
        if (!gathered) {
            return;
        }
        gathered = false;
        if (session.closing) {
            frames.release();
        } else {
            frames.write();
            session.ctx.flush();
        }
    }

    /**
     * A fatal error (counted): the replies gathered before it go out first, then {@code ERROR} and
     * the close ({@link Session#closeWithError}).
     */
    void fatal(ErrorCode code, String reason) {
        counters.error(code);
        if (!session.closing) {
            frames.write();
        }
        session.closeWithError(code, reason, FATAL_CLOSE_GRACE_MS);
    }

    void fatal(Verdict refusal) {
        fatal(refusal.code(), refusal.reason());
    }

    /** Drops what was gathered: the connection is gone. */
    void release() {
        frames.release();
    }
}
