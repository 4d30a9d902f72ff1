package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.Selector;

/**
 * The ladder a {@code SUBSCRIBE} with a valid selector climbs before it reaches the sequencer, in
 * this order: the session may read some topic the selector could match, the id is neither 0
 * (reserved) nor open already, and the session is under {@code limits.maxSubscriptionsPerSession}.
 *
 * <p>Immutable, one per node; it reads the session's I/O fields, so call it on the session's
 * event loop.
 */
final class SubscribeChecks {
    private final int maxSubscriptionsPerSession;

    SubscribeChecks(int maxSubscriptionsPerSession) {
        this.maxSubscriptionsPerSession = maxSubscriptionsPerSession;
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
}
