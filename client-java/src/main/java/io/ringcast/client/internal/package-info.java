/**
 * The Netty implementation of {@link io.ringcast.client.RingcastClient}. Not API: may change
 * without notice.
 *
 * <p>Threads: application threads only create commands and offer them to the
 * {@link io.ringcast.client.internal.CommandProxy}; everything else (sessions, connections,
 * topics, subscriptions' routing state, frames) is confined to the one event loop the client
 * runs on, and the classes that hold such state say so and assert it.
 *
 * <p>Stages, in order: {@link io.ringcast.client.internal.CommandProxy} (any thread to the event
 * loop) &rarr; {@link io.ringcast.client.internal.ClientSession} (state that outlives
 * connections) &rarr; {@link io.ringcast.client.internal.FrameBatcher} (messages into frames) &rarr;
 * the pipeline of {@link io.ringcast.client.internal.ClientChannelInitializer}, whose last stage
 * {@link io.ringcast.client.internal.ConnectionHandler} decodes inbound frames back into the
 * session. {@link io.ringcast.client.internal.Connector} opens connections and reconnects.
 */
package io.ringcast.client.internal;
