package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * One session's updates held back by conflation: at most one per topic (per {@link Audience}: a
 * view's stream of a topic is held apart from the plain one), the newest, in the order
 * the topics first became pending. An update that has not replaced anything is written as the
 * shared frame (no copy, no encoding); one that replaced older updates is encoded for this session
 * as {@code TOPIC} + {@code UPDATE} with the {@link UpdateFlags#CONFLATED} flag and the full value,
 * since the session may lack the base of a delta and the alias of a new topic. I/O thread of the
 * session's loop only.
 */
final class ConflationBuffer {
    private final LinkedHashMap<Audience, Pending> pending = new LinkedHashMap<>();
    /** Entries to reuse: a session under steady backpressure allocates no entry per update. */
    private final ArrayDeque<Pending> free = new ArrayDeque<>();
    /** Bytes of the frames the last {@link #drainTo} wrote. */
    private long drainedBytes;

    boolean isEmpty() {
        return pending.isEmpty();
    }

    boolean holds(Audience topic) {
        return pending.containsKey(topic);
    }

    /**
     * Holds the update of {@code ev} for the session, replacing an older one of the same topic.
     *
     * @return whether it replaced one (an update the session will never receive)
     */
    boolean put(FanOutEvent ev, boolean compressedSession) {
        Pending p = pending.get(ev.audience);
        boolean replaced = p != null;
        if (replaced) {
            p.releaseFrames();
            p.value.release();
            p.skipped = true;
        } else {
            p = free.isEmpty() ? new Pending() : free.poll();
            p.audience = ev.audience;
            p.skipped = false;
            pending.put(ev.audience, p);
        }
        p.sequence = ev.sequence;
        p.value = ev.value.retain();
        if (!p.skipped) {
            p.frame = ev.frameFor(compressedSession).retainedDuplicate();
        }
        return replaced;
    }

    /**
     * Writes held updates to {@code session} while its channel is writable, oldest topic first.
     *
     * @return how many were written
     */
    int drainTo(Session session) {
        int written = 0;
        drainedBytes = 0;
        Iterator<Pending> it = pending.values().iterator();
        while (it.hasNext() && session.channel.isWritable()) {
            Pending p = it.next();
            it.remove();
            ByteBuf frame = p.frame;
            p.frame = null;
            if (frame == null) {
                frame = conflatedFrame(session, p);
            }
            drainedBytes += frame.readableBytes();
            session.ctx.write(frame, session.ctx.voidPromise());
            p.value.release();
            recycle(p);
            written++;
        }
        return written;
    }

    /** Bytes of the frames the last {@link #drainTo} wrote. */
    long drainedBytes() {
        return drainedBytes;
    }

    private static ByteBuf conflatedFrame(Session session, Pending p) {
        Topic topic = p.audience.topic();
        int viewId = p.audience.viewId();
        ByteBuf value = p.value;
        int length = value.readableBytes();
        ByteBuf frame = OutboundFrame.allocate(session.ctx.alloc(), topic.definitionBytes()
                + (viewId == 0 ? WireCodec.updateBytes(length) : WireCodec.viewedUpdateBytes(length)));
        topic.writeDefinition(frame);
        if (viewId == 0) {
            WireCodec.writeUpdate(frame, topic.alias, p.sequence, UpdateFlags.CONFLATED, value, value.readerIndex(),
                    length);
        } else {
            WireCodec.writeUpdate(frame, topic.alias, p.sequence, UpdateFlags.CONFLATED | UpdateFlags.VIEWED, viewId,
                    value, value.readerIndex(), length);
        }
        return OutboundFrame.finish(frame);
    }

    /** Drops the update held for {@code topic}, if any: a newer full value (or a view's {@code UNMATCHED}) is about to be written. */
    void discard(Audience topic) {
        Pending p = pending.remove(topic);
        if (p != null) {
            p.releaseFrames();
            p.value.release();
            recycle(p);
        }
    }

    /** Releases everything held: the session is gone. */
    void release() {
        for (Pending p : pending.values()) {
            p.releaseFrames();
            p.value.release();
        }
        pending.clear();
        free.clear();
    }

    private void recycle(Pending p) {
        p.audience = null;
        p.value = null;
        free.push(p);
    }

    private static final class Pending {
        Audience audience;
        long sequence;
        /** The full value, one reference held. */
        ByteBuf value;
        /** The shared frame (a retained duplicate) while nothing was skipped; null once replaced. */
        ByteBuf frame;
        boolean skipped;

        void releaseFrames() {
            if (frame != null) {
                frame.release();
                frame = null;
            }
        }
    }
}
