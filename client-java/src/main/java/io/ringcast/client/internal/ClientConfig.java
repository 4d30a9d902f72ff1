package io.ringcast.client.internal;

import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.Transport;
import io.ringcast.client.ConnectionListener;

import java.net.URI;
import java.util.List;

/**
 * The client's settings, checked by {@link io.ringcast.client.RingcastClient.Builder}. Immutable.
 *
 * @param addresses               WebSocket URLs, tried round robin
 * @param clientName              sent in {@code HELLO}
 * @param eventLoopGroup          a group lent by the application, or null for a client-owned one
 * @param transport               what the connections run on: the lent group's transport, or the one
 *                                the client-owned group is made of (resolved, never {@code AUTO})
 * @param reconnectDelayInitialMs first reconnect delay ceiling
 * @param reconnectDelayMaxMs     largest reconnect delay
 * @param connectTimeoutMs        limit of {@code connect()} and of each attempt
 * @param maxFrameBytes           largest inbound WebSocket message
 * @param maxInFlightPublishes    most publishes queued or unacked at once
 * @param connectionListener      told of session starts and ends
 * @param compression             offer permessage-deflate
 * @param tls                     TLS for {@code wss://} addresses; null when there are none
 * @param credentials             sent in {@code HELLO}
 */
public record ClientConfig(List<URI> addresses, String clientName, EventLoopGroup eventLoopGroup, Transport transport,
                           long reconnectDelayInitialMs, long reconnectDelayMaxMs, long connectTimeoutMs,
                           int maxFrameBytes, int maxInFlightPublishes, ConnectionListener connectionListener,
                           boolean compression, SslContext tls, Credentials credentials) {
}
