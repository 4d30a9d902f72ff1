package io.ringcast.client;

/**
 * Learns when the client's sessions start and end. Called on the client's event-loop thread;
 * must not block. Every method has an empty default.
 */
public interface ConnectionListener {

    /**
     * A session started: the server at {@code address} sent {@code WELCOME}. After a reconnect,
     * the open subscriptions have been re-sent (with their resume lists) by the time this runs.
     *
     * @param address   the WebSocket URL connected to, as given to the builder
     * @param sessionId the server's id for the session, for correlating with server logs
     */
    default void onConnected(String address, String sessionId) {
    }

    /**
     * A session that {@link #onConnected} announced has ended. The client reconnects unless it
     * was closed.
     *
     * @param address            the WebSocket URL of the session that ended
     * @param reasonOrNull       why it ended, or null when the client was closed; carries the
     *                           {@link io.ringcast.protocol.ErrorCode} when the server ended the
     *                           session with a fatal error
     * @param webSocketCloseCode the WebSocket close code when known (from the close frame, or the
     *                           one the protocol gives the fatal error), else 0
     */
    default void onDisconnected(String address, RingcastException reasonOrNull, int webSocketCloseCode) {
    }
}
