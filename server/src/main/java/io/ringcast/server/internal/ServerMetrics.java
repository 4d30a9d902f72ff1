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
 * latency histogram, {@code ERROR}s by code and, in a cluster, the cluster's; then those of the JVM
 * and the process ({@link JvmWideMetrics}). One registry per node (not the global one), so several
 * nodes in one JVM (tests) do not collide; the JVM's metrics are registered once per JVM and read
 * by every node's registry. Thread-safe.
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
        registry.register(JvmWideMetrics.COLLECTOR);
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
        gauge("ringcast_cluster_view_size", "Members this node is connected with now (its JGroups view).",
                () -> cluster.status().view().size());
        gauge("ringcast_cluster_majority", "1 when this node knows a Raft leader (publishes are committed), else 0.",
                () -> cluster.status().majority() ? 1 : 0);
        gauge("ringcast_cluster_leader", "1 when this node is the Raft leader (of the first group), else 0.",
                () -> cluster.settings().nodeName().equals(cluster.status().leader()) ? 1 : 0);
        gauge("ringcast_cluster_groups_led", "Raft groups this node leads now (of cluster.groups).",
                () -> cluster.status().groups().stream().filter(g -> cluster.settings().nodeName().equals(g.leader()))
                        .count());
        gauge("ringcast_cluster_term", "The Raft term this node knows.", () -> cluster.status().term());
        gauge("ringcast_cluster_commit_index", "Index of the last log entry this node knows committed (and has "
                + "applied).", () -> cluster.status().commitIndex());
        gauge("ringcast_cluster_log_unapplied_entries", "Entries in this node's log past its commit index "
                + "(appended, not known committed yet).",
                () -> Math.max(0, cluster.status().lastAppended() - cluster.status().commitIndex()));
        gauge("ringcast_cluster_pending_publishes", "Publishes received here waiting for a log entry.",
                () -> cluster.status().queuedPublishes());
        CounterWithCallback.builder().name("ringcast_cluster_snapshots").help("Raft snapshots this node has "
                + "taken since it started.").callback(cb -> cb.call(cluster.status().snapshots())).register(registry);
        GaugeWithCallback.builder().name("ringcast_cluster_last_snapshot_bytes").unit(Unit.BYTES)
                .help("Size of the last snapshot this node took of each Raft group (none yet: no line).")
                .labelNames("group")
                .callback(cb -> cluster.status().groups().forEach(g -> {
                    if (g.lastSnapshot() != null) {
                        cb.call(g.lastSnapshot().bytes(), g.name());
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("ringcast_cluster_last_snapshot_seconds").unit(Unit.SECONDS)
                .help("How long writing the last snapshot of each Raft group took on this node.")
                .labelNames("group")
                .callback(cb -> cluster.status().groups().forEach(g -> {
                    if (g.lastSnapshot() != null) {
                        cb.call(g.lastSnapshot().millis() / 1000.0, g.name());
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("ringcast_cluster_follower_lag_entries")
                .help("On a Raft group's leader, the entries of its log each other member does not have yet.")
                .labelNames("group", "member")
                .callback(cb -> cluster.status().groups().forEach(g -> g.followers().forEach(
                        f -> cb.call(f.lag(), g.name(), f.member())))).register(registry);
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
