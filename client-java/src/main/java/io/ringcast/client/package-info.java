/**
 * The Ringcast Java client: {@link io.ringcast.client.RingcastClient} and the types it hands out.
 *
 * <p>This package holds the public API only: interfaces, the builder, value types and
 * exceptions. The implementation lives in {@code io.ringcast.client.internal} and may change
 * without notice. Usage, threading rules and reconnect semantics: {@code docs/java-client.md}.
 */
package io.ringcast.client;
