package io.ringcast.client.internal;

import io.netty.buffer.ByteBufUtil;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.Selector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Subscription}. {@link #close()} and the getters are safe from any thread; the routing
 * fields ({@link #id}, {@link #confirmedOnce}, {@link #liveConnection}) and every listener call
 * belong to the event loop ({@link ClientSession}).
 */
final class ClientSubscription implements Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(ClientSubscription.class);

    final Selector selector;
    final int selectorBytes;
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

    ClientSubscription(Selector selector, UpdateListener listener, CommandProxy commands) {
        this.selector = selector;
        this.selectorBytes = ByteBufUtil.utf8Bytes(selector.text());
        this.listener = listener;
        this.commands = commands;
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
        return "Subscription[" + id + " '" + selector.text() + "']";
    }
}
