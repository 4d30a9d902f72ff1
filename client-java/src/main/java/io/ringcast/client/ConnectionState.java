package io.ringcast.client;

/** Where a {@link RingcastClient} stands with its server. */
public enum ConnectionState {
    /** Built; {@link RingcastClient#connect()} not called yet. */
    NEW,
    /** {@link RingcastClient#connect()} called, no {@code WELCOME} received yet. */
    CONNECTING,
    /** A session is open: the server's {@code WELCOME} arrived on the current connection. */
    CONNECTED,
    /** The connection dropped; the client is trying the addresses again with backoff. */
    RECONNECTING,
    /** {@link RingcastClient#close()} was called, or {@link RingcastClient#connect()} gave up. Final. */
    CLOSED
}
