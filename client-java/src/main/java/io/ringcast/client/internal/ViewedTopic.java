package io.ringcast.client.internal;

/**
 * What one subscription with a view received of one topic through it, for the subscription's
 * whole life across connections or until the topic is removed: its stream is its own (a plain subscription of the same topic,
 * or another view, has other sequences and values), so this is kept per subscription and topic,
 * not per view id, which a new connection may change. Event-loop confined (owned by
 * {@link ClientSubscription}).
 */
final class ViewedTopic {
    /**
     * The last sequence received through the view: delivered, or told no longer matching
     * ({@code UNMATCHED}); 0 before any. Sequences through a view jump by design, so it serves
     * to drop duplicates and fill resume lists, never to count gaps.
     */
    long lastSequence;
    /**
     * The last value delivered through the view (shared with the listeners, never modified): the
     * base of the next viewed delta. An {@code UNMATCHED} leaves it, as the server's view keeps the
     * last value it sent. Null before any and after a gap without a value.
     */
    byte[] lastValue;
}
