package io.ringcast.it;

import io.ringcast.server.RingcastServer;

import javax.net.ssl.SSLContext;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bystander that proves an abuse harmed nobody else: while it runs, its own publisher publishes
 * one update every {@value #PERIOD_MS} ms (or a period of the test's) to {@code witness/stream-N} and its own subscriber must
 * receive every one, in order, without a gap or a duplicate. {@link #stopAndVerify()} checks
 * that after the abuse: each publish acked and delivered with sequences 1..n.
 */
final class Witness implements AutoCloseable {
    /** Witnesses started so far in this JVM: each publishes to a topic of its own, from sequence 1. */
    private static final AtomicInteger STARTED = new AtomicInteger();
    private final String topic = "witness/stream-" + STARTED.incrementAndGet();
    private static final long PERIOD_MS = 10;
    private final long periodMs;

    private final RawWebSocket subscriber;
    private final RawWebSocket publisher;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger published = new AtomicInteger();
    /** When each update was sent ({@link System#nanoTime()}), by its number. */
    private final Map<Integer, Long> sentNanos = new ConcurrentHashMap<>();
    /** When the first update was sent, by the wall clock: the node's log and recordings tell time so. */
    private volatile Instant firstSent;
    private final Thread thread;
    /** This JVM's collections and their milliseconds when the witness started: its own pauses are not the node's. */
    private final long[] gcAtStart;

    private Witness(String webSocketUrl, SSLContext tls, long periodMs) throws Exception {
        this.periodMs = periodMs;
        gcAtStart = gcCountAndMillis();
        subscriber = connectAndHello(webSocketUrl, tls);
        subscriber.subscribe(1, topic);
        subscriber.await("SUBSCRIBED");
        publisher = connectAndHello(webSocketUrl, tls);
        thread = new Thread(this::publishUntilStopped, "witness-publisher");
        thread.setDaemon(true);
        thread.start();
    }

    /** Starts a witness on {@code server}: its subscriber is subscribed when this returns. */
    static Witness start(RingcastServer server) throws Exception {
        return new Witness(server.webSocketUrl(), null, PERIOD_MS);
    }

    /** A witness publishing every {@code periodMs}: under a server's {@code limits.publishRatePerSession}. */
    static Witness start(RingcastServer server, long periodMs) throws Exception {
        return new Witness(server.webSocketUrl(), null, periodMs);
    }

    /** Starts a witness on the node at {@code webSocketUrl} (a node process). */
    static Witness start(String webSocketUrl) throws Exception {
        return new Witness(webSocketUrl, null, PERIOD_MS);
    }

    /** The same on a server with TLS on, trusting what {@code tls} trusts (the test certificate). */
    static Witness start(RingcastServer server, SSLContext tls) throws Exception {
        return new Witness(server.webSocketUrl(), tls, PERIOD_MS);
    }

    private static RawWebSocket connectAndHello(String webSocketUrl, SSLContext tls) throws Exception {
        return tls == null ? RawWebSocket.connectAndHello(webSocketUrl)
                : RawWebSocket.connectAndHello(webSocketUrl, tls);
    }

    private void publishUntilStopped() {
        while (running.get()) {
            int n = published.get() + 1;
            sentNanos.put(n, System.nanoTime());
            if (n == 1) {
                firstSent = Instant.now();
            }
            publisher.publish(n, topic, "w" + n);
            published.set(n);
            try {
                Thread.sleep(periodMs); // the publish rate, not a wait for an outcome
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Updates published so far. */
    int published() {
        return published.get();
    }

    /**
     * Stops publishing, then waits for every publish's ack and delivery and checks that the
     * subscriber got values w1..wn as sequences 1..n, in order, each once.
     */
    void stopAndVerify() throws InterruptedException {
        running.set(false);
        thread.join(5_000);
        assertThat(thread.isAlive()).as("the witness publisher stopped").isFalse();
        int n = published.get();
        assertThat(n).as("updates the witness published during the abuse").isGreaterThan(0);
        Await.until(() -> publisher.all("PUBLISH_ACK").size() >= n,
                "the witness's " + n + " publishes to be acked; acks: " + publisher.all("PUBLISH_ACK").size()
                        + ", errors: " + publisher.all("ERROR"));
        Await.until(() -> subscriber.all("UPDATE").size() >= n,
                "the witness subscriber to receive " + n + " updates; got " + subscriber.all("UPDATE").size()
                        + ", errors: " + subscriber.all("ERROR"));
        List<RawWebSocket.Msg> updates = subscriber.all("UPDATE");
        assertThat(updates).as("updates the witness received").hasSize(n);
        for (int i = 0; i < n; i++) {
            RawWebSocket.Msg m = updates.get(i);
            assertThat(m.b()).as("sequence of the witness's update %d", i + 1).isEqualTo(i + 1);
            assertThat(new String(m.value(), StandardCharsets.UTF_8)).isEqualTo("w" + (i + 1));
        }
        assertThat(subscriber.all("ERROR")).as("errors the witness subscriber got").isEmpty();
        assertThat(publisher.all("ERROR")).as("errors the witness publisher got").isEmpty();
    }

    /**
     * The 99th percentile of the time from each publish's send to its delivery, in milliseconds;
     * after {@link #stopAndVerify()}.
     */
    double p99Millis() {
        List<long[]> deliveries = deliveries();
        assertThat(deliveries).as("the witness's deliveries").isNotEmpty();
        deliveries.sort(Comparator.comparingLong(d -> d[1]));
        return deliveries.get((int) Math.ceil(deliveries.size() * 0.99) - 1)[1] / 1e6;
    }

    /**
     * {@link #stopAndVerify()}, and its p99 from send to delivery under {@code maxMillis}; a failure
     * lists the slowest deliveries with when they were sent, to set beside the node's GC log.
     */
    void stopAndVerifyWithin(double maxMillis) throws InterruptedException {
        stopAndVerify();
        long[] gc = gcCountAndMillis();
        assertThat(p99Millis()).as("the witness's p99 from send to delivery, ms; slowest: %s; meanwhile this (the "
                        + "test's) JVM collected %d times in %d ms", slowest(10), gc[0] - gcAtStart[0], gc[1] - gcAtStart[1])
                .isLessThan(maxMillis);
    }

    private static long[] gcCountAndMillis() {
        long count = 0;
        long millis = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            millis += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, millis};
    }

    /**
     * Each delivery as {when it was sent, nanoseconds after the first publish; its latency in
     * nanoseconds; its ack's latency in nanoseconds, or -1 before the ack}.
     */
    private List<long[]> deliveries() {
        Map<Integer, Long> ackedNanos = new HashMap<>();
        for (int i = 0; i < publisher.messages.size(); i++) {
            if (publisher.messages.get(i).type().equals("PUBLISH_ACK")) {
                ackedNanos.put(publisher.messages.get(i).a(), publisher.receivedNanos.get(i));
            }
        }
        List<long[]> deliveries = new ArrayList<>();
        int seen = 0;
        for (int i = 0; i < subscriber.messages.size(); i++) {
            if (subscriber.messages.get(i).type().equals("UPDATE")) {
                long sent = sentNanos.get(++seen);
                Long acked = ackedNanos.get(seen);
                deliveries.add(new long[] {sent - sentNanos.get(1), subscriber.receivedNanos.get(i) - sent,
                        acked == null ? -1 : acked - sent});
            }
        }
        return deliveries;
    }

    /**
     * The {@code n} slowest deliveries: "sent at: took (acked after)" in milliseconds from the first
     * publish: an ack as late as the delivery says the publish waited, on its way in or in the node's
     * inbound ring; an early ack says the delivery waited on its way out.
     */
    private String slowest(int n) {
        List<long[]> deliveries = deliveries();
        deliveries.sort(Comparator.comparingLong((long[] d) -> d[1]).reversed());
        StringBuilder out = new StringBuilder();
        for (long[] d : deliveries.subList(0, Math.min(n, deliveries.size()))) {
            out.append(d[0] / 1_000_000).append(" ms: ").append(d[1] / 1_000_000).append(" ms (acked after ")
                    .append(d[2] / 1_000_000).append(" ms); ");
        }
        return out + "of " + deliveries.size() + ", the first sent at " + firstSent;
    }

    @Override
    public void close() {
        running.set(false);
        subscriber.close();
        publisher.close();
    }
}
