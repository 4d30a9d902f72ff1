package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.ringcast.it.cluster.ClusterProcesses;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * In a cluster, a client subscribed to the topic it publishes to receives each update before the
 * update's {@code PUBLISH_ACK} through its own node, as on a single node: on a follower, which
 * learns that an entry is committed after the leader has answered it, and on the leader, where the
 * update is still queued in the node's sequencer when the log answers. Three real node processes;
 * the raw WebSocket peer ({@link RawWebSocket}, hence this package) records the server's messages in
 * the order they came off the wire, and each of many pipelined publishes is checked.
 *
 * <p>Before acks went through the node's pipeline (the log's answer went straight to the session's
 * event loop), this failed on both nodes: in the run on that code, 1,675 of the 2,000 acks through
 * the follower and 1,478 through the leader came before their update.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ClusterAckOrderTest {
    private static final int NODES = 3;
    private static final int PUBLISHES = 2000;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static ClusterProcesses cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = ClusterProcesses.start(ClusterAckOrderTest.class.getSimpleName(), NODES, "",
                node -> "127.0.0.1");
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aPublisherOnAFollowerReceivesEachUpdateBeforeItsAck() {
        int leader = leader();
        int follower = leader % NODES + 1;
        publishToOwnTopicAndAssertUpdatesComeFirst(follower, "ack-order/follower");
    }

    @Test
    void aPublisherOnTheLeaderReceivesEachUpdateBeforeItsAck() {
        publishToOwnTopicAndAssertUpdatesComeFirst(leader(), "ack-order/leader");
    }

    /**
     * Subscribes to {@code topic} through {@code node}, sends {@value #PUBLISHES} publishes to it back
     * to back (so that entries carry many and acks come in bursts), and checks, for every ack, that
     * the update with its sequence and value came before it on the same connection.
     */
    private static void publishToOwnTopicAndAssertUpdatesComeFirst(int node, String topic) {
        try (RawWebSocket ws = RawWebSocket.connectAndHello(cluster.webSocketUrl(node))) {
            ws.subscribe(1, topic);
            ws.await("SUBSCRIBED");
            for (int id = 1; id <= PUBLISHES; id++) {
                int correlationId = id;
                ws.send(out -> WireCodec.writePublish(out, correlationId, topic, value(correlationId)));
            }
            Await.until(() -> ws.all("PUBLISH_ACK").size() + ws.all("ERROR").size() >= PUBLISHES, WAIT,
                    () -> ws.all("PUBLISH_ACK").size() + " acks of " + PUBLISHES + " publishes through node-" + node
                            + ", errors " + ws.all("ERROR") + cluster.describe());
            assertThat(ws.all("ERROR")).as("no publish refused").isEmpty();

            List<RawWebSocket.Msg> received = List.copyOf(ws.messages);
            Map<Long, Integer> updateAt = new HashMap<>(); // sequence -> index of its UPDATE
            Map<Long, String> valueOf = new HashMap<>();
            for (int i = 0; i < received.size(); i++) {
                RawWebSocket.Msg m = received.get(i);
                if (m.type().equals("UPDATE")) {
                    updateAt.putIfAbsent(m.b(), i);
                    valueOf.put(m.b(), new String(m.value(), StandardCharsets.UTF_8));
                }
            }
            List<String> overtaken = new ArrayList<>();
            int acks = 0;
            for (int i = 0; i < received.size(); i++) {
                RawWebSocket.Msg m = received.get(i);
                if (!m.type().equals("PUBLISH_ACK")) {
                    continue;
                }
                acks++;
                long sequence = m.b();
                Integer at = updateAt.get(sequence);
                if (at == null || at > i) {
                    overtaken.add("ack of publish " + m.a() + " (sequence " + sequence + ") at message " + i
                            + (at == null ? ", its update not received at all" : ", its update only at " + at));
                } else {
                    assertThat(valueOf.get(sequence)).as("the update acked with sequence %d", sequence)
                            .isEqualTo(new String(value(m.a()), StandardCharsets.UTF_8));
                }
            }
            assertThat(acks).isEqualTo(PUBLISHES);
            assertThat(overtaken.size()).as("acks through node-%d that came before their update, of %d; the first: %s",
                    node, PUBLISHES, overtaken.subList(0, Math.min(10, overtaken.size()))).isZero();
        } catch (Exception e) {
            throw new AssertionError("node-" + node + ": " + e, e);
        }
    }

    private static byte[] value(int correlationId) {
        return ("v" + correlationId).getBytes(StandardCharsets.UTF_8);
    }

    /** The node every node names as the Raft leader. */
    private static int leader() {
        String[] found = {null};
        Await.until(() -> {
            String agreed = null;
            for (int node = 1; node <= NODES; node++) {
                JsonNode h = cluster.health(node);
                JsonNode named = h == null ? null : h.path("cluster").path("leader");
                String leader = named != null && named.isTextual() ? named.asText() : null;
                if (leader == null || (agreed != null && !agreed.equals(leader))) {
                    return false;
                }
                agreed = leader;
            }
            found[0] = agreed;
            return true;
        }, WAIT, () -> "every node names the same leader:" + cluster.describe());
        return Integer.parseInt(found[0].substring("node-".length()));
    }
}
