package io.ringcast.client;

import java.util.concurrent.CompletableFuture;

/**
 * A subscription made by {@link RingcastClient#subscribe}. It stays open across reconnects (the
 * client re-subscribes and resumes) until {@link #close()} or a server error for it.
 * Safe to use from any thread.
 */
public interface Subscription extends AutoCloseable {

    /** {@return the selector as given to {@link RingcastClient#subscribe}} */
    String selector();

    /**
     * {@return a future that completes when the server first confirms the subscription}
     *
     * <p>Completes when the server first confirms the subscription ({@code SUBSCRIBED}), after the
     * snapshots of the topics it matched were delivered. Fails with a {@link RingcastException}
     * carrying the {@link io.ringcast.protocol.ErrorCode} when the server refuses it, and without
     * one when the subscription or the client is closed first. Completes on the client's event-loop thread: do not block in
     * callbacks chained to it.
     */
    CompletableFuture<Void> confirmed();

    /** Stops the subscription: no more listener calls, and the server is told. Idempotent. */
    @Override
    void close();
}
