package io.ringcast.it.cluster;

import static io.ringcast.server.ServerCounter.PUBLISHES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.testkit.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A node that sees only a minority of its configured cluster sequences nothing: a publish to it is
 * refused with {@code NO_MAJORITY}, and the Java client sends it again through its next address.
 */
@Timeout(60)
class MinorityNodeTest {
    private static final String OPEN = "security:\n  anonymousRoles: [\"everything\"]\n  roles:\n"
            + "    - name: \"everything\"\n      subscribe: [\"#\"]\n      publish: [\"#\"]\n";

    @Test
    void minorityNodeRefusesPublishesAndTheClientRetriesThroughItsNextAddress() throws Exception {
        // one node running of three configured: never a majority
        String cluster = "cluster:\n  enabled: true\n  nodeName: node-1\n  members:\n"
                + "    - {name: node-1, host: 127.0.0.1, membershipPort: " + FreePorts.pick() + ", peerPort: " + FreePorts.pick() + "}\n"
                + "    - {name: node-2, host: 127.0.0.1, membershipPort: " + FreePorts.pick() + ", peerPort: " + FreePorts.pick() + "}\n"
                + "    - {name: node-3, host: 127.0.0.1, membershipPort: " + FreePorts.pick() + ", peerPort: " + FreePorts.pick() + "}\n";
        try (RingcastServer minority = RingcastServer.start(ConfigLoader.fromYaml(
                     "server:\n  host: 127.0.0.1\n  port: 0\n" + cluster + OPEN));
             RingcastServer other = RingcastServer.start(ConfigLoader.fromYaml(
                     "server:\n  host: 127.0.0.1\n  port: 0\n" + OPEN))) {
            try (RingcastClient alone = RingcastClient.builder().addresses(minority.webSocketUrl()).build()) {
                alone.connect().get(10, TimeUnit.SECONDS);
                assertThatThrownBy(() -> alone.publish("m/t", bytes("x")).get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(RingcastException.class)
                        .hasMessageContaining("NO_MAJORITY")
                        .hasMessageContaining("minority side of a split")
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
            String metrics = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + minority.port() + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("ringcast_cluster_view_size 1.0", "ringcast_cluster_majority 0.0",
                    "ringcast_cluster_owned_partitions 271.0", "ringcast_cluster_replication_lag_updates 0.0");
            assertThat(metrics).containsPattern("ringcast_errors_total\\{code=\"NO_MAJORITY\"} [1-9]");
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
