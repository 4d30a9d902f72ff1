package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;

/**
 * {@code limits.outboundQueueBytes}: the most a session may have queued and not yet sent, whatever
 * was queued: updates, snapshots, acks, pongs and errors alike. A client that sends requests and
 * reads no replies is as slow a consumer as one that reads no updates, and gets the same answer:
 * {@code SLOW_CONSUMER} and a close.
 *
 * <p>The measure is the channel's own count of pending bytes (Netty's {@code ChannelOutboundBuffer},
 * which includes what TLS has not encrypted yet and a per-write overhead), so it follows the memory
 * a session holds, not only its payload.
 *
 * <p>Unsent means not taken by the socket: a session over the limit is flushed first, and cut only
 * if it is still over, so the flush policy's batching never counts against a client that reads.
 *
 * <p>Thread contract: {@link #closeIfOver} on the session's event loop, after each write to it.
 * Stateless otherwise; one per node.
 */
final class OutboundLimit {
    private final long maxBytes;
    private final long closeGraceMs;
    private final ServerCounters counters;

    OutboundLimit(long maxBytes, long closeGraceMs, ServerCounters counters) {
        this.maxBytes = maxBytes;
        this.closeGraceMs = closeGraceMs;
        this.counters = counters;
    }

    /** Closes {@code s} as a slow consumer when its unsent bytes passed the limit; returns whether it did. */
    boolean closeIfOver(Session s) {
        return closeIfOver(s, 0);
    }

    /** The same, counting {@code gatheredBytes} not handed to the channel yet ({@link ReplyFrames}). */
    boolean closeIfOver(Session s, long gatheredBytes) {
        if (s.pendingOutboundBytes() + gatheredBytes <= maxBytes || s.closing) {
            return false;
        }
        // written but maybe not flushed yet (the flush policy waits for the end of the batch): only
        // what the socket does not take counts, or one large batch would cut a client reading at full speed
        s.ctx.flush();
        long pending = s.pendingOutboundBytes() + gatheredBytes;
        if (pending <= maxBytes) {
            return false;
        }
        close(s, pending + " bytes unsent, more than limits.outboundQueueBytes = " + maxBytes);
        return true;
    }

    /**
     * Closes {@code s} as a slow consumer at once, without the grace its unsent bytes would get: the
     * node's direct memory is nearly out ({@link DirectMemoryGuard}). On the session's event loop.
     */
    void closeForMemory(Session s, String why) {
        if (s.closing) {
            return;
        }
        counters.directMemoryCloses.increment();
        counters.slowConsumerDisconnects.increment();
        s.closeWithError(ErrorCode.SLOW_CONSUMER, "slow consumer: " + why, 0);
    }

    /** Closes {@code s} as a slow consumer for {@code why}. */
    void close(Session s, String why) {
        counters.slowConsumerDisconnects.increment();
        s.closeWithError(ErrorCode.SLOW_CONSUMER, "slow consumer: " + why, closeGraceMs);
    }
}
