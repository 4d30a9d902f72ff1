package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;

import java.util.HashSet;

/**
 * The ladder a {@code SUBSCRIBE} with a valid selector climbs before it reaches the sequencer, in
 * this order: its options can be used ({@link #options}: paths and filter parse, {@code rewind}
 * within {@code history.length}), the session may read some topic the selector could match, the id
 * is neither 0 (reserved) nor open already, and the session is under
 * {@code limits.maxSubscriptionsPerSession}.
 *
 * <p>Immutable, one per node; {@link #check} reads the session's I/O fields, so call it on the
 * session's event loop.
 */
final class SubscribeChecks {
    private final int maxSubscriptionsPerSession;
    private final int maxViewsPerSession;
    private final int historyLength;
    private final Views views;
    private final SubscribeMemory memory;

    /**
     * @param maxSubscriptionsPerSession {@code limits.maxSubscriptionsPerSession}
     * @param maxViewsPerSession         {@code limits.maxViewsPerSession}
     * @param historyLength              {@code history.length}: the most a {@code rewind} may ask for
     * @param views                      the node's views: a subscription with a view takes one last
     * @param memory                     what subscribe requests keep: a request is charged before it is handed on
     */
    SubscribeChecks(int maxSubscriptionsPerSession, int maxViewsPerSession, int historyLength, Views views,
                    SubscribeMemory memory) {
        this.maxSubscriptionsPerSession = maxSubscriptionsPerSession;
        this.maxViewsPerSession = maxViewsPerSession;
        this.historyLength = historyLength;
        this.views = views;
        this.memory = memory;
    }

    /** What subscribe requests keep ({@link SubscribeMemory#charge}: after every other check, before the sequencer). */
    SubscribeMemory memory() {
        return memory;
    }

    /** The node's views ({@link Views#acquire}: the ladder's last step, bounded by {@code limits.maxViews}). */
    Views views() {
        return views;
    }

    /**
     * What the codec cannot tell of a subscription's options (it checked their framing and
     * ranges): the {@code fields} paths and the {@code filter} parse (their parsers' messages,
     * docs/subscription-options.md), and {@code rewind} asks for no more than a topic's history
     * keeps.
     *
     * @return {@link Verdict#PASSED}, or {@code INVALID_OPTIONS} with the first fault
     */
    Verdict options(SubscribeOptions options) {
        if (options.isEmpty()) {
            return Verdict.PASSED;
        }
        try {
            if (!options.fields().isEmpty()) {
                FieldProjection.parse(options.fields());
            }
            if (!options.filter().isEmpty()) {
                ValueFilter.parse(options.filter());
            }
        } catch (InvalidOptionsException e) {
            return Verdict.refused(ErrorCode.INVALID_OPTIONS, e.getMessage());
        }
        if (options.rewind() > historyLength) {
            return Verdict.refused(ErrorCode.INVALID_OPTIONS, "rewind: " + options.rewind()
                    + " updates, more than the " + historyLength + " a topic's history keeps (history.length)");
        }
        return Verdict.PASSED;
    }

    /**
     * @return {@link Verdict#PASSED}, or the refusal: {@code PERMISSION_DENIED},
     *         {@code DUPLICATE_SUBSCRIPTION_ID}, {@code TOO_MANY_SUBSCRIPTIONS}
     */
    Verdict check(Session session, int subscriptionId, Selector selector, String selectorText) {
        if (!session.permissions.mayEverRead(selector)) {
            return Verdict.refused(ErrorCode.PERMISSION_DENIED, "subscription to '" + selectorText + "' refused: "
                    + session.permissions.who() + " may read no topic it could match");
        }
        if (subscriptionId == 0 || session.openSubscriptionIds.contains(subscriptionId)) {
            return Verdict.refused(ErrorCode.DUPLICATE_SUBSCRIPTION_ID, "subscription id " + subscriptionId
                    + (subscriptionId == 0 ? " is reserved" : " is already open on this session"));
        }
        if (session.openSubscriptionIds.size() >= maxSubscriptionsPerSession) {
            return Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "session already has "
                    + maxSubscriptionsPerSession + " subscriptions, the limit limits.maxSubscriptionsPerSession");
        }
        return Verdict.PASSED;
    }

    /**
     * Whether the session may have a subscription through the view {@code key}: one it has already,
     * or one more while it has fewer than {@code limits.maxViewsPerSession} distinct views. Each view
     * of a topic costs its filter and projection once per update, so one client's distinct views
     * are work it could multiply; subscriptions sharing a view cost nothing more.
     *
     * @return {@link Verdict#PASSED}, or {@code TOO_MANY_SUBSCRIPTIONS}
     */
    Verdict view(Session session, View.Key key) {
        if (session.openViews.containsValue(key) || new HashSet<>(session.openViews.values()).size() < maxViewsPerSession) {
            return Verdict.PASSED;
        }
        return Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "session already has " + maxViewsPerSession
                + " distinct views, the limit limits.maxViewsPerSession; subscribe with the options of one of them,"
                + " or without maxRate, fields and filter");
    }

    /**
     * The refusal of a subscription whose view would be one more than the node serves
     * ({@link Views#acquire} gave none).
     */
    Verdict noViewLeft(Session session, String selectorText) {
        String who = session.permissions.who();
        if (views.principalAtLimit(who)) {
            return Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription to '" + selectorText
                    + "' refused: " + who + " has made " + views.maxViewsPerPrincipal() + " distinct views, its share"
                    + " (limits.maxViewsPerPrincipal); subscribe with the options of an existing view, or without"
                    + " maxRate, fields and filter");
        }
        return Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription to '" + selectorText
                + "' refused: the server already serves " + views.maxViews() + " distinct views (limits.maxViews);"
                + " subscribe with the options of an existing view, or without maxRate, fields and filter");
    }
}
