package io.ringcast.it;

import io.ringcast.server.RingcastServer;

import javax.net.ssl.SSLContext;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bystander that proves an abuse harmed nobody else: while it runs, its own publisher publishes
 * one update every {@value #PERIOD_MS} ms to {@code witness/stream} and its own subscriber must
 * receive every one, in order, without a gap or a duplicate. {@link #stopAndVerify()} checks
 * that after the abuse: each publish acked and delivered with sequences 1..n.
 */
final class Witness implements AutoCloseable {
    static final String TOPIC = "witness/stream";
    private static final long PERIOD_MS = 10;

    private final RawWebSocket subscriber;
    private final RawWebSocket publisher;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger published = new AtomicInteger();
    private final Thread thread;

    private Witness(RingcastServer server, SSLContext tls) throws Exception {
        subscriber = connectAndHello(server, tls);
        subscriber.subscribe(1, "witness/#");
        subscriber.await("SUBSCRIBED");
        publisher = connectAndHello(server, tls);
        thread = new Thread(this::publishUntilStopped, "witness-publisher");
        thread.setDaemon(true);
        thread.start();
    }

    /** Starts a witness on {@code server}: its subscriber is subscribed when this returns. */
    static Witness start(RingcastServer server) throws Exception {
        return new Witness(server, null);
    }

    /** The same on a server with TLS on, trusting what {@code tls} trusts (the test certificate). */
    static Witness start(RingcastServer server, SSLContext tls) throws Exception {
        return new Witness(server, tls);
    }

    private static RawWebSocket connectAndHello(RingcastServer server, SSLContext tls) throws Exception {
        return tls == null ? RawWebSocket.connectAndHello(server.webSocketUrl())
                : RawWebSocket.connectAndHello(server.webSocketUrl(), tls);
    }

    private void publishUntilStopped() {
        while (running.get()) {
            int n = published.incrementAndGet();
            publisher.publish(n, TOPIC, "w" + n);
            try {
                Thread.sleep(PERIOD_MS); // the publish rate, not a wait for an outcome
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

    @Override
    public void close() {
        running.set(false);
        subscriber.close();
        publisher.close();
    }
}
