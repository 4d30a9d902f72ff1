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
     * The topic was removed (docs/protocol.md, "Removing topics"), after its update
     * {@code lastSequence}: nothing more of it comes, and the client forgot its sequence and value.
     * The subscription stays open: a later publish to the path creates the topic again from
     * sequence 1, which this listener then receives like any new topic (an
     * {@link UpdateKind#UPDATE} from sequence 1, or a snapshot). Called once per subscription that
     * received the topic, plain or through its view. When the client learns of the removal only
     * from the next incarnation of the topic (the removal happened while it was disconnected),
     * {@code lastSequence} is the last sequence of it the client received. Does nothing by default.
     *
     * @param topic        the topic path
     * @param lastSequence the topic's last sequence before its removal
     */
    default void onRemoved(String topic, long lastSequence) {
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
