package io.ringcast.server;

/**
 * A snapshot of a node's counters.
 *
 * @param sessions                open WebSocket sessions
 * @param topics                  topics in the tree
 * @param publishes               updates sequenced since start
 * @param deliveries              update and snapshot frames written to sessions since start
 * @param deliveredBytes          bytes of those frames as written (WebSocket headers included)
 * @param slowConsumerDisconnects sessions closed with {@code SLOW_CONSUMER}
 * @param protocolErrors          {@code ERROR}s sent to clients, fatal or not
 * @param clientPings             {@code PING}s received from clients
 * @param idlePings               WebSocket pings sent to sessions silent for half the idle timeout
 * @param originRefusals          WebSocket upgrades refused: the page's origin is not in {@code security.allowedOrigins}
 * @param valuesCached            topics whose newest value is cached
 * @param deltasSent              updates sent as deltas (each counted once, however many receive it)
 * @param deltaBytesSaved         bytes deltas kept off the wire, over every delivery
 * @param compressedFrames        frames sent compressed (each compressed once for all its receivers)
 * @param compressionBytesIn      payload bytes offered to compression
 * @param compressionBytesOut     what they became (compressed, or unchanged where it did not pay)
 * @param conflatedUpdates        updates sessions did not receive because conflation replaced them by a newer value
 * @param configReloads           {@code features} changes applied from the config file while running
 * @param configReloadsRefused    config file edits refused as invalid (the settings in force stayed)
 * @param republishesRecognised   publishes sent again ({@code REPUBLISH}) that were applied before: acked, not applied twice
 * @param connectionsBeforeUpgrade        connections accepted whose WebSocket upgrade has not completed (plain
 *                                        HTTP or mid-upgrade), at most {@code limits.maxConnectionsBeforeUpgrade}
 * @param connectionsRefusedBeforeUpgrade connections closed on accept because that many were already open
 * @param httpTimeouts                    connections closed because their TLS handshake, an HTTP request or the
 *                                        upgrade did not complete within {@code limits.handshakeTimeoutMs}
 * @param publisherLedgers        publisher ledgers held for {@code REPUBLISH} (open sessions' and publishers' away)
 * @param publisherLedgersForgotten ledgers of publishers away forgotten to stay within {@code limits.publisherLedgers*}
 */
public record ServerStats(int sessions, int topics, long publishes, long deliveries, long deliveredBytes,
                          long slowConsumerDisconnects,
                          long protocolErrors, long clientPings, long idlePings, long originRefusals,
                          int valuesCached, long deltasSent, long deltaBytesSaved,
                          long compressedFrames, long compressionBytesIn, long compressionBytesOut,
                          long conflatedUpdates, long configReloads, long configReloadsRefused,
                          long republishesRecognised, int connectionsBeforeUpgrade,
                          long connectionsRefusedBeforeUpgrade, long httpTimeouts, int publisherLedgers,
                          long publisherLedgersForgotten) {
}
