package io.ringcast.server.internal;

import io.ringcast.protocol.SubscribeOptions;

import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One {@link View} per distinct set of view options on the node, counted by the subscriptions that
 * use it, and at most {@code limits.maxViews} of them: every view of a topic costs its filter and
 * projection once per update, so distinct views, unlike subscriptions sharing one, are work a
 * client can multiply. A view counts against the principal whose session made it (anonymous
 * sessions are one principal), at most {@code limits.maxViewsPerPrincipal} each, so that no principal,
 * anonymous sessions least of all, can take the node's every view and leave another none; a view one
 * principal made is open to every session with its options, at no cost to them.
 *
 * <p>Thread contract: {@link #acquire} on the subscribing session's I/O thread (so a refusal is
 * answered there, before the subscription counts as open), {@link #release} on the sequencer thread
 * (unsubscribe, session close). Both change a view's count inside the map's per-key
 * {@link ConcurrentHashMap#compute}, so a view released to nothing and acquired at the same moment
 * is either kept or made anew, never lost while in use.
 */
final class Views {
    private final ConcurrentHashMap<View.Key, View> byKey = new ConcurrentHashMap<>();
    /**
     * One projection per distinct set of fields among the views, with the views using it: views
     * that differ only in filter or rate share it, and each update is projected once for them all.
     * Guarded by itself; changed only as views are made and forgotten.
     */
    private final HashMap<List<String>, SharedProjection> projections = new HashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);
    /** Views in use that each principal made. */
    private final PrincipalShares madeBy;
    private final int maxViews;

    /** No bound per principal: {@link #Views(int, int)}. */
    Views(int maxViews) {
        this(maxViews, maxViews);
    }

    /**
     * @param maxViews             {@code limits.maxViews}: distinct views at once
     * @param maxViewsPerPrincipal {@code limits.maxViewsPerPrincipal}: of those, made by one principal
     */
    Views(int maxViews, int maxViewsPerPrincipal) {
        this.maxViews = maxViews;
        this.madeBy = new PrincipalShares(maxViewsPerPrincipal);
    }

    /**
     * The view of {@code options}, which must make one ({@link SubscribeOptions#makesView}), one use
     * more; null when it would be a new view beyond {@code limits.maxViews}, or beyond
     * {@code limits.maxViewsPerPrincipal} made by {@code principal} ({@link Permissions#who}).
     */
    View acquire(SubscribeOptions options, String principal) {
        assert options.makesView() : options + " make no view";
        return byKey.compute(View.Key.of(options), (key, view) -> {
            if (view == null) {
                if (byKey.size() >= maxViews || !madeBy.tryTake(principal)) {
                    return null;
                }
                view = new View(nextId.getAndIncrement(), key, principal, projectionOf(key.sortedFields()));
            }
            view.uses++;
            return view;
        });
    }

    /** Whether {@code principal} has made its share of views ({@code limits.maxViewsPerPrincipal}). */
    boolean principalAtLimit(String principal) {
        return madeBy.full(principal);
    }

    /** One use fewer; a view no subscription uses is forgotten (a later one with its options gets a new id). */
    void release(View view) {
        byKey.compute(view.key, (key, current) -> {
            if (current == null) {
                return null;
            }
            if (--current.uses > 0) {
                return current;
            }
            madeBy.give(current.madeBy);
            forgetProjection(key.sortedFields());
            return null;
        });
    }

    /** A projection and the views using it. */
    private static final class SharedProjection {
        final FieldProjection projection;
        int views;

        SharedProjection(FieldProjection projection) {
            this.projection = projection;
        }
    }

    /** The projection of {@code sortedFields} for one view more; null for none. */
    private FieldProjection projectionOf(List<String> sortedFields) {
        if (sortedFields.isEmpty()) {
            return null;
        }
        synchronized (projections) {
            SharedProjection shared = projections.computeIfAbsent(sortedFields,
                    f -> new SharedProjection(FieldProjection.parse(f)));
            shared.views++;
            return shared.projection;
        }
    }

    private void forgetProjection(List<String> sortedFields) {
        if (sortedFields.isEmpty()) {
            return;
        }
        synchronized (projections) {
            SharedProjection shared = projections.get(sortedFields);
            if (--shared.views == 0) {
                projections.remove(sortedFields);
            }
        }
    }

    /** The distinct views in use. */
    int size() {
        return byKey.size();
    }

    int maxViews() {
        return maxViews;
    }

    int maxViewsPerPrincipal() {
        return madeBy.max();
    }
}
