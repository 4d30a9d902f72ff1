package io.ringcast.server.internal;

import com.sun.management.GarbageCollectionNotificationInfo;
import io.ringcast.protocol.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Bounds the sum of what clients make a node keep on its heap: new sessions, subscriptions and
 * topics (in a cluster, through the log: {@link ClusterRoute}) are refused while the heap in use after the last collection is past
 * {@code limits.heapRefusePercent} of the heap limit. Each of those has a count of its own
 * ({@code limits.maxConnections}, {@code maxSubscriptions}, {@code maxTopics}), each sized to fit the
 * heap alone; anonymous clients taking nine tenths of all of them at once would need several times
 * the launcher's heap, and the node would stop with an {@link OutOfMemoryError}. What is open stays
 * open and keeps being served: publishes to existing topics, deliveries, unsubscribes and closes
 * all go on, and a node whose clients let go of enough (topics removed or expired, sessions closed)
 * takes new ones again after its next collection.
 *
 * <p>It reads the heap after each collection from the collectors' notifications (the JDK's
 * {@link GarbageCollectionNotificationInfo}). Under the serial and parallel collectors only a full
 * ("major") collection's figure starts refusing: after a young one the figure still counts the old
 * generation's garbage, which they keep until it fills, so a node with 60% of its heap live could
 * otherwise refuse for minutes. Under G1 every pause's figure does: G1 marks the old generation
 * concurrently from 45% of the heap on and reclaims it in its mixed pauses (reported as young ones),
 * so an old generation past the mark after a pause is mostly live, and waiting for G1's full
 * collection, its last resort, left a cluster's leader too little heap to live on (it exited 10 s
 * after its first full collection past the mark, benchmarks.md). A pause whose figure includes
 * garbage G1 has not reclaimed yet refuses until its next mixed pause. Concurrent collectors' cycles
 * (ZGC, Shenandoah) count like full collections. Any collection's figure under the mark lifts the
 * refusal.
 *
 * <p>Thread contract: {@link #collected} on the JVM's notification thread (or a test's), the
 * others from any thread; they meet only through the volatile {@link #refusing} and
 * {@link #usedAfterCollection}.
 */
final class HeapGuard implements NotificationListener, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HeapGuard.class);
    /** A guard that never refuses: {@code limits.heapRefusePercent: 0}, and tests of other things. */
    static final HeapGuard OFF = new HeapGuard(Long.MAX_VALUE, 0, new ServerCounters());

    private final long heapLimit;
    private final int percent;
    /** {@link #percent} of {@link #heapLimit}; {@link Long#MAX_VALUE} when off. */
    private final long mark;
    private final ServerCounters counters;
    private final Set<String> heapPools;
    private final List<NotificationEmitter> listenedTo = new ArrayList<>();
    /** Heap bytes in use after the last collection; 0 before the first. */
    private volatile long usedAfterCollection;
    private volatile boolean refusing;

    /**
     * @param heapLimit bytes the heap may grow to ({@link Runtime#maxMemory()})
     * @param percent   {@code limits.heapRefusePercent}; 0 refuses nothing
     */
    HeapGuard(long heapLimit, int percent, ServerCounters counters) {
        this.heapLimit = heapLimit;
        this.percent = percent;
        this.mark = percent == 0 ? Long.MAX_VALUE : heapLimit / 100 * percent;
        this.counters = counters;
        this.heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName)
                .collect(Collectors.toUnmodifiableSet());
    }

    /** Listens to every collector of this JVM from now on, unless it is off. Once, at the node's start. */
    HeapGuard start() {
        if (percent == 0) {
            return this;
        }
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (collector instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener(this, null, null);
                listenedTo.add(emitter);
            }
        }
        counters.heapGuardOf(this);
        return this;
    }

    @Override
    public void handleNotification(Notification notification, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from(
                (CompositeData) notification.getUserData());
        long used = 0;
        for (Map.Entry<String, MemoryUsage> pool : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
            if (heapPools.contains(pool.getKey())) {
                used += pool.getValue().getUsed();
            }
        }
        collected(used, decisive(info.getGcAction(), info.getGcName()), info.getGcName());
    }

    /**
     * Whether a collection's figure holds little garbage (see the class comment): any but a young
     * one, and any G1 pause. {@code action} and {@code collector} as the JDK's notifications name them
     * ("end of minor GC", "G1 Young Generation").
     */
    static boolean decisive(String action, String collector) {
        return !action.equals("end of minor GC") || collector.startsWith("G1 ");
    }

    /**
     * A collection left {@code used} bytes of the heap in use; {@code decisive} when that figure
     * holds little garbage (a full collection, or any G1 pause) and may start refusing. The
     * notification thread.
     */
    void collected(long used, boolean decisive, String collector) {
        boolean was = refusing;
        boolean is = used > mark && (decisive || was);
        usedAfterCollection = used;
        refusing = is;
        if (is != was) {
            if (is) {
                log.warn("heap in use after a collection ({}): {} MB, past limits.heapRefusePercent = {}% of the "
                        + "heap limit ({} MB): new sessions, subscriptions and topics refused until a collection "
                        + "leaves less", collector, used >> 20, percent, heapLimit >> 20);
            } else {
                log.info("heap in use after a collection ({}): {} MB, under limits.heapRefusePercent = {}% of the "
                        + "heap limit ({} MB) again: new sessions, subscriptions and topics taken", collector,
                        used >> 20, percent, heapLimit >> 20);
            }
        }
    }

    /** Whether new sessions, subscriptions and topics are refused now. Any thread: one volatile read. */
    boolean refusing() {
        return refusing;
    }

    /** Heap bytes in use after the last collection (0 before the first). */
    long usedAfterCollection() {
        return usedAfterCollection;
    }

    /**
     * Counts a refusal of {@code what} (a session, a subscription, a topic) and says why, for the
     * client and the log: {@code "<what> refused: the node's heap ..."}.
     */
    String refused(String what) {
        counters.heapRefusals.increment();
        return what + " refused: the node's heap is " + (usedAfterCollection >> 20) + " MB in use after its last "
                + "collection, past limits.heapRefusePercent = " + percent + "% of its " + (heapLimit >> 20)
                + " MB; try another address or later";
    }

    /** The error for a refused {@code what}, for the paths that answer with a {@link Verdict}. */
    Verdict refusal(ErrorCode code, String what) {
        return Verdict.refused(code, refused(what));
    }

    @Override
    public void close() {
        for (NotificationEmitter emitter : listenedTo) {
            try {
                emitter.removeNotificationListener(this);
            } catch (ListenerNotFoundException gone) {
                // removed already: nothing to undo
            }
        }
        listenedTo.clear();
    }
}
