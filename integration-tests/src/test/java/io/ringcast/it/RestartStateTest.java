package io.ringcast.it;

import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.ServerCounter.TOPICS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code state.file}: a node stopped gracefully saves its topics and takes them back when it starts
 * again, so clients resume across the restart as across a network cut.
 */
@Timeout(60)
class RestartStateTest {
    @TempDir
    Path dir;

    private String config(Path stateFile) {
        return "history:\n  length: 32\nstate:\n  file: \"" + stateFile + "\"\n"
                + "features:\n  overrides:\n    - selector: \"state/deltas/#\"\n      deltas: true\n";
    }

    private static RingcastClient client(String url) throws Exception {
        RingcastClient c = RingcastClient.builder().addresses(url)
                .reconnectDelay(Duration.ofMillis(20), Duration.ofMillis(200)).build();
        c.connect().get(10, TimeUnit.SECONDS);
        return c;
    }

    private static String value(String topic, int i) {
        return topic.startsWith("state/deltas/") ? FeatureTogglesTest.record(i) : "v" + i;
    }

    private static void publish(RingcastClient publisher, String topic, int from, int to) throws Exception {
        for (int i = from; i <= to; i++) {
            assertThat(publisher.publish(topic, value(topic, i).getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS)).as("sequence of %s #%d", topic, i).isEqualTo(i);
        }
    }

    /**
     * The subscriber is cut off, {@code missed} updates go by, the server restarts with its state,
     * five more are published, and the subscriber comes back.
     */
    private List<Recorded.Got> missAcrossRestart(String topic, int missed) throws Exception {
        Path state = dir.resolve("node.state");
        RingcastServer server = TestServers.start(config(state));
        int port = server.port();
        try (CuttableProxy proxy = new CuttableProxy(port);
             RingcastClient subscriber = client(proxy.webSocketUrl())) {
            Recorded got = new Recorded();
            subscriber.subscribe(topic, got).confirmed().get(10, TimeUnit.SECONDS);
            try (RingcastClient publisher = client(server.webSocketUrl())) {
                publish(publisher, topic, 1, 10);
                Await.until(() -> got.lastSequence(topic) == 10, "the first 10 updates");
                proxy.refuse(true);
                proxy.cut();
                Await.until(() -> subscriber.state() != ConnectionState.CONNECTED, "the subscriber to notice");
                publish(publisher, topic, 11, 10 + missed);
            }
            server.close();
            assertThat(state).as("saved on stop").exists();
            server = TestServers.startOnPort(port, config(state));
            assertThat(state).as("taken back and removed at start").doesNotExist();
            try (RingcastClient publisher = client(server.webSocketUrl())) {
                publish(publisher, topic, 11 + missed, 15 + missed); // numbering goes on where it was
            }
            proxy.refuse(false);
            Await.until(() -> got.lastSequence(topic) == 15 + missed, "the resume across the restart");
            assertThat(got.errors).isEmpty();
            return got.of(topic);
        } finally {
            server.close();
        }
    }

    @Test
    void subscriberResumesWithoutGapAcrossARestartWhenHistoryCoversIt() throws Exception {
        List<Recorded.Got> got = missAcrossRestart("state/plain", 20);
        assertThat(got).extracting(Recorded.Got::sequence).containsExactlyElementsOf(
                java.util.stream.LongStream.rangeClosed(1, 35).boxed().toList());
        assertThat(got).allSatisfy(g -> {
            assertThat(g.kind()).isEqualTo(UpdateKind.UPDATE);
            assertThat(g.text()).isEqualTo("v" + g.sequence());
        });
    }

    @Test
    void deltasReplayedFromRestoredHistoryRebuildTheExactValues() throws Exception {
        List<Recorded.Got> got = missAcrossRestart("state/deltas/r", 20);
        assertThat(got).hasSize(35);
        assertThat(got).allSatisfy(g -> assertThat(g.text()).isEqualTo(FeatureTogglesTest.record((int) g.sequence())));
    }

    @Test
    void subscriberGetsASnapshotAfterGapWhenTheRestoredHistoryDoesNotReachBack() throws Exception {
        List<Recorded.Got> got = missAcrossRestart("state/far", 50); // history holds 32
        assertThat(got.subList(0, 10)).extracting(Recorded.Got::sequence).containsExactly(1L, 2L, 3L, 4L, 5L, 6L,
                7L, 8L, 9L, 10L);
        Recorded.Got gap = got.get(10);
        assertThat(gap.kind()).isEqualTo(UpdateKind.SNAPSHOT_AFTER_GAP);
        assertThat(gap.text()).isEqualTo("v" + gap.sequence());
        assertThat(got.subList(11, got.size())).extracting(Recorded.Got::sequence)
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(gap.sequence() + 1, 65).boxed().toList());
    }

    @Test
    void newSubscriberAfterARestartGetsTheSavedValues() throws Exception {
        Path state = dir.resolve("node.state");
        try (RingcastServer server = TestServers.start(config(state));
             RingcastClient publisher = client(server.webSocketUrl())) {
            for (int t = 0; t < 100; t++) {
                publish(publisher, "state/many/t" + t, 1, 3);
            }
        }
        try (RingcastServer server = TestServers.start(config(state));
             RingcastClient subscriber = client(server.webSocketUrl())) {
            Recorded got = new Recorded();
            subscriber.subscribe("state/many/#", got).confirmed().get(10, TimeUnit.SECONDS);
            assertThat(got.updates).hasSize(100).allSatisfy(g -> {
                assertThat(g.kind()).isEqualTo(UpdateKind.SNAPSHOT);
                assertThat(g.sequence()).isEqualTo(3);
                assertThat(g.text()).isEqualTo("v3");
            });
            assertThat(server.stats().get(TOPICS)).isEqualTo(100);
        }
    }

    @Test
    void newSubscriptionAfterARestartWithoutStateFollowsTheNewNumbering() throws Exception {
        RingcastServer server = TestServers.start();
        int port = server.port();
        try (RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl())
                .reconnectDelay(Duration.ofMillis(20), Duration.ofMillis(200)).build()) {
            client.connect().get(10, TimeUnit.SECONDS);
            Recorded before = new Recorded();
            var first = client.subscribe("renumbered/a", before);
            first.confirmed().get(10, TimeUnit.SECONDS);
            publish(client, "renumbered/a", 1, 10);
            Await.until(() -> before.lastSequence("renumbered/a") == 10, "the first 10 updates");
            first.close(); // the client still remembers #10 of the topic

            server.close(); // no state.file: the successor numbers the topic from 1 again
            server = TestServers.startOnPort(port, "");
            Await.until(() -> client.state() == ConnectionState.CONNECTED, "the reconnect");
            publish(client, "renumbered/a", 1, 3);
            Recorded after = new Recorded();
            client.subscribe("renumbered/a", after).confirmed().get(10, TimeUnit.SECONDS);
            publish(client, "renumbered/a", 4, 5);
            Await.until(() -> after.lastSequence("renumbered/a") == 5, "updates past the new snapshot");
            assertThat(after.updates).extracting(Recorded.Got::sequence, Recorded.Got::kind).containsExactly(
                    org.assertj.core.groups.Tuple.tuple(3L, UpdateKind.SNAPSHOT),
                    org.assertj.core.groups.Tuple.tuple(4L, UpdateKind.UPDATE),
                    org.assertj.core.groups.Tuple.tuple(5L, UpdateKind.UPDATE));
        } finally {
            server.close();
        }
    }

    @Test
    void unreadableStateFileStopsTheStartNamingTheFile() throws Exception {
        Path state = Files.write(dir.resolve("broken.state"), "not a state file".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> TestServers.start(config(state)))
                .hasMessageContaining("state.file " + state)
                .hasMessageContaining("not a Ringcast state file")
                .hasMessageContaining("move the file away to start empty");
        assertThat(state).as("left for the operator").exists();
        Files.write(state, new byte[] {0x52, 0x43, 0x53, 0x54, 0, 0, 0, 1, 0, 0, 0, 5});
        assertThatThrownBy(() -> TestServers.start(config(state))).hasMessageContaining("truncated");
    }
}
