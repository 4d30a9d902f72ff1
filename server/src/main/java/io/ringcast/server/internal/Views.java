package io.ringcast.server.internal;

import io.ringcast.protocol.SubscribeOptions;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One {@link View} per distinct set of view options on the node, counted by the subscriptions that
 * use it, and at most {@code limits.maxViews} of them: every view of a topic costs its filter and
 * projection once per update, so distinct views, unlike subscriptions sharing one, are work a
 * client can multiply.
 *
 * <p>Thread contract: {@link #acquire} on the subscribing session's I/O thread (so a refusal is
 * answered there, before the subscription counts as open), {@link #release} on the sequencer thread
 * (unsubscribe, session close). Both change a view's count inside the map's per-key
 * {@link ConcurrentHashMap#compute}, so a view released to nothing and acquired at the same moment
 * is either kept or made anew, never lost while in use.
 */
final class Views {
    private final ConcurrentHashMap<View.Key, View> byKey = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);
    private final int maxViews;

    /** @param maxViews {@code limits.maxViews}: distinct views at once */
    Views(int maxViews) {
        this.maxViews = maxViews;
    }

    /**
     * The view of {@code options}, which must make one ({@link SubscribeOptions#makesView}), one use
     * more; null when it would be a new view beyond {@code limits.maxViews}.
     */
    View acquire(SubscribeOptions options) {
        assert options.makesView() : options + " make no view";
        return byKey.compute(View.Key.of(options), (key, view) -> {
            if (view == null) {
                if (byKey.size() >= maxViews) {
                    return null;
                }
                view = new View(nextId.getAndIncrement(), key);
            }
            view.uses++;
            return view;
        });
    }

    /** One use fewer; a view no subscription uses is forgotten (a later one with its options gets a new id). */
    void release(View view) {
        byKey.compute(view.key, (key, current) -> {
            if (current == null) {
                return null;
            }
            return --current.uses == 0 ? null : current;
        });
    }

    /** The distinct views in use. */
    int size() {
        return byKey.size();
    }

    int maxViews() {
        return maxViews;
    }
}
