package io.ringcast.server.internal;

import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The node's last line before its direct memory runs out, which stops it (status 3): every
 * {@link #CHECK_MS} ms, when the JVM's direct buffers hold more than {@link #HIGH_PERCENT}% of its
 * limit, the sessions with the most unsent ({@link #MIN_SHED_BYTES} at least each) are closed as slow
 * consumers at once, without {@code limits.slowConsumerCloseGraceMs}, largest first, until what they
 * hold covers what is over {@link #LOW_PERCENT}%. Each session's queue is bounded by
 * {@code limits.outboundQueueBytes}; this bounds their sum, which otherwise grows with the sessions:
 * thirty subscribers of topics of their own that read nothing, and one publisher of 16-kB values to
 * those topics, filled a node's 64 MB of direct memory in two seconds. (Subscribers of one topic
 * share its frames and cost little; those of topics of their own hold frames no one else does.)
 *
 * <p>The histories ({@code history.nodeMaxBytes}) and incomplete messages
 * ({@code limits.incompleteMessageBytes}) have bounds of their own, below this mark by default; what
 * is left is the fan-out ring ({@code pipeline.fanOutRingBytes}) and sessions' unsent bytes, which
 * this watches.
 *
 * <p>Threads: {@link #run} on one event loop, on a timer; a session chosen is closed on its own loop.
 */
final class DirectMemoryGuard implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(DirectMemoryGuard.class);
    static final long CHECK_MS = 10;
    static final int HIGH_PERCENT = 85;
    static final int LOW_PERCENT = 70;
    /** A session with less unsent is keeping up, or holds too little to matter: never chosen. */
    static final long MIN_SHED_BYTES = 256 * 1024;

    private final LongSupplier usedBytes;
    private final long highBytes;
    private final long lowBytes;
    private final Iterable<Channel> channels;
    private final OutboundLimit outboundLimit;
    /** When the node last said it found no session to close (nanoTime): once every {@link #QUIET_WARN_NS} at most. */
    private long quietWarnedNs;
    private static final long QUIET_WARN_NS = 10_000_000_000L;

    /**
     * @param limitBytes the JVM's direct memory limit
     * @param channels   the open sessions' channels
     */
    DirectMemoryGuard(long limitBytes, Iterable<Channel> channels, OutboundLimit outboundLimit) {
        this(jvmDirectBytes(), limitBytes, channels, outboundLimit);
    }

    DirectMemoryGuard(LongSupplier usedBytes, long limitBytes, Iterable<Channel> channels, OutboundLimit outboundLimit) {
        this.usedBytes = usedBytes;
        this.highBytes = limitBytes / 100 * HIGH_PERCENT;
        this.lowBytes = limitBytes / 100 * LOW_PERCENT;
        this.channels = channels;
        this.outboundLimit = outboundLimit;
        this.quietWarnedNs = System.nanoTime() - QUIET_WARN_NS;
    }

    /** What the JVM's direct buffers hold: Netty's pooled chunks and every unpooled direct buffer. */
    private static LongSupplier jvmDirectBytes() {
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(pool -> pool.getName().equals("direct")).findFirst()
                .orElseThrow(() -> new IllegalStateException("this JVM reports no direct buffer pool"));
        return direct::getMemoryUsed;
    }

    @Override
    public void run() {
        long used = usedBytes.getAsLong();
        if (used <= highBytes) {
            return;
        }
        record Queue(Session session, long bytes) {
        }
        List<Queue> queues = new ArrayList<>();
        long closing = 0; // chosen before and not closed yet: their memory is on its way back
        for (Channel channel : channels) {
            Session session = channel.attr(Session.OF_CHANNEL).get();
            if (session == null) {
                continue;
            }
            long bytes = OutboundQueues.pendingBytes(channel);
            if (session.closing) {
                closing += bytes;
            } else if (bytes >= MIN_SHED_BYTES) {
                queues.add(new Queue(session, bytes));
            }
        }
        long toShed = used - lowBytes - closing;
        if (toShed <= 0) {
            return;
        }
        queues.sort(Comparator.comparingLong(Queue::bytes).reversed());
        int shed = 0;
        for (Queue q : queues) {
            if (toShed <= 0) {
                break;
            }
            String why = q.bytes + " bytes unsent while the node's direct memory holds " + used + " bytes, past "
                    + HIGH_PERCENT + "% of its limit: the sessions with the most unsent go first";
            q.session.channel.eventLoop().execute(() -> outboundLimit.closeForMemory(q.session, why));
            toShed -= q.bytes;
            shed++;
        }
        if (shed > 0) {
            log.warn("direct memory at {} bytes, past {}% of the limit: closing the {} sessions with the most unsent, "
                    + "as slow consumers", used, HIGH_PERCENT, shed);
        } else if (System.nanoTime() - quietWarnedNs > QUIET_WARN_NS) {
            quietWarnedNs = System.nanoTime();
            log.warn("direct memory at {} bytes, past {}% of the limit, and no session holds {} bytes unsent: "
                    + "see ringcast_history_bytes, ringcast_incomplete_message_bytes and ringcast_fanout_ring_bytes",
                    used, HIGH_PERCENT, MIN_SHED_BYTES);
        }
    }
}
