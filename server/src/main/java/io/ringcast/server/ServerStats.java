package io.ringcast.server;

/**
 * A snapshot of a node's counters.
 *
 * @param sessions                open WebSocket sessions
 * @param topics                  topics in the tree
 * @param publishes               updates sequenced since start
 * @param deliveries              update and snapshot frames written to sessions since start
 * @param slowConsumerDisconnects sessions closed with {@code SLOW_CONSUMER}
 * @param protocolErrors          {@code ERROR}s sent to clients, fatal or not
 */
public record ServerStats(int sessions, int topics, long publishes, long deliveries, long slowConsumerDisconnects,
                          long protocolErrors) {
}
