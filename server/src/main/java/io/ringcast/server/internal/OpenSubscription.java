package io.ringcast.server.internal;

import io.ringcast.protocol.Selector;

import java.util.Map;

/**
 * One open subscription of a session, as the sequencer keeps it ({@link Session#subscriptions}).
 *
 * @param selector the topics it matches
 * @param view     what it sees of them ({@link View}), or null: their updates as published
 * @param missing  single node: the resume positions its client sent for topics this node did not
 *                 have (a node restarted without its state), kept until such a topic is created:
 *                 its numbering starts again below what the client saw, so its first value goes to
 *                 the session as a snapshot after a gap. Charged to the session
 *                 ({@link SubscribeMemory}), and gone with the subscription. Sequencer thread.
 */
record OpenSubscription(Selector selector, View view, Map<String, Long> missing) {
}
