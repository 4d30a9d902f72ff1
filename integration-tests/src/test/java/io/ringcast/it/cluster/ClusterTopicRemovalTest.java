package io.ringcast.it.cluster;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Topics removed in a cluster of three real node processes (docs/protocol.md, "Removing topics"):
 * a removal through one node is logged and applied by every node, so a subscriber on another node
 * is told, the topic count drops everywhere, and a later publish makes the topic again from
 * sequence 1 on every node; a topic that expires is removed by its group's leader through the log.
 * With jgroups-raft (one group) and Apache Ratis (three groups, the topics spread over them).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ClusterTopicRemovalTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern TOPICS = Pattern.compile("(?m)^ringcast_topics (\\d+)");
    private static final int MANY_TOPICS = 6_000;

    @ParameterizedTest
    @ValueSource(strings = {"jgroups", "ratis"})
    void aRemovalThroughOneNodeReachesEveryNodeAndAnExpiryIsLoggedByTheLeader(String engine, TestInfo info)
            throws Exception {
        String features = "features:\n  overrides:\n    - selector: \"exp/#\"\n      expireAfterMs: 1500\n";
        String clusterKeys = "  engine: " + engine + "\n" + (engine.equals("ratis") ? "  groups: 3\n" : "");
        try (ClusterProcesses cluster = ClusterProcesses.start(info.getDisplayName().replaceAll("\\W", "-"), 3,
                features, clusterKeys)) {
            cluster.awaitLeader(Duration.ofSeconds(60));
            List<String> seen = new CopyOnWriteArrayList<>();
            try (RingcastClient subscriber = client(cluster, 1);
                 RingcastClient remover = client(cluster, 2);
                 RingcastClient publisher = client(cluster, 3)) {
                subscriber.subscribe("#", new UpdateListener() {
                    @Override
                    public void onUpdate(Update u) {
                        seen.add(u.topic() + " #" + u.sequence() + " " + u.text());
                    }

                    @Override
                    public void onRemoved(String topic, long lastSequence) {
                        seen.add(topic + " removed after #" + lastSequence);
                    }
                }).confirmed().get(30, TimeUnit.SECONDS);
                for (int i = 1; i <= 3; i++) {
                    publisher.publish("rm/a", ("a" + i).getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
                }
                for (int i = 0; i < 6; i++) { // spread over the groups
                    publisher.publish("rm/b" + i, "b".getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
                }
                awaitSeen(seen, "rm/b5 #1 b");
                // a REMOVE of a selector removes what the node that takes it has applied: node 2 may
                // apply the last publish after node 1 delivered it (CI, 2026-12-03: 6 of 7 removed)
                Await.until(() -> topics(cluster, 2) == 7, Duration.ofSeconds(30), Duration.ofMillis(20),
                        () -> "node 2 applied the 7 topics");

                assertThat(remover.remove("rm/#").get(30, TimeUnit.SECONDS)).as("removed through node 2").isEqualTo(7);
                awaitSeen(seen, "rm/a removed after #3");
                for (int i = 0; i < 6; i++) {
                    awaitSeen(seen, "rm/b" + i + " removed after #1");
                }
                for (int node = 1; node <= 3; node++) {
                    int n = node;
                    Await.until(() -> topics(cluster, n) == 0, Duration.ofSeconds(30), Duration.ofMillis(50),
                            () -> "no topic left on node " + n);
                }

                publisher.publish("rm/a", "again".getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
                awaitSeen(seen, "rm/a #1 again");
                try (RingcastClient late = client(cluster, 2)) {
                    List<String> lateSeen = new CopyOnWriteArrayList<>();
                    late.subscribe("rm/#", (Update u) -> lateSeen.add(u.topic() + " #" + u.sequence() + " " + u.text()))
                            .confirmed().get(30, TimeUnit.SECONDS);
                    // acked through node 3: node 2 applies it in its own time, as a snapshot or the update after
                    awaitSeen(lateSeen, "rm/a #1 again");
                    assertThat(lateSeen).as("node 2 made it again from 1 too").containsExactly("rm/a #1 again");
                }

                publisher.publish("exp/x", "short".getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
                awaitSeen(seen, "exp/x #1 short");
                long published = System.nanoTime();
                awaitSeen(seen, "exp/x removed after #1");
                assertThat(Duration.ofNanos(System.nanoTime() - published)).as("not before its 1.5 s")
                        .isGreaterThanOrEqualTo(Duration.ofMillis(1400));
                for (int node = 1; node <= 3; node++) {
                    int n = node;
                    Await.until(() -> topics(cluster, n) == 1, Duration.ofSeconds(30), Duration.ofMillis(50),
                            () -> "rm/a alone on node " + n);
                }

                // more topics than the node's log queue holds (8,192): sent all at once, their
                // removals filled it and the REMOVE was refused NO_MAJORITY with a majority there
                for (int chunk = 0; chunk < MANY_TOPICS; chunk += 1_000) {
                    List<CompletableFuture<Long>> acks = new ArrayList<>();
                    for (int i = chunk; i < chunk + 1_000; i++) {
                        acks.add(publisher.publish("many/" + i, "m".getBytes(StandardCharsets.UTF_8)));
                    }
                    CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                }
                Await.until(() -> topics(cluster, 2) == MANY_TOPICS + 1, Duration.ofSeconds(60), Duration.ofMillis(50),
                        () -> "node 2 applied the " + MANY_TOPICS + " topics");
                assertThat(remover.remove("many/#").get(90, TimeUnit.SECONDS)).as("removed through node 2")
                        .isEqualTo(MANY_TOPICS);
                for (int node = 1; node <= 3; node++) {
                    int n = node;
                    Await.until(() -> topics(cluster, n) == 1, Duration.ofSeconds(60), Duration.ofMillis(50),
                            () -> "rm/a alone again on node " + n);
                }
            }
        }
    }

    private static RingcastClient client(ClusterProcesses cluster, int node) throws Exception {
        RingcastClient c = RingcastClient.builder().addresses(cluster.webSocketUrl(node)).build();
        c.connect().get(30, TimeUnit.SECONDS);
        return c;
    }

    private static void awaitSeen(List<String> seen, String line) {
        Await.until(() -> seen.contains(line), Duration.ofSeconds(30), Duration.ofMillis(10),
                () -> "'" + line + "' among " + seen);
    }

    private static long topics(ClusterProcesses cluster, int node) {
        try {
            String metrics = HTTP.send(HttpRequest.newBuilder(URI.create(cluster.httpUrl(node) + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            Matcher m = TOPICS.matcher(metrics);
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        } catch (Exception e) {
            return -1;
        }
    }
}
