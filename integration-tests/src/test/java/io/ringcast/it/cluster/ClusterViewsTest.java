package io.ringcast.it.cluster;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Subscription views in a cluster of real node processes: views are each node's own (the log
 * carries publishes only), so a subscriber on one node sees through its view what a publisher on
 * another node published, rewound from that node's own history; and when its node dies it resumes
 * on the next one, whose view of the same options has its own id, with no duplicate and ending on
 * the newest value.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClusterViewsTest {
    private static final Duration STEP = Duration.ofSeconds(30);
    private static final SubscribeOptions TIGHT_BIDS = SubscribeOptions.builder().fields("bid").filter("spread < 5")
            .rewind(3).build();

    private ClusterProcesses cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** What a subscription received, as "topic #sequence kind text" and "topic #sequence unmatched". */
    private static final class Lines implements UpdateListener {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void onUpdate(Update u) {
            lines.add(u.topic() + " #" + u.sequence() + " " + u.kind() + " " + u.text());
        }

        @Override
        public void onUnmatched(String topic, long sequence) {
            lines.add(topic + " #" + sequence + " unmatched");
        }

        boolean has(String line) {
            return lines.contains(line);
        }
    }

    private static long publish(RingcastClient publisher, int bid, int spread) throws Exception {
        return publisher.publish("cv/a", ("{\"bid\":" + bid + ",\"spread\":" + spread + "}").getBytes(StandardCharsets.UTF_8))
                .get(30, TimeUnit.SECONDS);
    }

    @Test
    void aViewOnOneNodeShowsWhatAnotherNodesPublisherPublishedAndResumesOnTheNextNode(TestInfo info) throws Exception {
        cluster = ClusterProcesses.start(info.getTestMethod().orElseThrow().getName(), 3, "");
        try (RingcastClient publisher = RingcastClient.builder()
                     .addresses(cluster.webSocketUrl(1), cluster.webSocketUrl(3)).build();
             RingcastClient subscriber = RingcastClient.builder()
                     .addresses(cluster.webSocketUrl(2), cluster.webSocketUrl(3))
                     .reconnectDelay(Duration.ofMillis(20), Duration.ofMillis(500)).build()) {
            publisher.connect().get(30, TimeUnit.SECONDS);
            subscriber.connect().get(30, TimeUnit.SECONDS);
            long fourth = 0;
            for (int i = 1; i <= 4; i++) {
                fourth = publish(publisher, i, i == 3 ? 9 : 1);
            }
            // node 2 applies the log on its own time: once a plain subscription there has #4, a
            // subscription behind it in node 2's sequencer rewinds all four
            Lines probe = new Lines();
            subscriber.subscribe("cv/a", probe).confirmed().get(30, TimeUnit.SECONDS);
            long applied = fourth;
            Await.until(() -> probe.lines.stream().anyMatch(l -> l.startsWith("cv/a #" + applied + " ")), STEP,
                    Duration.ofMillis(10), () -> "node 2 to apply #" + applied + ": " + probe.lines);
            Lines got = new Lines();
            subscriber.subscribe("cv/#", TIGHT_BIDS, got).confirmed().get(30, TimeUnit.SECONDS);
            long live = publish(publisher, 5, 1);
            Await.until(() -> got.has("cv/a #" + live + " UPDATE {\"bid\":5}"), STEP, Duration.ofMillis(10),
                    () -> "the live value through node 2's view: " + got.lines);
            assertThat(got.lines).as("rewound from node 2's history (#3 does not pass), then live").containsExactly(
                    "cv/a #2 SNAPSHOT {\"bid\":2}", "cv/a #4 SNAPSHOT {\"bid\":4}", "cv/a #5 UPDATE {\"bid\":5}");

            cluster.kill9(2);
            publish(publisher, 6, 9); // stops passing while the subscriber moves to node 3
            long last = publish(publisher, 7, 1);
            Await.until(() -> !got.lines.isEmpty() && got.lines.get(got.lines.size() - 1).endsWith("{\"bid\":7}"),
                    STEP, Duration.ofMillis(10), () -> "the newest value through node 3's view: " + got.lines);
            List<Long> sequences = got.lines.stream().map(l -> Long.parseLong(l.split(" ")[1].substring(1))).toList();
            assertThat(sequences).as("no duplicate across the move: " + got.lines).isSorted().doesNotHaveDuplicates();
            assertThat(sequences.get(sequences.size() - 1)).isEqualTo(last);
        }
    }
}
