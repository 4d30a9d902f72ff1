package io.ringcast.client;

/**
 * Receives the updates of one {@link Subscription}.
 *
 * <p>Its methods are called on the client's event-loop thread, one call at a time, in the order
 * the server sent the messages. <b>A listener must not block</b>: while it runs, the client reads
 * nothing from its connection (no updates, no acks, for every subscription), and a listener that
 * is slow for long enough makes the server drop the session as a slow consumer. Hand heavy work to
 * another thread. Never wait on a future of the same client (e.g. {@code publish(...).join()})
 * inside a listener: it cannot complete while the event loop is blocked.
 */
@FunctionalInterface
public interface UpdateListener {

    /**
     * A snapshot or an update of a topic the subscription's selector matches.
     *
     * @param update the value, its topic and sequence; valid after the call returns
     */
    void onUpdate(Update update);

    /**
     * The topic's value of {@code sequence} no longer passes the subscription's {@code filter}
     * (a subscription with a filter only): nothing more of the topic comes until a value passes
     * again, which then arrives as an {@link UpdateKind#UPDATE}. The last value this listener got
     * of the topic is the last that passed. Does nothing by default.
     *
     * @param topic    the topic path
     * @param sequence the topic's sequence of the value that does not pass
     */
    default void onUnmatched(String topic, long sequence) {
    }

    /**
     * The server refused the subscription (its {@link RingcastException#code()} says why; the
     * subscription is dropped and gets nothing more), or the connection ended with a fatal server
     * error (the client reconnects and the subscription goes on).
     *
     * @param error the refusal or the fatal error; does nothing by default
     */
    default void onError(RingcastException error) {
    }
}
