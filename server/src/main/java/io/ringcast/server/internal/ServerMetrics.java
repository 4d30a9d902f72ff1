package io.ringcast.server.internal;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.MetricWithFixedMetadata;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.ServerCounter;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;

/**
 * The node's metrics in the Prometheus text format, served at {@code /metrics}. Every metric is a
 * callback that reads {@link ServerCounters} when scraped: nothing is counted twice and the hot
 * path pays nothing for metrics. The figures are those {@link ServerCounter} declares, plus the
 * latency histogram, {@code ERROR}s by code and, in a cluster, the cluster's. One registry per
 * node (not the global one), so several nodes in one JVM (tests) do not collide. Thread-safe.
 */
final class ServerMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.builder().setIncludeCreatedTimestamps(false).build();

    /** @param cluster this node's part in the cluster, or null for a single node */
    ServerMetrics(ServerCounters c, ClusterNode cluster) {
        Map<String, List<ServerCounter>> families = new LinkedHashMap<>();
        for (ServerCounter counter : ServerCounter.values()) {
            families.computeIfAbsent(counter.metricName(), name -> new ArrayList<>()).add(counter);
        }
        families.values().forEach(family -> register(family, c));
        registry.register(c.publishToWrite);
        CounterWithCallback.builder()
                .name("ringcast_errors")
                .help("ERROR messages sent to clients, by code; each limit refuses with a code of its own.")
                .labelNames("code")
                .callback(cb -> {
                    for (ErrorCode code : ErrorCode.values()) {
                        cb.call(c.errors(code), code.name());
                    }
                })
                .register(registry);
        if (cluster != null) {
            registerCluster(cluster);
        }
    }

    /** One metric for the lines of {@code family}: one line, or one per label value. */
    private void register(List<ServerCounter> family, ServerCounters c) {
        ServerCounter first = family.get(0);
        String[] labelNames = first.labelName() == null ? new String[0] : new String[] {first.labelName()};
        if (first.kind() == ServerCounter.Kind.COUNTER) {
            register(CounterWithCallback.builder().callback(cb -> sample(family, c, cb::call)), first, labelNames);
        } else {
            register(GaugeWithCallback.builder().callback(cb -> sample(family, c, cb::call)), first, labelNames);
        }
    }

    private <B extends MetricWithFixedMetadata.Builder<B, ?>> void register(B builder, ServerCounter first,
                                                                          String[] labelNames) {
        builder.name(first.metricName()).help(first.help()).labelNames(labelNames);
        if (first.metricName().endsWith("_bytes")) {
            builder.unit(Unit.BYTES);
        }
        builder.register(registry);
    }

    /** The callbacks of counters and gauges, which share a shape but not a type. */
    private interface Sample {
        void call(double value, String... labelValues);
    }

    private static void sample(List<ServerCounter> family, ServerCounters c, Sample sample) {
        for (ServerCounter counter : family) {
            if (counter.labelValue() == null) {
                sample.call(counter.read(c));
            } else {
                sample.call(counter.read(c), counter.labelValue());
            }
        }
    }

    private void registerCluster(ClusterNode cluster) {
        gauge("ringcast_cluster_view_size", "Members in this node's current cluster view.",
                () -> cluster.status().view().size());
        gauge("ringcast_cluster_majority", "1 when the view holds a majority of the configured members (publishes "
                + "are sequenced), else 0.", () -> cluster.status().majority() ? 1 : 0);
        gauge("ringcast_cluster_owned_partitions", "Partitions this node sequences by the partition table.",
                () -> cluster.status().ownedPartitions());
        gauge("ringcast_cluster_backup_partitions", "Partitions this node is the backup of.",
                () -> cluster.status().backupPartitions());
        gauge("ringcast_cluster_replication_lag_updates", "Updates of other owners' partitions known to exist "
                + "and not applied here yet.", () -> cluster.status().updatesBehind());
        gauge("ringcast_cluster_awaiting_backup", "Updates this node sequenced that their backup has not "
                + "confirmed yet.", () -> cluster.status().awaitingBackup());
        gauge("ringcast_cluster_pending_publishes", "Publishes received here that their partition's owner has "
                + "not answered yet.", () -> cluster.status().pendingPublishes());
        CounterWithCallback.builder().name("ringcast_cluster_view_changes").help("Cluster views this node has seen.")
                .callback(cb -> cb.call(cluster.status().viewChanges())).register(registry);
    }

    private void gauge(String name, String help, DoubleSupplier value) {
        GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble()))
                .register(registry);
    }

    /** The content type of {@link #write}. */
    String contentType() {
        return writer.getContentType();
    }

    /** Writes every metric's current value. */
    void write(OutputStream out) throws IOException {
        writer.write(out, registry.scrape());
    }
}
