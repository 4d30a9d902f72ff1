package io.ringcast.server.internal;

import io.ringcast.protocol.Selector;

/**
 * One open subscription of a session, as the sequencer keeps it ({@link Session#subscriptions}).
 *
 * @param selector the topics it matches
 * @param view     what it sees of them ({@link View}), or null: their updates as published
 */
record OpenSubscription(Selector selector, View view) {
}
