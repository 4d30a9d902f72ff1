package io.ringcast.client.internal;

/** What a {@link ConnectionHandler} tells the {@link Connector}; called on the event loop. */
interface ConnectionObserver {

    /** The server's {@code WELCOME} arrived; the session is attached already. */
    void onWelcome(ConnectionHandler connection);

    /** The channel turned writable again: queued commands may be drained. */
    void onWritable();
}
