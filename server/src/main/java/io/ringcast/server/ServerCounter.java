package io.ringcast.server;

import io.ringcast.server.internal.ServerCounters;

import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * Every figure a node reports, counters and gauges alike, each declared once: {@code /metrics},
 * {@code /health} and {@link ServerStats} iterate this list, so a new figure is one line here
 * plus the code that counts it in {@link ServerCounters}. Only the figures that are not one number
 * stay outside: the latency histogram, {@code ERROR}s by code ({@link ServerStats#errors}) and
 * the cluster's figures, which exist only with {@code cluster.enabled}.
 *
 * <p>Each constant names its Prometheus series (counters get {@code _total} on the wire, a name
 * ending in {@code _bytes} gets the bytes unit, {@code {label=value}} puts it in a labelled family
 * with the lines that share its name) and its help text; its {@code /health} key and stats name is
 * the constant's name in camel case ({@code DELIVERED_BYTES} is {@code deliveredBytes}).
 */
public enum ServerCounter {
    SESSIONS(Kind.GAUGE, "ringcast_sessions", "Open sessions: WebSocket ones, and HTTP publish requests being "
            + "answered.", ServerCounters::sessions),
    TOPICS(Kind.GAUGE, "ringcast_topics", "Topics in the topic tree.", ServerCounters::topics),
    TOPICS_REMOVED(Kind.COUNTER, "ringcast_topics_removed", "Topics removed: by a client's or an HTTP request's "
            + "REMOVE, or expired.", ServerCounters::topicsRemoved),
    TOPICS_EXPIRED(Kind.COUNTER, "ringcast_topics_expired", "Topics removed because no publish updated them for "
            + "their features' expireAfterMs; in a cluster, the expiries this node logged as the leader of their group.",
            ServerCounters::topicsExpired),
    HEAP_GIVE_BACKS(Kind.COUNTER, "ringcast_heap_give_backs", "Full collections the node asked for to give its heap "
            + "back to the system, after many topics went (at most one a minute).", ServerCounters::heapGiveBacks),
    VIEWS(Kind.GAUGE, "ringcast_views", "Distinct subscription views (maxRate, fields, filter) served, "
            + "at most limits.maxViews.", ServerCounters::views),
    SUBSCRIBE_KEPT_BYTES(Kind.GAUGE, "ringcast_subscribe_kept_bytes", "What clients' SUBSCRIBEs make the node keep "
            + "now, estimated: requests not yet answered (waiting behind a streamed reply) with their resume lists, "
            + "and resume positions of topics the node does not have; at most limits.subscribeBytesPerSession per "
            + "session and limits.subscribeBytesPerPrincipal per principal.", ServerCounters::subscribeKeptBytes),
    INCOMPLETE_MESSAGE_BYTES(Kind.GAUGE, "ringcast_incomplete_message_bytes", "Bytes clients sent that no whole "
            + "message took yet (WebSocket messages and HTTP requests being received), over all connections, at most "
            + "limits.incompleteMessageBytes.", ServerCounters::incompleteMessageBytes),
    INCOMPLETE_MESSAGE_CLOSES(Kind.COUNTER, "ringcast_incomplete_message_closes", "Connections closed because the "
            + "incomplete messages of all connections were past limits.incompleteMessageBytes: those holding the "
            + "most first.", ServerCounters::incompleteMessageCloses),
    HEAP_AFTER_COLLECTION_BYTES(Kind.GAUGE, "ringcast_heap_after_collection_bytes", "Heap in use after the JVM's "
            + "last collection (after a young collection, the older generation's garbage included).",
            ServerCounters::heapAfterCollectionBytes),
    HEAP_REFUSING(Kind.GAUGE, "ringcast_heap_refusing", "1 while new sessions, subscriptions and topics are refused "
            + "because the heap in use after the last collection is past limits.heapRefusePercent of its limit.",
            ServerCounters::heapRefusing),
    HEAP_REFUSALS(Kind.COUNTER, "ringcast_heap_refusals", "New sessions, subscriptions and topics refused because "
            + "the heap in use after the last collection was past limits.heapRefusePercent of its limit.",
            ServerCounters::heapRefusals),
    DIRECT_MEMORY_CLOSES(Kind.COUNTER, "ringcast_direct_memory_closes", "Sessions closed as slow consumers at "
            + "once, without the grace, because the JVM's direct memory was past 85% of its limit: those with the most "
            + "unsent first (also counted in ringcast_slow_consumer_disconnects_total).",
            ServerCounters::directMemoryCloses),
    FAN_OUT_RING_BYTES(Kind.GAUGE, "ringcast_fanout_ring_bytes", "Bytes of updates' frames on the fan-out ring "
            + "not yet written by every event loop, at most pipeline.fanOutRingBytes (past it the sequencer waits).",
            ServerCounters::fanOutRingBytes),
    SUBSCRIPTIONS(Kind.GAUGE, "ringcast_subscriptions", "Open subscriptions over all sessions.",
            ServerCounters::subscriptions),
    OUTBOUND_QUEUED_BYTES(Kind.GAUGE, "ringcast_outbound_queued_bytes", "Bytes queued to all sessions and not sent "
            + "yet (updates and replies, with Netty's per-write overhead).", ServerCounters::outboundQueuedBytes),
    OUTBOUND_QUEUE_LARGEST_BYTES(Kind.GAUGE, "ringcast_outbound_queue_largest_bytes", "The largest of those queues, "
            + "which limits.outboundQueueBytes bounds.", ServerCounters::outboundQueueLargestBytes),
    SUBSCRIBE_REPLIES_PENDING(Kind.GAUGE, "ringcast_subscribe_replies_pending", "Sessions whose subscribe reply is "
            + "streamed: too large for one window, it is produced a window at a time as the client reads it.",
            ServerCounters::subscribeRepliesPending),
    SUBSCRIBE_REPLY_WINDOW_BYTES(Kind.GAUGE, "ringcast_subscribe_reply_window_bytes", "Bytes of streamed subscribe "
            + "replies produced and not yet written to the sockets: at most one window (64 KiB, plus one topic's "
            + "messages) per session with a reply pending.", ServerCounters::subscribeReplyWindowBytes),
    RECEIVED_BYTES(Kind.COUNTER, "ringcast_received_bytes", "Payload bytes of the binary frames clients sent, and "
            + "the bodies of HTTP publishes.", ServerCounters::receivedBytes),
    VALUES_CACHED(Kind.GAUGE, "ringcast_values_cached", "Topics whose newest value is kept (last-value cache on).",
            ServerCounters::valuesCached),
    HISTORY_BYTES(Kind.GAUGE, "ringcast_history_bytes", "Bytes all topics' histories take (their updates' frames, "
            + "newest values included): history.nodeMaxBytes bounds them.",
            ServerCounters::historyBytes),
    HISTORY_ENTRIES(Kind.GAUGE, "ringcast_history_entries", "Updates all topics' histories hold, newest values "
            + "included: history.nodeMaxEntries bounds them (each takes about 160 B of heap beside its frame).",
            ServerCounters::historyEntries),
    HISTORY_UPDATES_LET_GO(Kind.COUNTER, "ringcast_history_updates_let_go", "Older updates let go from the "
            + "histories of the topics updated longest ago, to keep all histories within history.nodeMaxBytes and "
            + "history.nodeMaxEntries: a resume from before them gets a SNAPSHOT with GAP.",
            ServerCounters::historyUpdatesLetGo),
    HISTORY_VALUES_LET_GO(Kind.COUNTER, "ringcast_history_values_let_go", "Newest values let go from the topics "
            + "updated longest ago, once every topic was down to its newest, to keep all histories within "
            + "history.nodeMaxBytes and history.nodeMaxEntries: such a topic has no value for new subscribers "
            + "until its next update.",
            ServerCounters::historyValuesLetGo),
    INBOUND_RING_REMAINING(Kind.GAUGE, "ringcast_inbound_ring_remaining", "Free slots of the inbound (sequencer) ring.",
            ServerCounters::inboundRingRemaining),
    PUBLISHES(Kind.COUNTER, "ringcast_publishes", "Updates sequenced.", ServerCounters::publishes),
    DELIVERIES(Kind.COUNTER, "ringcast_deliveries", "Updates and directed replies written to sessions.",
            ServerCounters::deliveries),
    DELIVERED_FRAMES(Kind.COUNTER, "ringcast_delivered_frames", "WebSocket frames those deliveries took: fewer than "
            + "the deliveries where updates for one session were gathered into one frame.",
            ServerCounters::deliveredFrames),
    DELIVERED_BYTES(Kind.COUNTER, "ringcast_delivered_bytes", "Bytes of those frames as written to the sockets, "
            + "WebSocket headers included.", ServerCounters::deliveredBytes),
    SLOW_CONSUMER_DISCONNECTS(Kind.COUNTER, "ringcast_slow_consumer_disconnects", "Sessions closed with SLOW_CONSUMER.",
            ServerCounters::slowConsumerDisconnects),
    PROTOCOL_ERRORS(Kind.COUNTER, "ringcast_protocol_errors", "ERROR messages sent to clients, fatal or not.",
            ServerCounters::protocolErrors),
    CONNECTIONS_BEFORE_UPGRADE(Kind.GAUGE, "ringcast_connections_before_upgrade", "Connections accepted whose "
            + "WebSocket upgrade has not completed (plain HTTP or mid-upgrade), at most "
            + "limits.maxConnectionsBeforeUpgrade.", ServerCounters::connectionsBeforeUpgrade),
    CONNECTIONS_REFUSED_BEFORE_UPGRADE(Kind.COUNTER, "ringcast_connections_refused_before_upgrade", "Connections "
            + "closed on accept: limits.maxConnectionsBeforeUpgrade were already open.",
            ServerCounters::connectionsRefusedBeforeUpgrade),
    HTTP_TIMEOUTS(Kind.COUNTER, "ringcast_http_timeouts", "Connections closed because the TLS handshake, an HTTP "
            + "request or the WebSocket upgrade did not complete within limits.handshakeTimeoutMs.",
            ServerCounters::httpTimeouts),
    ORIGIN_REFUSALS(Kind.COUNTER, "ringcast_origin_refusals", "WebSocket upgrades refused: the page's origin is not "
            + "allowed.", ServerCounters::originRefusals),
    REPUBLISHES_RECOGNISED(Kind.COUNTER, "ringcast_republishes_recognised", "Publishes sent again after a lost "
            + "connection that were applied before: acked with their sequence, not applied twice.",
            ServerCounters::republishesRecognised),
    PUBLISHER_LEDGERS(Kind.GAUGE, "ringcast_publisher_ledgers", "Publisher ledgers held for REPUBLISH (sessions open "
            + "or not), within limits.publisherLedgers and limits.publisherLedgersPerPrincipal.",
            ServerCounters::publisherLedgers),
    PUBLISHER_LEDGERS_FORGOTTEN(Kind.COUNTER, "ringcast_publisher_ledgers_forgotten", "Ledgers of publishers "
            + "forgotten to stay within those bounds; their REPUBLISHes get PUBLISH_OUTCOME_UNKNOWN (ringcast_errors).",
            ServerCounters::publisherLedgersForgotten),
    CLIENT_PINGS(Kind.COUNTER, "ringcast_client_pings", "PING messages received from clients.",
            ServerCounters::clientPings),
    IDLE_PINGS(Kind.COUNTER, "ringcast_idle_pings", "WebSocket pings sent to sessions silent for half the idle "
            + "timeout.", ServerCounters::idlePings),
    DELTAS_SENT(Kind.COUNTER, "ringcast_deltas_sent", "Updates sent as deltas (each once, however many sessions "
            + "receive it).", ServerCounters::deltasSent),
    DELTA_BYTES_SAVED(Kind.COUNTER, "ringcast_delta_saved_bytes", "Bytes deltas kept off the wire, over every "
            + "delivery.", ServerCounters::deltaBytesSaved),
    COMPRESSED_FRAMES(Kind.COUNTER, "ringcast_compressed_frames", "Frames sent compressed (each compressed once for "
            + "all receivers).", ServerCounters::compressedFrames),
    COMPRESSION_BYTES_IN(Kind.COUNTER, "ringcast_compression_in_bytes", "Payload bytes offered to compression.",
            ServerCounters::compressionBytesIn),
    COMPRESSION_BYTES_OUT(Kind.COUNTER, "ringcast_compression_out_bytes", "What compression made of them (unchanged "
            + "where it did not pay).", ServerCounters::compressionBytesOut),
    CONFLATED_UPDATES(Kind.COUNTER, "ringcast_conflated_updates", "Updates sessions did not receive because a newer "
            + "value replaced them.", ServerCounters::conflatedUpdates),
    CONFIG_RELOADS(Kind.COUNTER, "ringcast_config_reloads{result=applied}", Help.CONFIG_RELOADS,
            ServerCounters::configReloads),
    CONFIG_RELOADS_REFUSED(Kind.COUNTER, "ringcast_config_reloads{result=refused}", Help.CONFIG_RELOADS,
            ServerCounters::configReloadsRefused);

    /** How Prometheus is told to treat a figure. */
    public enum Kind {
        /** Only grows while the node runs ({@code _total} on the wire). */
        COUNTER,
        /** Goes up and down. */
        GAUGE
    }

    /** Help shared by the lines of one labelled family. */
    private static final class Help {
        static final String CONFIG_RELOADS = "Edits of the config file: applied, or refused as invalid.";
    }

    private final Kind kind;
    private final String metricName;
    private final String labelName;
    private final String labelValue;
    private final String help;
    private final String statName;
    private final ToLongFunction<ServerCounters> reader;

    ServerCounter(Kind kind, String series, String help, ToLongFunction<ServerCounters> reader) {
        this.kind = kind;
        int brace = series.indexOf('{');
        this.metricName = brace < 0 ? series : series.substring(0, brace);
        int equals = series.indexOf('=');
        this.labelName = brace < 0 ? null : series.substring(brace + 1, equals);
        this.labelValue = brace < 0 ? null : series.substring(equals + 1, series.length() - 1);
        this.help = help;
        this.statName = camelCase(name());
        this.reader = reader;
    }

    private static String camelCase(String constant) {
        StringBuilder s = new StringBuilder();
        for (String word : constant.toLowerCase(Locale.ROOT).split("_")) {
            s.append(s.length() == 0 ? word : Character.toUpperCase(word.charAt(0)) + word.substring(1));
        }
        return s.toString();
    }

    /** Whether it only grows (a counter) or goes up and down (a gauge). */
    public Kind kind() {
        return kind;
    }

    /** The Prometheus metric (family) name, without {@code _total} and labels, e.g. {@code ringcast_publishes}. */
    public String metricName() {
        return metricName;
    }

    /** The label that sets this line apart in its family, or null when the metric has no labels. */
    public String labelName() {
        return labelName;
    }

    /** This line's value of {@link #labelName()}, or null. */
    public String labelValue() {
        return labelValue;
    }

    /** What the figure counts, as {@code /metrics} explains it. */
    public String help() {
        return help;
    }

    /** Its key in {@code /health}, e.g. {@code deliveredBytes}. */
    public String statName() {
        return statName;
    }

    /** Reads the figure now; for the node's own endpoints ({@link RingcastServer#stats()} is the embedding API). */
    public long read(ServerCounters counters) {
        return reader.applyAsLong(counters);
    }
}
