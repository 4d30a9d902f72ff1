package io.ringcast.server.internal;

import io.ringcast.server.config.ServerConfig;

/**
 * What every {@link SessionHandler} of a node uses, and nothing else: built once at start and
 * handed to each connection's handler. Immutable; each member is thread-safe or says which thread
 * may call it.
 *
 * @param limits          the {@code limits} section
 * @param idleTimeoutMs   {@code session.idleTimeoutMs}
 * @param sessions        ids, counts and channels of the open sessions, and each loop's poller
 * @param sequencer       the inbound ring, the only way to the sequencer
 * @param subscribeChecks the checks of every {@code SUBSCRIBE}
 * @param login           the login step of a {@code HELLO}
 * @param clusterRoute    where publishes go in a cluster; null for a single node
 * @param outboundLimit   {@code limits.outboundQueueBytes}, checked after every reply
 * @param counters        the node's counters
 */
record SessionServices(ServerConfig.Limits limits, long idleTimeoutMs, OpenSessions sessions,
                       SequencerProxy sequencer, SubscribeChecks subscribeChecks, Login login,
                       ClusterRoute clusterRoute, OutboundLimit outboundLimit, ServerCounters counters) {
}
