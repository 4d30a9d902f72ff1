package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One publish of a value of about 1 MB to a topic with as many views as the defaults allow (1,000:
 * the anonymous principal's 500 and alice's 500, each with its own filter): its ack, and a witness
 * publishing on another topic meanwhile, take at most five times what they take with no view. Each
 * view reads the value on its own from its start until it meets its fields, and the fields here lie
 * after 1 MB of text: what a shared read of the value ({@code ValueIndex}) saves. The node's
 * resident memory stays under 1 GiB (its heap is 512 MiB), and once the views' sessions leave, its
 * heap comes back to where it was.
 */
@Timeout(300)
class LargeValueViewsTest {
    private static final int VIEWS_PER_PRINCIPAL = 500;
    private static final int VIEWS_PER_SESSION = 16; // limits.maxViewsPerSession
    private static final int PUBLISHES = 9;
    private static final byte[] VALUE = ("{\"note\":\"" + "n".repeat(999_000) + "\",\"price\":1.5,\"size\":7}")
            .getBytes(StandardCharsets.UTF_8);

    /** The ack latency of each of {@value #PUBLISHES} publishes of {@link #VALUE}, one after the other, sorted. */
    private static long[] ackMillis(RawWebSocket publisher, int firstCorrelationId) {
        long[] ms = new long[PUBLISHES];
        for (int i = 0; i < PUBLISHES; i++) {
            int id = firstCorrelationId + i;
            long sent = System.nanoTime();
            publisher.send(out -> WireCodec.writePublish(out, id, "big/quote", VALUE));
            Await.until(() -> publisher.all("PUBLISH_ACK").stream().anyMatch(m -> m.a() == id)
                    || !publisher.all("ERROR").isEmpty(), "the ack of publish " + id);
            ms[i] = (System.nanoTime() - sent) / 1_000_000;
        }
        assertThat(publisher.all("ERROR")).isEmpty();
        Arrays.sort(ms);
        return ms;
    }

    /**
     * {@value #VIEWS_PER_PRINCIPAL} distinct views of {@code big/quote} for one principal, 16 to a
     * session (through the Java client, which speaks the views' messages).
     */
    private static void openViews(NodeProcess node, RingcastClient.Builder principal, String name,
                                  List<RingcastClient> sessions) throws Exception {
        for (int first = 0; first < VIEWS_PER_PRINCIPAL; first += VIEWS_PER_SESSION) {
            RingcastClient client = principal.addresses(node.webSocketUrl()).build();
            sessions.add(client);
            client.connect().get(10, TimeUnit.SECONDS);
            List<CompletableFuture<?>> confirmed = new ArrayList<>();
            for (int i = first; i < Math.min(first + VIEWS_PER_SESSION, VIEWS_PER_PRINCIPAL); i++) {
                SubscribeOptions view = SubscribeOptions.builder().fields("price")
                        .filter(name + " = 0 or price > " + i + ".5").build();
                confirmed.add(client.subscribe("big/quote", view, update -> { }).confirmed());
            }
            CompletableFuture.allOf(confirmed.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        }
    }

    /** The sorted ack latencies of a run of publishes, and the p99 of a witness meanwhile. */
    private record Measured(long[] ackMillis, double witnessP99Millis) {
    }

    /** A run of publishes to warm, then one measured while a witness publishes on another topic. */
    private static Measured measure(NodeProcess node, RawWebSocket publisher, int firstCorrelationId)
            throws Exception {
        ackMillis(publisher, firstCorrelationId);
        try (Witness witness = Witness.start(node.webSocketUrl())) {
            long[] acks = ackMillis(publisher, firstCorrelationId + PUBLISHES);
            witness.stopAndVerify();
            return new Measured(acks, witness.p99Millis());
        }
    }

    @Test
    void aPublishOfOneMegabyteWithAThousandViewsTakesAtMostFiveTimesItsTimeWithoutViews(@TempDir Path dir)
            throws Exception {
        List<RingcastClient> sessions = new ArrayList<>();
        try (NodeProcess node = NodeProcess.start(dir, List.of("-Xmx512m"), TestServers.OPEN_WITH_ALICE);
             RawWebSocket publisher = RawWebSocket.connectAndHello(node.webSocketUrl())) {
            Measured plain = measure(node, publisher, 1_000);
            double idleHeap = node.heapAfterGc();
            openViews(node, RingcastClient.builder(), "a", sessions);
            openViews(node, RingcastClient.builder().password("alice", TestServers.ALICE_PASSWORD), "b", sessions);
            assertThat(MetricSampler.metric(node.port(), "ringcast_views")).isEqualTo(2 * VIEWS_PER_PRINCIPAL);
            Measured viewed = measure(node, publisher, 3_000);
            System.out.printf("MEASURED ack ms without views %s, with %d views %s; witness p99 %.1f and %.1f ms%n",
                    Arrays.toString(plain.ackMillis), 2 * VIEWS_PER_PRINCIPAL, Arrays.toString(viewed.ackMillis),
                    plain.witnessP99Millis, viewed.witnessP99Millis);
            node.assertAlive();
            long plainMedian = Math.max(plain.ackMillis[PUBLISHES / 2], 1);
            assertThat(viewed.ackMillis[PUBLISHES / 2]).as("median ack with 1,000 views, ms (without: %d)", plainMedian)
                    .isLessThanOrEqualTo(5 * plainMedian);
            assertThat(viewed.witnessP99Millis).as("the witness's p99 with 1,000 views, ms (without: %.1f)",
                    plain.witnessP99Millis).isLessThanOrEqualTo(Math.max(5 * plain.witnessP99Millis, 100));
            assertThat(node.rssBytes()).as("the node's resident memory").isLessThan(1024L << 20);
            sessions.forEach(RingcastClient::close);
            MetricSampler.await(node.port(), "ringcast_views", v -> v == 0, "the views closed with their sessions");
            assertThat(node.heapAfterGc() - idleHeap).as("heap kept after the views' sessions left")
                    .isLessThan(16.0 * (1 << 20));
        } finally {
            sessions.forEach(RingcastClient::close);
        }
    }
}
