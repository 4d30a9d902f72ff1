package io.ringcast.it.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.client.RingcastClient;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.FailOnLeakExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * The cluster's promise, proven with real node processes: five nodes, 500 subscribers spread over
 * them, publishers on two nodes; a node killed with SIGKILL, restarted and rejoining, or frozen
 * with SIGSTOP, and at the end every subscriber has every acked update of every topic, in order,
 * without a gap or a duplicate. The nodes encrypt what they send each other with a shared secret;
 * a sixth process with another secret is refused.
 *
 * <p>Netty's leak detection is sampled ({@code SIMPLE}) while the cluster carries traffic: the 500
 * clients in this JVM receive 50,000 updates a second, and paranoid detection's stack trace per
 * buffer access made their two event loops seconds late, so a connect to the restarted node found
 * no {@code WELCOME} within the client's 10 s (CI, 2026-11-29; 20 connects took 12 s paranoid,
 * 0.25 s sampled).
 */
// a backstop for a step that hangs: a run takes 40-60 s, and each step's own await names what it waited for
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClusterFailoverTest {
    private static final Logger log = LoggerFactory.getLogger(ClusterFailoverTest.class);
    private static final int NODES = 5;
    private static final int SUBSCRIBERS = 500;
    private static final int TOPICS = 20;
    /** Publishes per second per publisher. */
    private static final int RATE = 50;
    private static final String NODE_CONFIG = "history:\n  length: 4096\n";

    private final List<StreamCheck> subscribers = new ArrayList<>();
    private final List<Publisher> publishers = new ArrayList<>();
    private final Map<String, Long> newestAcked = new ConcurrentHashMap<>();
    private EventLoopGroup clientLoops;
    private ClusterProcesses cluster;

    @AfterEach
    void stop() {
        publishers.forEach(Publisher::stop);
        subscribers.forEach(s -> s.client.close());
        if (clientLoops != null) {
            clientLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * One cluster through three faults in turn, its 500 subscribers and two publishers all along (a
     * cluster each took 30 s of the suite): a stranger with another key knocks, a node is frozen and
     * thawed, the leader is killed and restarted; then every stream is complete.
     */
    @Test
    void aStrangerIsRefusedAFrozenNodeCatchesUpAndAKilledLeadersRestartCostNoSubscriberAnUpdate(TestInfo info)
            throws Exception {
        FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.SIMPLE, () -> {
            startClusterWithTraffic(info);
            strangerIsRefused();
            freezeANodeAndThawIt();
            killTheLeaderAndRestartIt();
            assertEveryStreamComplete();
        });
    }

    private void freezeANodeAndThawIt() throws Exception {
        int frozen = 5; // no publisher connects to it first; it may be the leader
        log.info("freezing node-{} with SIGSTOP", frozen);
        cluster.pause(frozen);
        awaitViewsWithout(frozen);
        awaitAckedGrowth("while node-5 is frozen");
        log.info("thawing node-{}", frozen);
        cluster.resume(frozen);
        awaitViewsOfAll();
        awaitAckedGrowth("after node-5 rejoined");
    }

    private void killTheLeaderAndRestartIt() throws Exception {
        int victim = leader();
        log.info("killing node-{}, the Raft leader", victim);
        cluster.kill9(victim);
        awaitViewsWithout(victim);
        awaitAckedGrowth("after the kill");

        log.info("restarting node-{}", victim);
        cluster.restart(victim);
        awaitViewsOfAll();
        awaitAckedGrowth("after the restart");
        // new subscribers on the node that came back start from its state
        addSubscribers(20, victim);
        awaitAckedGrowth("with subscribers on the restarted node");
    }

    /** Every node but {@code gone} sees a view of the others. */
    private void awaitViewsWithout(int gone) {
        for (int node = 1; node <= NODES; node++) {
            if (node != gone) {
                cluster.awaitView(node, NODES - 1, Duration.ofSeconds(30));
            }
        }
    }

    /** Every node sees a view of all five. */
    private void awaitViewsOfAll() {
        for (int node = 1; node <= NODES; node++) {
            cluster.awaitView(node, NODES, Duration.ofSeconds(60));
        }
    }

    // ------------------------------------------------------------------ steps

    /**
     * A sixth process that knows every member's address but not the cluster's secret tries to join
     * while traffic flows: a member logs that it refused it, the stranger never joins, every view
     * stays the five, and publishes go on being acked.
     */
    private void strangerIsRefused() throws Exception {
        String name = "node-" + (NODES + 1);
        log.info("starting {} with another cluster key", name);
        cluster.startStranger();
        await(() -> IntStream.rangeClosed(1, NODES).anyMatch(n -> cluster.logOccurrences(n, "refused " + name) > 0),
                Duration.ofSeconds(60), "a member logging that it refused " + name + " for its key");
        awaitAckedGrowth("while " + name + " knocks");
        for (int node = 1; node <= NODES; node++) {
            cluster.awaitView(node, NODES, Duration.ofSeconds(10));
        }
        assertThat(Files.readString(cluster.strangerLog())).as("the stranger's log").doesNotContain("cluster: joined as");
        // gone before the freeze: in one CI run (2026-11-29) a frozen node did not merge back within
        // 60 s while the stranger still knocked, and in none without it (the fault suite's
        // pause-leader); a stranger's part in merges is an open question (docs/clustering.md)
        cluster.stopStranger();
    }

    private void startClusterWithTraffic(TestInfo info) throws Exception {
        cluster = ClusterProcesses.start(info.getTestMethod().orElseThrow().getName(), NODES, NODE_CONFIG);
        clientLoops = new NioEventLoopGroup(2, new DefaultThreadFactory("test-clients", true));
        addSubscribers(SUBSCRIBERS, 0);
        publishers.add(new Publisher("publisher-1", client("publisher-1", 1)));
        // the second publisher on the node the kill test kills: its publishes in flight are sent
        // again through the next node, and must be applied once
        int second = leader() == 1 ? 2 : leader();
        publishers.add(new Publisher("publisher-2", client("publisher-2", second)));
        publishers.forEach(Publisher::start);
        awaitAckedGrowth("before any failure");
    }

    /** {@code count} subscribers to {@code load/#}, on {@code node} first, or spread over all nodes when 0. */
    private void addSubscribers(int count, int node) throws Exception {
        List<StreamCheck> added = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int first = node != 0 ? node : i % NODES + 1;
            String name = "subscriber-" + subscribers.size() + "@node-" + first;
            StreamCheck s = new StreamCheck(name, client(name, first));
            if (subscribers.size() < NODES) {
                s.checkingValuesOnce(); // one per node: a publish sent again must not be applied twice
            }
            s.client.connect().get(30, TimeUnit.SECONDS);
            s.subscription = s.client.subscribe("load/#", s);
            added.add(s);
            subscribers.add(s);
        }
        for (StreamCheck s : added) {
            s.subscription.confirmed().get(30, TimeUnit.SECONDS);
        }
    }

    /** A client that tries {@code firstNode} first, then the others in order. */
    private RingcastClient client(String name, int firstNode) {
        List<String> urls = new ArrayList<>(cluster.webSocketUrls());
        Collections.rotate(urls, -(firstNode - 1));
        return RingcastClient.builder()
                .addresses(urls.toArray(new String[0]))
                .clientName(name)
                .eventLoopGroup(clientLoops)
                .reconnectDelay(Duration.ofMillis(50), Duration.ofSeconds(1))
                .build();
    }

    /** The Raft leader, as the running nodes' {@code /health} name it: it sequences every topic. */
    private int leader() {
        return cluster.awaitLeader(Duration.ofSeconds(30));
    }

    /** Waits until both publishers have had 200 more publishes acked: the cluster is taking publishes. */
    private void awaitAckedGrowth(String when) {
        long[] before = publishers.stream().mapToLong(p -> p.acked.get()).toArray();
        await(() -> {
            for (int i = 0; i < publishers.size(); i++) {
                if (publishers.get(i).acked.get() < before[i] + 200) {
                    return false;
                }
            }
            return true;
        }, Duration.ofSeconds(60), () -> "200 more publishes acked for each publisher " + when + " (acked "
                + publishers.stream().map(p -> p.acked.get() + " acked, " + p.failed.get() + " failed, "
                        + p.issued.get() + " issued, " + p.client.state() + " " + debug(p.client)).toList()
                + "); nodes: " + cluster.describe());
    }

    private void assertEveryStreamComplete() {
        publishers.forEach(Publisher::stop);
        Map<String, Long> acked = new HashMap<>(newestAcked);
        long total = publishers.stream().mapToLong(p -> p.acked.get()).sum();
        long failed = publishers.stream().mapToLong(p -> p.failed.get()).sum();
        log.info("{} publishes acked, {} failed (not acked: the client was told)", total, failed);
        assertThat(acked).hasSize(TOPICS);
        await(() -> subscribers.stream().allMatch(s -> s.hasAll(acked)), Duration.ofSeconds(90),
                "every subscriber has every acked update; behind: " + behind(acked));
        List<String> problems = new ArrayList<>();
        for (StreamCheck s : subscribers) {
            s.problems().forEach(p -> problems.add(s.name + ": " + p));
        }
        assertThat(problems).as("gaps, duplicates or reordering").isEmpty();
    }

    private String behind(Map<String, Long> acked) {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        for (StreamCheck s : subscribers) {
            if (!s.hasAll(acked) && shown++ < 5) {
                b.append(s.name).append(' ').append(s.missing(acked)).append("; ");
            }
        }
        return b.toString();
    }

    private static String debug(Object client) {
        try {
            java.lang.reflect.Field sf = client.getClass().getDeclaredField("session");
            sf.setAccessible(true);
            Object session = sf.get(client);
            java.lang.reflect.Field cf = session.getClass().getDeclaredField("channel");
            cf.setAccessible(true);
            io.netty.channel.Channel ch = (io.netty.channel.Channel) cf.get(session);
            java.lang.reflect.Field qf = client.getClass().getDeclaredField("commands");
            qf.setAccessible(true);
            Object proxy = qf.get(client);
            java.lang.reflect.Field queue = proxy.getClass().getDeclaredField("queue");
            queue.setAccessible(true);
            java.lang.reflect.Field lf = session.getClass().getDeclaredField("leavingMinorityNode");
            lf.setAccessible(true);
            java.lang.reflect.Field wf = session.getClass().getDeclaredField("waitingPublishes");
            wf.setAccessible(true);
            return "channel " + ch + (ch == null ? "" : " writable " + ch.isWritable() + " bytesBeforeUnwritable "
                    + ch.bytesBeforeUnwritable() + " active " + ch.isActive()) + " queued " + ((java.util.Collection<?>) queue.get(proxy)).size()
                    + " leaving " + lf.get(session) + " waiting " + ((java.util.Collection<?>) wf.get(session)).size();
        } catch (ReflectiveOperationException e) {
            return e.toString();
        }
    }

    private static String topic(int t) {
        return "load/t" + t;
    }

    private static void await(BooleanSupplier condition, Duration timeout, String what) {
        await(condition, timeout, () -> what);
    }

    private static void await(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
        // every 50 ms: some conditions walk all 500 subscribers
        Await.until(condition, timeout, Duration.ofMillis(50), what);
    }

    /** Publishes round robin over the topics at {@link #RATE} per second and records what was acked. */
    private final class Publisher {
        final String name;
        final RingcastClient client;
        final AtomicLong acked = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicLong issued = new AtomicLong();
        private final AtomicInteger next = new AtomicInteger();
        private volatile boolean running = true;
        private final Thread thread;

        Publisher(String name, RingcastClient client) {
            this.name = name;
            this.client = client;
            this.thread = new Thread(this::run, name);
            this.thread.setDaemon(true);
        }

        void start() {
            client.connect().join();
            thread.start();
        }

        private void run() {
            long period = TimeUnit.SECONDS.toNanos(1) / RATE;
            long due = System.nanoTime();
            while (running) {
                int i = next.getAndIncrement();
                issued.incrementAndGet();
                String topic = topic(i % TOPICS);
                client.publish(topic, (name + "#" + i).getBytes(StandardCharsets.UTF_8)).whenComplete((seq, error) -> {
                    if (error == null) {
                        acked.incrementAndGet();
                        newestAcked.merge(topic, seq, Math::max);
                    } else if (failed.incrementAndGet() <= 3) {
                        log.info("{}: publish {} to {} failed: {}", name, i, topic, error.toString());
                    }
                });
                due += period;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(wait); // the publishing rate, not a wait for a condition
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
            client.close();
        }
    }
}
