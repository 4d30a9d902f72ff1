package io.ringcast.benchmark.load;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The official Java client's connections of one {@code --target jetstream} run, one per publisher and
 * per subscriber as in a Ringcast run, and what they share. Client {@code i} lists every server,
 * its own ({@code servers[i % n]}) first, and reconnects through the others for as long as the run
 * lasts. Each connection's reader and writer need a thread of their own; the client's other work (its
 * timers, events, connecting) goes to a few threads all connections share, and so do the publishers'
 * retries ({@link #retries()}).
 *
 * <p>Threads: {@link #prepareStream}, {@link #subscriber} and {@link #publication} from the run's
 * thread; {@link #close} from any thread, any number of times.
 */
final class JetStreamClients implements AutoCloseable {
    /** A publisher's outgoing queue: room for every publish it may have in flight, and their retries. */
    private static final int PUBLISHER_QUEUE_MESSAGES = 2 * PacedPublisher.MAX_IN_FLIGHT;

    private final LoadSpec spec;
    private final int runId;
    private final AtomicLong disconnects;
    private final String[] subjects;
    private final ExecutorService executor = Executors.newCachedThreadPool(new DefaultThreadFactory("nats", true));
    private final ExecutorService callbacks = Executors.newSingleThreadExecutor(
            new DefaultThreadFactory("nats-callback", true));
    private final ExecutorService connects = Executors.newSingleThreadExecutor(
            new DefaultThreadFactory("nats-connect", true));
    private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(2,
            new DefaultThreadFactory("nats-timer", true));
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("jetstream-retry", true));
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final List<JetStreamSubscriber> subscribers = new ArrayList<>();
    private final List<JetStreamPublication> publications = new ArrayList<>();
    /** Set before the connections close: a disconnect then is the run's, not counted. */
    private volatile boolean closing;

    /** @param disconnects counted up when a connection is lost while the run goes on */
    JetStreamClients(LoadSpec spec, int runId, AtomicLong disconnects) {
        this.spec = spec;
        this.runId = runId;
        this.disconnects = disconnects;
        this.subjects = JetStreamStream.subjects(spec);
    }

    /** Makes the stream ready ({@link JetStreamStream#prepare}) through a connection of its own, closed after. */
    void prepareStream(PrintWriter log) throws LoadException, InterruptedException {
        Connection admin = connect("load-admin", 0, new ErrorListener() { }, Options.DEFAULT_MAX_MESSAGES_IN_OUTGOING_QUEUE);
        try {
            JetStreamStream.prepare(admin.jetStreamManagement(), JetStreamStream.replicasFor(spec), log);
        } catch (IOException e) {
            throw new LoadException("JetStream management: " + e.getMessage(), e);
        } finally {
            admin.close();
            connections.remove(admin);
        }
    }

    /** Subscriber {@code i}: connected, and its consumer created, when this returns. */
    JetStreamSubscriber subscriber(int i, SubscriberTally tally) throws LoadException, InterruptedException {
        JetStreamSubscriber subscriber = new JetStreamSubscriber(i, spec, runId, subjects, tally);
        subscribers.add(subscriber);
        subscriber.subscribe(connect("load-sub-" + i, i, subscriber, Options.DEFAULT_MAX_MESSAGES_IN_OUTGOING_QUEUE));
        return subscriber;
    }

    /** Publisher {@code p}'s sending side, connected. */
    JetStreamPublication publication(int p) throws LoadException, InterruptedException {
        Connection connection = connect("load-pub-" + p, p, new ErrorListener() { }, PUBLISHER_QUEUE_MESSAGES);
        try {
            JetStreamPublication publication = new JetStreamPublication(connection.jetStream(), subjects, runId,
                    retries);
            publications.add(publication);
            return publication;
        } catch (IOException e) {
            throw new LoadException("publisher " + p + ": no JetStream context: " + e.getMessage(), e);
        }
    }

    /** Tries sent again by every publication so far, by the outcome of the try before. */
    Map<JetStreamPublication.Outcome, Long> retriedTries() {
        Map<JetStreamPublication.Outcome, Long> byOutcome = new EnumMap<>(JetStreamPublication.Outcome.class);
        for (JetStreamPublication p : publications) {
            p.addRetriedTries(byOutcome);
        }
        return byOutcome;
    }

    private Connection connect(String name, int i, ErrorListener errors, int outgoingQueueMessages)
            throws LoadException, InterruptedException {
        Options options = Options.builder()
                .servers(spec.addressesFor(i))
                .noRandomize() // its own server first, as the Ringcast clients
                .connectionName(name)
                .maxReconnects(-1)
                .maxMessagesInOutgoingQueue(outgoingQueueMessages)
                .executor(executor)
                .callbackExecutor(callbacks)
                .connectExecutor(connects)
                .scheduledExecutor(timers)
                .errorListener(errors)
                .connectionListener((connection, event) -> {
                    if (event == ConnectionListener.Events.DISCONNECTED && !closing) {
                        disconnects.incrementAndGet();
                    }
                })
                .build();
        try {
            Connection connection = Nats.connect(options);
            connections.add(connection);
            return connection;
        } catch (IOException e) {
            throw new LoadException(name + ": could not connect to " + spec.addressesFor(i)[0] + ": " + e.getMessage(), e);
        }
    }

    /**
     * Closes every connection (what is unanswered then fails), then the shared threads; each
     * subscriber's tally may be read after it returns.
     */
    @Override
    public void close() {
        closing = true;
        for (JetStreamPublication p : publications) {
            p.close();
        }
        for (Connection c : connections) {
            try {
                c.close(); // idempotent
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (JetStreamSubscriber s : subscribers) {
            s.awaitQuiet();
        }
        retries.shutdownNow();
        timers.shutdownNow();
        connects.shutdownNow();
        callbacks.shutdownNow();
        executor.shutdownNow();
    }
}
