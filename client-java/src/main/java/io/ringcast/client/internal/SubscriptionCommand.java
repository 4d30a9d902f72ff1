package io.ringcast.client.internal;

import io.ringcast.client.RingcastException;

/** Carries {@code subscribe()} or {@code Subscription.close()} to the event loop. */
final class SubscriptionCommand implements ClientCommand {
    private final ClientSubscription subscription;
    private final boolean subscribe;

    SubscriptionCommand(ClientSubscription subscription, boolean subscribe) {
        this.subscription = subscription;
        this.subscribe = subscribe;
    }

    @Override
    public void execute(ClientSession session) {
        if (subscribe) {
            session.subscribe(subscription);
        } else {
            session.unsubscribe(subscription);
        }
    }

    @Override
    public void fail(RingcastException error) {
        if (subscribe) {
            subscription.abandon(error);
        }
    }
}
