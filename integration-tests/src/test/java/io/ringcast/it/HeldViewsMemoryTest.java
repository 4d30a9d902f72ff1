package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.testkit.FailOnLeakExtension;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Anonymous sessions holding as many throttled projections ({@code maxRate} with {@code fields})
 * of a hundred topics as the defaults let one principal make, while values of 3 kB are published
 * to every topic ten times a second. Each view of each topic kept a copy of what it shows: 500
 * views of 100 topics held some 200 MB of Netty's memory, and the views' frames in flight were
 * bounded only by the fan-out ring's slots (an external test grew a node by 440-600 MB until it
 * died). Now the topic keeps one reference to its newest value for all its views, and the frames
 * in flight are bounded by {@code pipeline.fanOutRingBytes}: against a node process with a 256 MiB
 * heap, a witness keeps receiving (p99 under 100 ms), Netty's memory in use stays under 128 MB,
 * the node's resident memory under a bound, the view past the principal's share is refused naming
 * it, and once the sessions leave, the heap and Netty's memory in use come back to where they were,
 * with no session object but the publisher's left on the heap.
 */
@Timeout(240)
class HeldViewsMemoryTest {
    private static final long MIB = 1 << 20;
    private static final int TOPICS = 100;
    private static final int VIEWS_PER_SESSION = 16; // limits.maxViewsPerSession
    private static final int VIEWS_PER_PRINCIPAL = 500; // limits.maxViewsPerPrincipal
    private static final long RSS_BOUND = 512 * MIB;
    private static final String PINNED = "ringcast_netty_direct_memory_pinned_bytes";
    private static final String RING_BYTES = "ringcast_fanout_ring_bytes";
    private static final String FILLER = "x".repeat(3_000);
    /** Each topic's history holds this many updates: full after as many rounds, the node's idle level. */
    private static final int HISTORY = 4;

    /** Publishes a 3 kB value to each of {@value #TOPICS} topics every 100 ms until closed. */
    private static final class Publisher implements AutoCloseable {
        private final RingcastClient client;
        private final AtomicBoolean running = new AtomicBoolean(true);
        /** Rounds whose every publish was acked. */
        private final AtomicLong rounds = new AtomicLong();
        private final Thread thread;

        Publisher(String url) throws Exception {
            client = RingcastClient.builder().addresses(url).build();
            client.connect().get(10, TimeUnit.SECONDS);
            thread = new Thread(this::run, "held-views-publisher");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            for (long round = 0; running.get(); round++) {
                List<CompletableFuture<Long>> acks = new ArrayList<>();
                for (int t = 0; t < TOPICS; t++) {
                    byte[] value = ("{\"price\":" + round + ",\"blob\":\"" + FILLER + "\"}")
                            .getBytes(StandardCharsets.UTF_8);
                    acks.add(client.publish("held/" + t, value));
                }
                try {
                    CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
                    rounds.incrementAndGet();
                    Thread.sleep(100); // the publish rate, not a wait for an outcome
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    throw new AssertionError("a round of publishes failed", e);
                }
            }
        }

        @Override
        public void close() {
            running.set(false);
            try {
                thread.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                client.close();
            }
        }
    }

    /**
     * Opens anonymous sessions subscribing {@code held/#} through {@value #VIEWS_PER_SESSION} views
     * each (the blob and the price, once in 15 to 100 seconds, each topic's first update at once),
     * one view more than the principal's share; returns the refusal of that one.
     */
    private static Throwable openViews(String url, List<RingcastClient> sessions, AtomicLong received)
            throws Exception {
        Throwable refused = null;
        for (int first = 0; first <= VIEWS_PER_PRINCIPAL; first += VIEWS_PER_SESSION) {
            RingcastClient client = RingcastClient.builder().addresses(url).build();
            sessions.add(client);
            client.connect().get(10, TimeUnit.SECONDS);
            for (int v = first; v < Math.min(first + VIEWS_PER_SESSION, VIEWS_PER_PRINCIPAL + 1); v++) {
                // distinct by their rates (0.01 to 0.06 a second) and by one of ten fields no value
                // has, so ten projections each made once per update, of the blob and the price
                SubscribeOptions view = SubscribeOptions.builder().fields("blob", "price", "z" + v % 10)
                        .maxRate(0.01 + v / 10 / 1000.0).build();
                CompletableFuture<?> confirmed = client.subscribe("held/#", view, u -> received.incrementAndGet())
                        .confirmed();
                Throwable t = catchThrowable(() -> confirmed.get(30, TimeUnit.SECONDS));
                if (t != null) {
                    assertThat(refused).as("only one view past the share").isNull();
                    refused = t;
                }
            }
        }
        return refused;
    }

    @Test
    void viewsOfAHundredTopicsHoldNoCopiesAndTheNodeReturnsToIdleWhenTheyLeave(@TempDir Path dir) throws Exception {
        // the clients decode 20,000 updates a second in this JVM: at the paranoid level that the
        // tests' JVM runs at, recording each buffer's every use took a core, and the witness waited for it
        FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.SIMPLE, () -> manyViewsWhileAWitnessWatches(dir));
    }

    private static void manyViewsWhileAWitnessWatches(Path dir) throws Exception {
        List<RingcastClient> sessions = new ArrayList<>();
        AtomicLong received = new AtomicLong();
        try (NodeProcess node = NodeProcess.start(dir, List.of("-Xmx256m"),
                "history:\n  length: " + HISTORY + "\nsecurity:\n" + TestServers.OPEN_TO_ANONYMOUS);
             Publisher publisher = new Publisher(node.webSocketUrl())) {
            // the topics' histories full: what the node keeps whether or not there are views
            Await.until(() -> publisher.rounds.get() > HISTORY, HISTORY + " rounds of publishes acked");
            double idleHeap = node.heapAfterGc();
            double idlePinned = MetricSampler.metric(node.port(), PINNED);

            Throwable refused = openViews(node.webSocketUrl(), sessions, received);
            assertThat(MetricSampler.metric(node.port(), "ringcast_views")).isEqualTo(VIEWS_PER_PRINCIPAL);
            assertThat(refused).isInstanceOf(ExecutionException.class).cause().isInstanceOf(RingcastException.class);
            RingcastException error = (RingcastException) refused.getCause();
            assertThat(error.code()).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
            assertThat(error.getMessage()).contains("limits.maxViewsPerPrincipal");
            Await.until(() -> received.get() > 50_000, "each view's first update of each topic; got " + received.get());
            node.awaitJitSettled();

            long roundsBefore = publisher.rounds.get();
            try (Witness witness = Witness.start(node.webSocketUrl());
                 MetricSampler ringBytes = new MetricSampler(node.port(), RING_BYTES);
                 MetricSampler pinned = new MetricSampler(node.port(), PINNED)) {
                long before = received.get();
                Await.until(() -> received.get() > before + 10_000, "10,000 more updates through the views");
                ringBytes.awaitSamples(100);
                assertThat(ringBytes.largest()).as("bytes on the fan-out ring").isLessThanOrEqualTo(64 * MIB);
                assertThat(pinned.largest()).as("Netty's memory in use").isLessThan(128 * MIB);
                witness.stopAndVerifyWithin(100);
                System.out.printf("MEASURED witness p99 %.1f ms; fan-out ring at most %.1f MB, Netty's memory in use at most %.1f MB%n",
                        witness.p99Millis(), ringBytes.largest() / 1e6, pinned.largest() / 1e6);
            }
            assertThat(publisher.rounds.get()).as("the publisher's rounds acked meanwhile").isGreaterThan(roundsBefore);
            node.assertAlive();
            assertThat(node.rssBytes()).as("the node's resident memory").isLessThan(RSS_BOUND);

            sessions.forEach(RingcastClient::close);
            MetricSampler.await(node.port(), "ringcast_views", v -> v == 0, "the views closed with their sessions");
            assertThat(node.heapAfterGc() - idleHeap).as("heap kept after the sessions left").isLessThan(16.0 * MIB);
            MetricSampler.await(node.port(), PINNED, v -> v < idlePinned + 16 * MIB,
                    "Netty's memory in use back within 16 MiB of " + idlePinned);
            // no view, ring slot or subscriber set keeps a closed session
            node.awaitSessionsOnTheHeap(1, "the publisher's session alone on the node's heap");
        } finally {
            sessions.forEach(RingcastClient::close);
        }
    }
}
