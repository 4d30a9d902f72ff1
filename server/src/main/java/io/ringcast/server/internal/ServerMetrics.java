package io.ringcast.server.internal;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.protocol.ErrorCode;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

import java.io.IOException;
import java.io.OutputStream;
import java.util.function.DoubleSupplier;

/**
 * The node's metrics in the Prometheus text format, served at {@code /metrics}. Every metric is a
 * callback that reads {@link ServerCounters} when scraped: nothing is counted twice and the hot
 * path pays nothing for metrics. One registry per node (not the global one), so several nodes in
 * one JVM (tests) do not collide. Thread-safe.
 */
final class ServerMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = new PrometheusTextFormatWriter(false);

    ServerMetrics(ServerContext server) {
        ServerCounters c = server.counters;
        gauge("ringcast_sessions", "Open WebSocket sessions.", null, c::sessions);
        gauge("ringcast_topics", "Topics in the topic tree.", null, c::topics);
        gauge("ringcast_subscriptions", "Open subscriptions over all sessions.", null, c::subscriptions);
        gauge("ringcast_outbound_queued_bytes", "Bytes queued to all sessions and not sent yet (updates and replies, "
                + "with Netty's per-write overhead).", Unit.BYTES, () -> OutboundQueues.of(server.channels).totalBytes());
        gauge("ringcast_outbound_queue_largest_bytes", "The largest of those queues, which limits.outboundQueueBytes "
                + "bounds.", Unit.BYTES, () -> OutboundQueues.of(server.channels).largestBytes());
        counter("ringcast_received_bytes", "Payload bytes of the binary frames clients sent.", Unit.BYTES,
                c::receivedBytes);
        registry.register(c.publishToWrite);
        if (server.cluster != null) {
            ClusterNode cluster = server.cluster;
            gauge("ringcast_cluster_view_size", "Members in this node's current cluster view.", null,
                    () -> cluster.status().view().size());
            gauge("ringcast_cluster_majority", "1 when the view holds a majority of the configured members (publishes "
                    + "are sequenced), else 0.", null, () -> cluster.status().majority() ? 1 : 0);
            gauge("ringcast_cluster_owned_partitions", "Partitions this node sequences by the partition table.", null,
                    () -> cluster.status().ownedPartitions());
            gauge("ringcast_cluster_backup_partitions", "Partitions this node is the backup of.", null,
                    () -> cluster.status().backupPartitions());
            gauge("ringcast_cluster_replication_lag_updates", "Updates of other owners' partitions known to exist "
                    + "and not applied here yet.", null, () -> cluster.status().updatesBehind());
            gauge("ringcast_cluster_awaiting_backup", "Updates this node sequenced that their backup has not "
                    + "confirmed yet.", null, () -> cluster.status().awaitingBackup());
            gauge("ringcast_cluster_pending_publishes", "Publishes received here that their partition's owner has "
                    + "not answered yet.", null, () -> cluster.status().pendingPublishes());
            counter("ringcast_cluster_view_changes", "Cluster views this node has seen.", null,
                    () -> cluster.status().viewChanges());
        }
        gauge("ringcast_values_cached", "Topics whose newest value is kept (last-value cache on).", null,
                c::valuesCached);
        gauge("ringcast_inbound_ring_remaining", "Free slots of the inbound (sequencer) ring.", null,
                server.inbound::remainingCapacity);
        counter("ringcast_publishes", "Updates sequenced.", null, c::publishes);
        counter("ringcast_deliveries", "Update and snapshot frames written to sessions.", null, c::deliveries);
        counter("ringcast_delivered_bytes", "Bytes of those frames as written to the sockets, WebSocket headers included.",
                Unit.BYTES, c::deliveredBytes);
        counter("ringcast_slow_consumer_disconnects", "Sessions closed with SLOW_CONSUMER.", null,
                c::slowConsumerDisconnects);
        counter("ringcast_protocol_errors", "ERROR messages sent to clients, fatal or not.", null, c::protocolErrors);
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
        gauge("ringcast_connections_before_upgrade", "Connections accepted whose WebSocket upgrade has not completed "
                + "(plain HTTP or mid-upgrade), at most limits.maxConnectionsBeforeUpgrade.", null,
                c::connectionsBeforeUpgrade);
        counter("ringcast_connections_refused_before_upgrade", "Connections closed on accept: "
                + "limits.maxConnectionsBeforeUpgrade were already open.", null, c::connectionsRefusedBeforeUpgrade);
        counter("ringcast_http_timeouts", "Connections closed because the TLS handshake, an HTTP request or the "
                + "WebSocket upgrade did not complete within limits.handshakeTimeoutMs.", null, c::httpTimeouts);
        counter("ringcast_origin_refusals", "WebSocket upgrades refused: the page's origin is not allowed.", null,
                c::originRefusals);
        counter("ringcast_republishes_recognised", "Publishes sent again after a lost connection that were applied "
                + "before: acked with their sequence, not applied twice.", null, c::republishesRecognised);
        gauge("ringcast_publisher_ledgers", "Publisher ledgers held for REPUBLISH (sessions open and publishers "
                + "away), within limits.publisherLedgers and limits.publisherLedgersPerPrincipal.", null,
                c::publisherLedgers);
        counter("ringcast_publisher_ledgers_forgotten", "Ledgers of publishers away forgotten to stay within those "
                + "bounds; their REPUBLISHes get PUBLISH_OUTCOME_UNKNOWN (ringcast_errors).", null,
                c::publisherLedgersForgotten);
        counter("ringcast_client_pings", "PING messages received from clients.", null, c::clientPings);
        counter("ringcast_idle_pings", "WebSocket pings sent to sessions silent for half the idle timeout.", null,
                c::idlePings);
        counter("ringcast_deltas_sent", "Updates sent as deltas (each once, however many sessions receive it).", null,
                c::deltasSent);
        counter("ringcast_delta_saved_bytes", "Bytes deltas kept off the wire, over every delivery.", Unit.BYTES,
                c::deltaBytesSaved);
        counter("ringcast_compressed_frames", "Frames sent compressed (each compressed once for all receivers).",
                null, c::compressedFrames);
        counter("ringcast_compression_in_bytes", "Payload bytes offered to compression.", Unit.BYTES,
                c::compressionBytesIn);
        counter("ringcast_compression_out_bytes", "What compression made of them (unchanged where it did not pay).",
                Unit.BYTES, c::compressionBytesOut);
        counter("ringcast_conflated_updates", "Updates sessions did not receive because a newer value replaced them.",
                null, c::conflatedUpdates);
        CounterWithCallback.builder()
                .name("ringcast_config_reloads")
                .help("Edits of the config file: applied, or refused as invalid.")
                .labelNames("result")
                .callback(cb -> {
                    cb.call(c.configReloads(), "applied");
                    cb.call(c.configReloadsRefused(), "refused");
                })
                .register(registry);
    }

    private void gauge(String name, String help, Unit unit, DoubleSupplier value) {
        GaugeWithCallback.Builder b = GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble()));
        if (unit != null) {
            b.unit(unit);
        }
        b.register(registry);
    }

    private void counter(String name, String help, Unit unit, DoubleSupplier value) {
        CounterWithCallback.Builder b = CounterWithCallback.builder().name(name).help(help)
                .callback(cb -> cb.call(value.getAsDouble()));
        if (unit != null) {
            b.unit(unit);
        }
        b.register(registry);
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
