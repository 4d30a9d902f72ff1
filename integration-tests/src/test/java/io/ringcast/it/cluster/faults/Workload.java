package io.ringcast.it.cluster.faults;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import io.ringcast.it.cluster.faults.History.Attempt;
import io.ringcast.it.cluster.faults.History.Delivery;
import io.ringcast.it.cluster.faults.History.Outcome;
import io.ringcast.it.cluster.faults.History.TopicValue;
import io.ringcast.testkit.Await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The load of a fault run, recorded into a {@link History}: publishers homed on given nodes (each
 * client with all five addresses, its own publisher id, and the client's retries, i.e.
 * {@code REPUBLISH} after a lost connection and a retry elsewhere after {@code NO_MAJORITY}),
 * publishing unique values {@code <publisher>#<counter>} round robin over {@link #TOPICS} topics at
 * a steady rate; one subscriber homed on each node (failover and resume) on the whole tree. The
 * test thread starts and stops it; publisher threads publish; client event loops record.
 */
final class Workload implements AutoCloseable {
    static final int TOPICS = 30;
    static final String TREE = "faults/p/#";

    private final FaultCluster cluster;
    private final History history;
    private final EventLoopGroup loops = new NioEventLoopGroup(2, new DefaultThreadFactory("fault-clients", true));
    private final List<Publisher> publishers = new ArrayList<>();
    private final List<Subscriber> subscribers = new ArrayList<>();
    /** Each topic's newest acked sequence. */
    private final Map<String, Long> newestAcked = new ConcurrentHashMap<>();
    private final AtomicLong acks = new AtomicLong();

    Workload(FaultCluster cluster, History history) {
        this.cluster = cluster;
        this.history = history;
    }

    static List<String> topics() {
        List<String> topics = new ArrayList<>();
        for (int t = 0; t < TOPICS; t++) {
            topics.add(String.format("faults/p/t%02d", t));
        }
        return topics;
    }

    /** One subscriber on each node, confirmed, then one publisher per home at {@code ratePerPublisher} per second. */
    void start(int[] publisherHomes, int ratePerPublisher) throws Exception {
        for (int node = 1; node <= FaultCluster.NODES; node++) {
            Subscriber s = new Subscriber("subscriber@node-" + node, client("subscriber@node-" + node, node, true));
            history.subscriber(s.name);
            subscribers.add(s);
            s.client.connect().get(30, TimeUnit.SECONDS);
            s.subscription = s.client.subscribe(TREE, s);
        }
        for (Subscriber s : subscribers) {
            s.subscription.confirmed().get(30, TimeUnit.SECONDS);
        }
        for (int home : publisherHomes) {
            String name = "publisher-" + (publishers.size() + 1) + "@node-" + home;
            Publisher p = new Publisher(name, home, client(name, home, true), ratePerPublisher);
            publishers.add(p);
            p.client.connect().get(30, TimeUnit.SECONDS);
        }
        publishers.forEach(p -> p.thread.start());
    }

    /** A client that tries {@code home} first, then (when {@code failover}) the other nodes in order. */
    private RingcastClient client(String name, int home, boolean failover) {
        List<String> urls = new ArrayList<>(cluster.processes().webSocketUrls());
        Collections.rotate(urls, -(home - 1));
        return RingcastClient.builder()
                .addresses((failover ? urls : urls.subList(0, 1)).toArray(new String[0]))
                .clientName(name)
                .eventLoopGroup(loops)
                .reconnectDelay(Duration.ofMillis(50), Duration.ofSeconds(1))
                .build();
    }

    long acks() {
        return acks.get();
    }

    List<Publisher> publishers() {
        return publishers;
    }

    /** Waits until {@code more} further publishes are acked. */
    void awaitAcks(long more, Duration timeout, String when) {
        long target = acks.get() + more;
        Await.until(() -> acks.get() >= target, timeout, Duration.ofMillis(50),
                () -> more + " more acks " + when + " (at " + acks.get() + " of " + target + "); nodes:" + cluster.describe());
    }

    /**
     * Stops publishing, waits up to {@code timeout} for the answers still owed, and records the rest
     * as {@link Outcome#UNANSWERED}.
     */
    void stopPublishers(Duration timeout) {
        publishers.forEach(Publisher::stop);
        try {
            Await.until(() -> publishers.stream().allMatch(p -> p.pending.isEmpty()), timeout, Duration.ofMillis(50),
                    () -> "answers to every publish");
        } catch (AssertionError unanswered) {
            // recorded below: an attempt never answered promises nothing
        }
        for (Publisher p : publishers) {
            p.pending.forEach((value, attempt) -> {
                if (p.pending.remove(value) != null) {
                    history.attempt(new Attempt(p.name, attempt.topic(), value, attempt.sentNs(), history.now(),
                            Outcome.UNANSWERED, 0, null));
                }
            });
        }
    }

    /** Waits up to {@code timeout} until every subscriber has each topic's newest acked sequence; whether they have. */
    boolean awaitSubscribersCaughtUp(Duration timeout) {
        try {
            Await.until(() -> subscribers.stream().allMatch(s -> newestAcked.entrySet().stream()
                    .allMatch(e -> s.highest.getOrDefault(e.getKey(), 0L) >= e.getValue())),
                    timeout, Duration.ofMillis(100), () -> "subscribers caught up");
            return true;
        } catch (AssertionError e) {
            return false;
        }
    }

    /**
     * Each node's final state, read by a fresh subscriber connected to that node only (each topic's
     * opening snapshot, then its updates), into the history; null for a node that does not give
     * every topic in time. A node may still be applying the last entries when the publishers stop
     * (a restarted follower learns the last commit index from the leader's next message, and the
     * subscribers homed on it may have moved to another node): its state is read once every topic
     * reached its newest ack, or as it is after {@code timeout}, when the checker says what it lacks.
     */
    void readFinalStates(Duration timeout) {
        for (int node = 1; node <= FaultCluster.NODES; node++) {
            Map<String, TopicValue> state = new ConcurrentHashMap<>();
            try (RingcastClient c = client("final-state@node-" + node, node, false)) {
                c.connect().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                c.subscribe(TREE, u -> state.merge(u.topic(), new TopicValue(u.sequence(), u.text()),
                        (had, now) -> now.sequence() > had.sequence() ? now : had))
                        .confirmed().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                int expected = newestAcked.size();
                Await.until(() -> state.size() >= expected, timeout, Duration.ofMillis(50), () -> "final state");
                try {
                    Await.until(() -> newestAcked.entrySet().stream().allMatch(e -> state.get(e.getKey()) != null
                            && state.get(e.getKey()).sequence() >= e.getValue()), timeout, Duration.ofMillis(50),
                            () -> "final state at every topic's newest ack");
                } catch (AssertionError behind) {
                    // recorded as it is: the checker names what it lacks
                }
                history.finalState("node-" + node, Map.copyOf(state));
            } catch (Exception | AssertionError e) {
                history.finalState("node-" + node, null);
            }
        }
    }

    @Override
    public void close() {
        publishers.forEach(Publisher::stop);
        publishers.forEach(p -> p.client.close());
        subscribers.forEach(s -> s.client.close());
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * Publishes one value to a single node only, without failover, and records the attempt: how a
     * test asks a node on the minority side whether it takes publishes.
     *
     * @return the attempt's outcome within {@code timeout}
     */
    Attempt probe(int node, Duration timeout) {
        String name = "probe@node-" + node;
        String topic = topics().get(0);
        String value = name + "#" + history.now();
        long sent = history.now();
        try (RingcastClient c = client(name, node, false)) {
            c.connect().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            long seq = c.publish(topic, value.getBytes(StandardCharsets.UTF_8)).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            newestAcked.merge(topic, seq, Math::max);
            return record(new Attempt(name, topic, value, sent, history.now(), Outcome.ACKED, seq, null));
        } catch (ExecutionException e) {
            return record(new Attempt(name, topic, value, sent, history.now(), Outcome.REFUSED, 0, describe(e.getCause())));
        } catch (Exception e) {
            return record(new Attempt(name, topic, value, sent, history.now(), Outcome.UNANSWERED, 0, describe(e)));
        }
    }

    private Attempt record(Attempt a) {
        history.attempt(a);
        return a;
    }

    private static String describe(Throwable error) {
        Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (e instanceof RingcastException r && r.code() != null) {
            return r.code().name();
        }
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }

    /** One publishing client on its own thread. */
    final class Publisher {
        final String name;
        final int home;
        final RingcastClient client;
        final Map<String, Attempt> pending = new ConcurrentHashMap<>();
        private final long periodNs;
        private final Thread thread;
        private volatile boolean running = true;

        Publisher(String name, int home, RingcastClient client, int ratePerSecond) {
            this.name = name;
            this.home = home;
            this.client = client;
            this.periodNs = TimeUnit.SECONDS.toNanos(1) / ratePerSecond;
            this.thread = new Thread(this::run, name);
            this.thread.setDaemon(true);
        }

        private void run() {
            List<String> topics = topics();
            long due = System.nanoTime();
            for (long i = 0; running; i++) {
                String topic = topics.get((int) (i % TOPICS));
                String value = name + "#" + i;
                Attempt sent = new Attempt(name, topic, value, history.now(), 0, Outcome.UNANSWERED, 0, null);
                pending.put(value, sent);
                client.publish(topic, value.getBytes(StandardCharsets.UTF_8)).whenComplete((seq, error) -> {
                    if (pending.remove(value) == null) {
                        return; // recorded as unanswered at the end already
                    }
                    if (error == null) {
                        newestAcked.merge(topic, seq, Math::max);
                        acks.incrementAndGet();
                        history.attempt(new Attempt(name, topic, value, sent.sentNs(), history.now(), Outcome.ACKED, seq, null));
                    } else {
                        history.attempt(new Attempt(name, topic, value, sent.sentNs(), history.now(), Outcome.REFUSED, 0,
                                describe(error)));
                    }
                });
                due += periodNs;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait); // the publishing rate, not a wait for a condition
                }
            }
        }

        void stop() {
            running = false;
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** One subscriber on the whole tree, recording every delivery. */
    final class Subscriber implements io.ringcast.client.UpdateListener {
        final String name;
        final RingcastClient client;
        final Map<String, Long> highest = new ConcurrentHashMap<>();
        Subscription subscription;

        Subscriber(String name, RingcastClient client) {
            this.name = name;
            this.client = client;
        }

        @Override
        public void onUpdate(Update u) {
            history.delivery(new Delivery(name, u.topic(), u.sequence(), u.kind() == UpdateKind.GAP_WITHOUT_VALUE ? "" : u.text(),
                    u.kind(), history.now()));
            highest.merge(u.topic(), u.sequence(), Math::max);
        }
    }
}
