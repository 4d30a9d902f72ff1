package io.ringcast.server.internal;

import io.netty.buffer.PooledByteBufAllocator;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

import java.util.function.DoubleSupplier;

/**
 * The metrics of the JVM and the process a node runs in: the Prometheus client's own JVM
 * instrumentation ({@code jvm_*}: memory and its pools, buffer pools, GC, threads, classes, JIT;
 * {@code process_*}: CPU seconds, open file descriptors, resident and virtual memory, start time)
 * and the direct memory of Netty's pooled allocator, which every node in the JVM allocates from
 * ({@code ringcast_netty_direct_memory_*}).
 *
 * <p>They describe the JVM, not a node, so they are registered once per JVM, in a registry of their
 * own made when the first node's {@link ServerMetrics} is built, and each node's registry includes
 * {@link #COLLECTOR}: every node in one JVM (tests start several) reports the same figures, and
 * nothing is registered twice. Registering {@code JvmMetrics} into each node's registry instead
 * would leak: the library keeps every registry it was given in a static set, and adds a GC
 * notification listener for each (for {@code jvm_memory_pool_allocated_bytes_total}) that is never
 * removed, so each node's registry, and through its callbacks the node, would stay reachable for
 * the life of the JVM. Thread-safe: scraped from any event loop.
 */
final class JvmWideMetrics {
    private static final PrometheusRegistry REGISTRY = create();

    /** The JVM's and the process's metrics, for a node's registry to include in its scrape. */
    static final MultiCollector COLLECTOR = REGISTRY::scrape;

    private JvmWideMetrics() {
    }

    private static PrometheusRegistry create() {
        PrometheusRegistry registry = new PrometheusRegistry();
        JvmMetrics.builder().register(registry);
        PooledByteBufAllocator netty = PooledByteBufAllocator.DEFAULT;
        bytes(registry, "ringcast_netty_direct_memory_used_bytes", "Direct memory Netty's pooled allocator has "
                + "reserved in its arenas (chunks, in use or free), for every node in this JVM.",
                () -> netty.metric().usedDirectMemory());
        bytes(registry, "ringcast_netty_direct_memory_chunk_bytes", "The size of the chunks Netty's pooled allocator "
                + "takes direct memory in: each arena a thread allocates in holds one at least.",
                () -> netty.metric().chunkSize());
        // walks each arena's chunks under the arena's lock: cheap, and once per scrape
        bytes(registry, "ringcast_netty_direct_memory_pinned_bytes", "Of ringcast_netty_direct_memory_used_bytes, "
                + "the bytes held by buffers in use now.", () -> Math.max(0, netty.pinnedDirectMemory()));
        return registry;
    }

    private static void bytes(PrometheusRegistry registry, String name, String help, DoubleSupplier value) {
        GaugeWithCallback.builder().name(name).help(help).unit(Unit.BYTES)
                .callback(cb -> cb.call(value.getAsDouble())).register(registry);
    }
}
