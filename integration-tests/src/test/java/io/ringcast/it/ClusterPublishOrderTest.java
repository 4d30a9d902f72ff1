package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.it.cluster.ClusterProcesses;
import io.ringcast.protocol.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A publish refused with {@code NO_MAJORITY} was not applied, and the client sends it again
 * through another address. Had the same session's later publishes been applied meanwhile (the
 * node's leader answering again), they would come before it, and a topic could end on an older
 * value (the cluster benchmark saw 661 values so, after a leader's kill). So a session's publishes
 * after one refused unapplied, or timed out, are refused too, majority or not; another session
 * publishes.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClusterPublishOrderTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void aSessionWithAPublishRefusedForNoMajorityHasItsLaterPublishesRefusedOnceAMajorityIsBack()
            throws Exception {
        try (ClusterProcesses cluster = ClusterProcesses.start(ClusterPublishOrderTest.class.getSimpleName(), 3, "",
                node -> "127.0.0.1")) {
            cluster.stop(2);
            cluster.stop(3);
            cluster.await(1, h -> !h.path("cluster").path("majority").asBoolean(), WAIT, "knows no leader");
            try (RawWebSocket refused = RawWebSocket.connectAndHello(cluster.webSocketUrl(1))) {
                refused.publish(1, "order/t", "first");
                assertThat(ErrorCode.of(refused.await("ERROR").a())).isEqualTo(ErrorCode.NO_MAJORITY);

                cluster.restart(2); // a majority of 3 again
                cluster.await(1, h -> h.path("cluster").path("majority").asBoolean(), WAIT, "knows a leader again");
                refused.publish(2, "order/t", "second");
                RawWebSocket.Msg error = Await.value(() -> refused.all("ERROR").stream().filter(m -> m.b() == 2)
                        .findFirst().orElse(null), () -> "the answer to publish 2: " + refused.all("PUBLISH_ACK"));
                assertThat(ErrorCode.of(error.a())).isEqualTo(ErrorCode.NO_MAJORITY);
                assertThat(error.text()).contains("an earlier publish of this session was refused");

                try (RawWebSocket fresh = RawWebSocket.connectAndHello(cluster.webSocketUrl(1))) {
                    fresh.publish(1, "order/t", "third");
                    assertThat(fresh.await("PUBLISH_ACK").b()).as("the topic's first update").isEqualTo(1);
                }
                assertThat(refused.all("PUBLISH_ACK")).as("nothing of the refused session applied").isEmpty();
            }
        }
    }
}
