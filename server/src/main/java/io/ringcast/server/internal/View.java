package io.ringcast.server.internal;

import io.ringcast.protocol.SubscribeOptions;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One distinct view: what a subscription's {@code fields}, {@code filter} and {@code maxRate} make
 * of a topic's updates (docs/subscription-options.md). Subscriptions with the same options, on any
 * session, share one view ({@link Views}), and each topic does a view's work once per update for
 * all of them ({@link TopicView}).
 *
 * <p>Made on an I/O thread ({@link Views#acquire}); its projection and filter are then evaluated by
 * the sequencer only (they assert it). {@link #uses} belongs to {@link Views}.
 */
final class View {
    /** The view's id on the wire ({@code VIEW}, {@code VIEWED}), from 1. */
    final int id;
    final Key key;
    /** {@code fields}, or null: the whole value; one instance for all views with the same fields ({@link Views}). */
    final FieldProjection projection;
    /** {@code filter}, or null: every value. */
    final ValueFilter filter;
    /** {@code maxRate} as the shortest time between two sends of one topic, in nanoseconds; 0 for no limit. */
    final long periodNanos;
    /** Open subscriptions with this view; guarded by {@link Views}' map. */
    int uses;
    /** The principal whose session made it, whose share of views it counts against ({@link Views}). */
    final String madeBy;

    /**
     * What makes two views the same: the paths as a sorted list (a projection writes fields in the
     * value's order, whatever the order they were named in), the filter's text and the rate.
     */
    record Key(List<String> sortedFields, String filter, int maxRateThousandths) {
        static Key of(SubscribeOptions options) {
            List<String> fields = new ArrayList<>(options.fields());
            Collections.sort(fields);
            return new Key(List.copyOf(fields), options.filter(), options.maxRateThousandths());
        }
    }

    /**
     * @param projection what {@code key}'s fields make, shared with the other views with those fields; null for none
     * @throws InvalidOptionsException when the filter does not parse (checked before, by
     *         {@link SubscribeChecks#options}, so not expected here)
     */
    View(int id, Key key, String madeBy, FieldProjection projection) {
        this.id = id;
        this.key = key;
        this.madeBy = madeBy;
        this.projection = projection;
        this.filter = key.filter().isEmpty() ? null : ValueFilter.parse(key.filter());
        this.periodNanos = key.maxRateThousandths() == 0 ? 0
                : Math.max(1, 1_000_000_000_000L / key.maxRateThousandths());
    }

    @Override
    public String toString() {
        return "view " + id + " " + key;
    }
}
