package io.ringcast.it.cluster;

import static io.ringcast.server.ServerCounter.PUBLISHES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A node cut off from the majority of its configured cluster commits nothing: a publish to it is
 * refused with {@code NO_MAJORITY}, and the Java client sends it again through its next address.
 * Two of three configured nodes start (a node serves clients only once a leader is elected), then
 * one leaves: the other is a minority.
 */
@Timeout(120)
class MinorityNodeTest {
    private static final String OPEN = "security:\n  anonymousRoles: [\"everything\"]\n  roles:\n"
            + "    - name: \"everything\"\n      subscribe: [\"#\"]\n      publish: [\"#\"]\n";

    @TempDir
    Path data;

    @Test
    void minorityNodeRefusesPublishesAndTheClientRetriesThroughItsNextAddress() throws Exception {
        String members = "  members:\n"
                + "    - {name: node-1, host: 127.0.0.11, membershipPort: " + FreePorts.pick() + "}\n"
                + "    - {name: node-2, host: 127.0.0.12, membershipPort: " + FreePorts.pick() + "}\n"
                + "    - {name: node-3, host: 127.0.0.13, membershipPort: " + FreePorts.pick() + "}\n";
        // each start returns once its node has caught up, which needs the other: start both at once
        CompletableFuture<RingcastServer> second = CompletableFuture.supplyAsync(() -> start(2, members));
        try (RingcastServer minority = start(1, members);
             RingcastServer other = RingcastServer.start(ConfigLoader.fromYaml(
                     "server:\n  host: 127.0.0.1\n  port: 0\n" + OPEN))) {
            second.get(60, TimeUnit.SECONDS).close();
            Await.until(() -> health(minority).contains("\"majority\":false"), Duration.ofSeconds(30),
                    Duration.ofMillis(20), () -> "node-1 alone knows no leader: " + health(minority));
            try (RingcastClient alone = RingcastClient.builder().addresses(minority.webSocketUrl()).build()) {
                alone.connect().get(10, TimeUnit.SECONDS);
                assertThatThrownBy(() -> alone.publish("m/t", bytes("x")).get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(RingcastException.class)
                        .hasMessageContaining("NO_MAJORITY")
                        .hasMessageContaining("knows no Raft leader")
                        .satisfies(e -> assertThat(((RingcastException) e).code()).isEqualTo(ErrorCode.NO_MAJORITY));
            }
            try (RingcastClient client = RingcastClient.builder()
                    .addresses(minority.webSocketUrl(), other.webSocketUrl()).build()) {
                client.connect().get(10, TimeUnit.SECONDS);
                assertThat(client.publish("m/t", bytes("first")).get(10, TimeUnit.SECONDS))
                        .as("applied by the next address").isEqualTo(1L);
                assertThat(client.publish("m/t", bytes("second")).get(10, TimeUnit.SECONDS)).isEqualTo(2L);
            }
            assertThat(minority.stats().get(PUBLISHES)).as("the minority node applied nothing").isZero();
            String metrics = get(minority, "/metrics");
            assertThat(metrics).contains("ringcast_cluster_view_size 1.0", "ringcast_cluster_majority 0.0",
                    "ringcast_cluster_leader 0.0");
            assertThat(metrics).containsPattern("ringcast_errors_total\\{code=\"NO_MAJORITY\"} [1-9]");
        }
    }

    private static String health(RingcastServer node) {
        return get(node, "/health");
    }

    private static String get(RingcastServer node, String path) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(node.webSocketUrl()
                    .replace("ws://", "http://").replace("/ws", path))).build(), HttpResponse.BodyHandlers.ofString())
                    .body();
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e.toString();
        }
    }

    private RingcastServer start(int node, String members) {
        try {
            return RingcastServer.start(ConfigLoader.fromYaml("server:\n  host: 127.0.0." + (10 + node)
                    + "\n  port: 0\ncluster:\n  enabled: true\n  nodeName: node-" + node + "\n  commitFsync: false\n"
                    + "  dataDir: \"" + data.resolve("node-" + node) + "\"\n" + members + OPEN));
        } catch (Exception e) {
            throw new IllegalStateException("node-" + node + " did not start", e);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
