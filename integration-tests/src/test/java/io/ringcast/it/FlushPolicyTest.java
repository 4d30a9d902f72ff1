package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/** Every flush policy changes only when bytes leave, never what arrives or in which order. */
@Timeout(60)
class FlushPolicyTest {
    static final int SUBSCRIBERS = 5;
    static final int TOPICS = 20;
    static final int UPDATES = 2_000;

    @ParameterizedTest
    @ValueSource(strings = {"immediate", "end-of-batch", "max-delay", "adaptive"})
    void everyPolicyDeliversEveryUpdateInOrder(String policy) throws Exception {
        try (RingcastServer server = TestServers.start("pipeline:\n  flushPolicy: " + policy
                + "\n  flushMaxDelayUs: 500\n")) {
            List<RingcastClient> clients = new ArrayList<>();
            try {
                List<Recorded> got = new ArrayList<>();
                for (int i = 0; i < SUBSCRIBERS; i++) {
                    RingcastClient c = RingcastClient.builder().addresses(server.webSocketUrl()).build();
                    clients.add(c);
                    c.connect().get(10, TimeUnit.SECONDS);
                    Recorded r = new Recorded();
                    got.add(r);
                    c.subscribe("flush/#", r).confirmed().get(10, TimeUnit.SECONDS);
                }
                RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build();
                clients.add(publisher);
                publisher.connect().get(10, TimeUnit.SECONDS);
                List<CompletableFuture<Long>> acks = new ArrayList<>();
                for (int n = 0; n < UPDATES; n++) {
                    acks.add(publisher.publish("flush/t" + (n % TOPICS), ("v" + n).getBytes(StandardCharsets.UTF_8)));
                }
                CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);

                for (Recorded r : got) {
                    Await.until(() -> r.updates.size() == UPDATES, "every update at every subscriber");
                    for (int t = 0; t < TOPICS; t++) {
                        assertThat(r.of("flush/t" + t)).extracting(Recorded.Got::sequence)
                                .containsExactlyElementsOf(LongStream.rangeClosed(1, UPDATES / TOPICS).boxed().toList());
                    }
                    assertThat(r.updates).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
                }
            } finally {
                clients.forEach(RingcastClient::close);
            }
        }
    }
}
