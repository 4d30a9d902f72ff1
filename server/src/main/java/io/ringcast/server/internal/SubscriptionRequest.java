package io.ringcast.server.internal;

import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;

import java.util.Map;

/**
 * A {@code SUBSCRIBE} or {@code UNSUBSCRIBE} of a session whose subscribe reply is being streamed,
 * waiting its turn in {@link Session#pendingRequests}, or that streamed reply itself: where it has
 * got to. Sequencer thread only.
 *
 * <p>A streamed reply goes through the topics in the order of their creation
 * ({@link TopicTree#inCreationOrder}), from {@link #next} up to {@link #end}, the number of topics
 * when the subscription opened: two ints, however many topics it matches. Topics created later
 * joined the subscription at their creation, and are not part of the reply.
 */
final class SubscriptionRequest {
    final boolean unsubscribe;
    final int subscriptionId;
    /** A subscribe's selector; null for an unsubscribe. */
    final Selector selector;
    /** A subscribe's resume list (empty for a first subscribe). */
    final Map<String, Long> resume;
    /** A subscribe's view, or null: plain, or an unsubscribe. */
    final View view;
    /** A first subscribe's {@code rewind}: the last this many updates of each topic (0: no such bound). */
    final int rewind;
    /** A first subscribe's {@code rewindSince}, milliseconds since the epoch (-1: no such bound). */
    final long rewindSince;
    /** The incarnation of each resume position the client named one of (option {@code incarnations}); null: none. */
    private final Map<String, Integer> incarnations;
    /** Whether the subscription is open and its reply under way. */
    boolean opened;
    /** The resume position of a topic the resume list does not name: null for a first subscribe. */
    Long unlisted;
    /** The next topic, in creation order, the reply looks at. */
    int next;
    /** The topics that existed when the subscription opened: the reply looks at those below. */
    int end;
    /** Topics the reply matched so far: {@code SUBSCRIBED}'s count at the end. */
    int matched;

    private SubscriptionRequest(boolean unsubscribe, int subscriptionId, Selector selector, Map<String, Long> resume,
                                View view, SubscribeOptions options) {
        this.unsubscribe = unsubscribe;
        this.subscriptionId = subscriptionId;
        this.selector = selector;
        this.resume = resume;
        this.view = view;
        this.rewind = options.rewind();
        this.rewindSince = options.rewindSince();
        this.incarnations = incarnations(resume, options.incarnations());
    }

    /** The named incarnations by path: the option lists them in the resume list's order. */
    private static Map<String, Integer> incarnations(Map<String, Long> resume, int[] incarnations) {
        if (incarnations.length == 0 || incarnations.length != resume.size()) {
            return null; // none, or a list that named a path twice, whose positions no longer line up
        }
        Map<String, Integer> byPath = null;
        int i = 0;
        for (String path : resume.keySet()) {
            int incarnation = incarnations[i++];
            if (incarnation != 0) {
                if (byPath == null) {
                    byPath = new java.util.HashMap<>();
                }
                byPath.put(path, incarnation);
            }
        }
        return byPath;
    }

    /** The incarnation the client's resume position of {@code path} is of; 0 when it named none. */
    int incarnationOf(String path) {
        if (incarnations == null) {
            return 0;
        }
        Integer incarnation = incarnations.get(path);
        return incarnation == null ? 0 : incarnation;
    }

    /** Whether a first subscribe starts each topic from its history rather than its value ({@link Topic#rewindFrom}). */
    boolean rewinds() {
        return rewind > 0 || rewindSince >= 0;
    }

    static SubscriptionRequest subscribe(int subscriptionId, Selector selector, Map<String, Long> resume, View view,
                                         SubscribeOptions options) {
        return new SubscriptionRequest(false, subscriptionId, selector, resume, view, options);
    }

    static SubscriptionRequest unsubscribe(int subscriptionId) {
        return new SubscriptionRequest(true, subscriptionId, null, Map.of(), null, SubscribeOptions.NONE);
    }
}
