package io.ringcast.client.internal;

import io.netty.buffer.ByteBufUtil;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Subscription}. {@link #close()} and the getters are safe from any thread; the routing
 * fields ({@link #id}, {@link #confirmedOnce}, {@link #liveConnection}, {@link #viewId},
 * {@link #viewedTopics}) and every listener call belong to the event loop ({@link ClientSession}).
 */
final class ClientSubscription implements Subscription {
    /** {@link #viewId} before the server named the view on this connection. */
    static final long NO_VIEW = -1;

    private static final Logger LOG = LoggerFactory.getLogger(ClientSubscription.class);

    final Selector selector;
    final int selectorBytes;
    /** Sent in every {@code SUBSCRIBE} of this subscription, the first and each resume. */
    final SubscribeOptions options;
    /**
     * Per topic, what it received through its view, for its life across connections, in the
     * order first received (its resume list's order); null for a plain subscription (one without
     * a view), which takes only messages not flagged {@code VIEWED} and shares the topics'
     * {@link TopicState}.
     */
    final Map<TopicState, ViewedTopic> viewedTopics;
    private final UpdateListener listener;
    private final CommandProxy commands;
    private final CompletableFuture<Void> confirmed = new CompletableFuture<>();
    /** Set once the subscription is over: closed by the application, refused, or the client closed. */
    private final AtomicBoolean closed = new AtomicBoolean();

    /** The wire subscription id, 0 until the session registered it. Event loop. */
    int id;
    /** Whether the server has confirmed it on some connection: from then on it is re-sent with a resume list. */
    boolean confirmedOnce;
    /**
     * The connection number on which it receives {@code UPDATE}s: set when the server confirmed
     * it, or when it was re-sent with a resume list. Before that, the {@code SNAPSHOT}s that answer
     * its {@code SUBSCRIBE} are newer than any update another subscription brings in.
     */
    int liveConnection = -1;
    /**
     * The server's id of its view on this connection (a {@code u32}), from the {@code VIEW} that
     * starts the reply to its {@code SUBSCRIBE}; {@link #NO_VIEW} until then, and again from each
     * re-sent {@code SUBSCRIBE}: another node, or a restarted server, numbers views its own way.
     */
    long viewId = NO_VIEW;

    ClientSubscription(Selector selector, SubscribeOptions options, UpdateListener listener, CommandProxy commands) {
        this.selector = selector;
        this.selectorBytes = ByteBufUtil.utf8Bytes(selector.text());
        this.options = options;
        this.viewedTopics = options.makesView() ? new LinkedHashMap<>() : null;
        this.listener = listener;
        this.commands = commands;
    }

    /** Whether it has a view: it takes messages flagged {@code VIEWED} with its {@link #viewId}, and no others. */
    boolean hasView() {
        return viewedTopics != null;
    }

    /** Event loop: what it received of this topic through its view; only for a subscription with one. */
    ViewedTopic viewedTopic(TopicState t) {
        return viewedTopics.computeIfAbsent(t, k -> new ViewedTopic());
    }

    @Override
    public String selector() {
        return selector.text();
    }

    @Override
    public CompletableFuture<Void> confirmed() {
        return confirmed;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            confirmed.completeExceptionally(new RingcastException("subscription to '" + selector.text()
                    + "' closed before the server confirmed it"));
            commands.offer(new SubscriptionCommand(this, false));
        }
    }

    boolean isClosed() {
        return closed.get();
    }

    /** Event loop: the server confirmed it ({@code SUBSCRIBED}). */
    void confirm() {
        confirmed.complete(null);
    }

    /** Event loop: hands an update to the listener unless the subscription is over. */
    void deliver(Update update) {
        if (closed.get()) {
            return;
        }
        try {
            listener.onUpdate(update);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            LOG.warn("listener of subscription '{}' threw on {}", selector.text(), update, e);
        }
    }

    /** Event loop: tells the listener that the topic's value of {@code sequence} no longer passes the view's filter. */
    void unmatched(String topic, long sequence) {
        if (closed.get()) {
            return;
        }
        try {
            listener.onUnmatched(topic, sequence);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            LOG.warn("listener of subscription '{}' threw on unmatched {} #{}", selector.text(), topic, sequence, e);
        }
    }

    /** Event loop: tells the listener that the topic was removed after its update {@code lastSequence}. */
    void removed(String topic, long lastSequence) {
        if (closed.get()) {
            return;
        }
        try {
            listener.onRemoved(topic, lastSequence);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            LOG.warn("listener of subscription '{}' threw on removed {} #{}", selector.text(), topic, lastSequence, e);
        }
    }

    /** Event loop: an error the subscription survives (the connection ended with a fatal error). */
    void notifyError(RingcastException error) {
        if (!closed.get()) {
            callOnError(error);
        }
    }

    /** Event loop: the server refused it; it is over. */
    void refused(RingcastException error) {
        if (closed.compareAndSet(false, true)) {
            confirmed.completeExceptionally(error);
            callOnError(error);
        }
    }

    /** A listener that throws is logged, never allowed to break the connection. */
    private void callOnError(RingcastException error) {
        try {
            listener.onError(error);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            LOG.warn("listener of subscription '{}' threw on error {}", selector.text(), error.getMessage(), e);
        }
    }

    /** Any thread: the client closed before or while it was open; no listener call. */
    void abandon(RingcastException error) {
        closed.set(true);
        confirmed.completeExceptionally(error);
    }

    @Override
    public String toString() {
        return "Subscription[" + id + " '" + selector.text() + "'" + (options.isEmpty() ? "" : " " + options) + "]";
    }
}
