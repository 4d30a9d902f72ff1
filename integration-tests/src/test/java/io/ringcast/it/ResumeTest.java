package io.ringcast.it;

import io.ringcast.client.ConnectionListener;
import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.UpdateKind;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ringcast.server.ServerCounter.DELTAS_SENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A subscriber's network fails (a proxy between it and the server is cut) while publishing goes
 * on; the client reconnects and resumes. History covers 16 updates per topic here.
 */
@Timeout(60)
class ResumeTest {
    static final int HISTORY = 16;
    static RingcastServer server;
    static RingcastClient publisher;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start("history:\n  length: " + HISTORY + "\n"
                + "features:\n  overrides:\n    - selector: \"resume/deltas/#\"\n      deltas: true\n");
        publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build();
        publisher.connect().get(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        publisher.close();
        server.close();
    }

    private static void publish(String topic, int from, int to) throws Exception {
        for (int i = from; i <= to; i++) {
            assertThat(publisher.publish(topic, value(topic, i).getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS)).isEqualTo(i);
        }
    }

    /** Value {@code i} of {@code topic}: "v" + i, or a 200-byte record under resume/deltas/, which deltas shrink. */
    private static String value(String topic, int i) {
        return topic.startsWith("resume/deltas/") ? FeatureTogglesTest.record(i) : "v" + i;
    }

    /** Cuts the subscriber off, publishes {@code missed} updates, lets it back, and returns what it got. */
    private static List<Recorded.Got> cutPublishResume(String topic, int missed) throws Exception {
        try (CuttableProxy proxy = new CuttableProxy(server.port())) {
            AtomicInteger connects = new AtomicInteger();
            AtomicInteger disconnects = new AtomicInteger();
            RingcastClient subscriber = RingcastClient.builder().addresses(proxy.webSocketUrl())
                    .reconnectDelay(Duration.ofMillis(20), Duration.ofMillis(200))
                    .connectionListener(new ConnectionListener() {
                        @Override
                        public void onConnected(String address, String sessionId) {
                            connects.incrementAndGet();
                        }

                        @Override
                        public void onDisconnected(String address, RingcastException reason, int closeCode) {
                            disconnects.incrementAndGet();
                        }
                    }).build();
            try (subscriber) {
                subscriber.connect().get(10, TimeUnit.SECONDS);
                Recorded r = new Recorded();
                subscriber.subscribe(topic, r).confirmed().get(10, TimeUnit.SECONDS);
                publish(topic, 1, 10);
                Await.until(() -> r.lastSequence(topic) == 10, "the first 10 updates");

                proxy.refuse(true);
                proxy.cut();
                Await.until(() -> disconnects.get() == 1 && subscriber.state() != ConnectionState.CONNECTED,
                        "the client to notice the cut");
                publish(topic, 11, 10 + missed);
                proxy.refuse(false);

                Await.until(() -> connects.get() == 2, "the reconnect");
                Await.until(() -> r.lastSequence(topic) == 10 + missed, "the resume to reach the newest update");
                publish(topic, 11 + missed, 15 + missed);
                Await.until(() -> r.lastSequence(topic) == 15 + missed, "live updates after the resume");
                return r.of(topic);
            }
        }
    }

    @Test
    void resumeWithinHistoryReplaysMissedUpdatesWithoutGap() throws Exception {
        List<Recorded.Got> got = cutPublishResume("resume/within", HISTORY - 2);
        assertThat(got).extracting(Recorded.Got::sequence)
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, 10 + HISTORY - 2 + 5)
                        .boxed().toList());
        assertThat(got).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        assertThat(got.get(10).text()).isEqualTo("v11");
    }

    @Test
    void resumePastHistoryGetsSnapshotAfterGap() throws Exception {
        int missed = HISTORY * 3;
        List<Recorded.Got> got = cutPublishResume("resume/past", missed);
        assertThat(got.subList(0, 10)).extracting(Recorded.Got::sequence)
                .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        Recorded.Got gap = got.get(10);
        assertThat(gap.kind()).isEqualTo(UpdateKind.SNAPSHOT_AFTER_GAP);
        assertThat(gap.sequence()).isEqualTo(10 + missed);
        assertThat(gap.text()).isEqualTo("v" + (10 + missed));
        assertThat(got.subList(11, got.size())).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        assertThat(got.subList(11, got.size())).extracting(Recorded.Got::sequence)
                .containsExactly(11L + missed, 12L + missed, 13L + missed, 14L + missed, 15L + missed);
    }

    /** Replayed history holds deltas: each applies to the value before it, and the client sees full values. */
    @Test
    void resumeReplaysDeltasOntoTheLastValueTheClientHas() throws Exception {
        long deltasBefore = server.stats().get(DELTAS_SENT);
        String topic = "resume/deltas/a";
        List<Recorded.Got> got = cutPublishResume(topic, HISTORY - 2);

        assertThat(got).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i).sequence()).isEqualTo(i + 1);
            assertThat(got.get(i).text()).isEqualTo(value(topic, i + 1));
        }
        assertThat(server.stats().get(DELTAS_SENT) - deltasBefore).as("updates sent as deltas").isEqualTo(got.size() - 1);
    }
}
