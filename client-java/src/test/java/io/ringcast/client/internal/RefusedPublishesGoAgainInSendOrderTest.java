package io.ringcast.client.internal;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.internal.ScriptedServer.Peer;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static io.ringcast.client.internal.PublishWindow.FIRST_CORRELATION_ID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A cluster node answers a publish with {@code NO_MAJORITY} (nothing applied) or
 * {@code REPLICATION_TIMEOUT} (outcome unknown), and then refuses the session's later publishes
 * with {@code NO_MAJORITY}. The cluster applies a publisher's publishes in the order its session
 * sends them, so the client sends every refused publish again through its next address, as
 * {@code REPUBLISH} with its correlation id, in the order first sent (whatever order the refusals
 * came in, and merged with those a lost connection left unacked), before any publish made
 * meanwhile; and it fails a publish to the application only once every address refused it.
 *
 * <p>The client is the real one, over real loopback sockets, against two {@link ScriptedServer}s:
 * {@code node-a} (its first address) and {@code node-b} (its next).
 */
@Timeout(60)
class RefusedPublishesGoAgainInSendOrderTest {
    private final ScriptedServer nodeA = ScriptedServer.start("node-a");
    private final ScriptedServer nodeB = ScriptedServer.start("node-b");
    private final RingcastClient client = RingcastClient.builder()
            .addresses(nodeA.url(), nodeB.url())
            .clientName("order")
            .reconnectDelay(Duration.ofMillis(10), Duration.ofMillis(100))
            .build();

    @AfterEach
    void close() {
        client.close();
        nodeA.close();
        nodeB.close();
    }

    @ParameterizedTest(name = "refusals arriving in the order {0}")
    @ValueSource(strings = {"1,2,3,4,5", "5,4,3,2,1", "3,1,5,2,4"})
    void noMajorityRefusalsOfPublishes1To5GoAgainAsRepublishThroughTheNextAddressInTheOrderFirstSentBeforeAPublishMadeMeanwhile(
            String refusalOrder) throws Exception {
        Peer onA = connectedToNodeA();
        List<CompletableFuture<Long>> published = publish(1, 5);
        assertThat(onA.next(5)).as("first sent to node-a").containsExactlyElementsOf(lines("PUBLISH", 1, 5));

        for (int n : Arrays.stream(refusalOrder.split(",")).mapToInt(Integer::parseInt).toArray()) {
            onA.send(b -> WireCodec.writeError(b, ErrorCode.NO_MAJORITY, id(n),
                    "node-a is on the minority side of a split"));
        }
        onA.awaitClosed(); // every publish answered: the client leaves node-a

        Peer onB = nodeB.nextSession();
        CompletableFuture<Long> meanwhile = publish(6, 6).get(0); // made before node-b's WELCOME
        assertThat(published).as("none failed while an address is left").noneMatch(CompletableFuture::isDone);
        onB.welcome("b-1");

        assertThat(onB.next(5)).as("sent again to node-b, with the ids they had, in the order first sent")
                .containsExactlyElementsOf(lines("REPUBLISH", 1, 5));
        assertThat(onB.next(1)).as("then the publish made meanwhile").containsExactlyElementsOf(lines("PUBLISH", 6, 6));
        onB.send(b -> IntStream.rangeClosed(1, 6).forEach(n -> WireCodec.writePublishAck(b, id(n), 9 + n)));
        assertThat(sequences(published)).containsExactly(10L, 11L, 12L, 13L, 14L);
        assertThat(meanwhile.get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(15L);
    }

    @Test
    void aPublishRefusedWithReplicationTimeoutGoesAgainAsRepublishThroughTheNextAddressWithItsIdAndFailsOnlyOnceEveryAddressRefusedIt()
            throws Exception {
        Peer onA = connectedToNodeA();
        List<CompletableFuture<Long>> published = publish(1, 3);
        assertThat(onA.next(3)).containsExactlyElementsOf(lines("PUBLISH", 1, 3));

        // outcome unknown on node-a: node-b applies it once (its ledger), or acks it if it was applied
        for (int n : new int[] {2, 1, 3}) {
            onA.send(b -> WireCodec.writeError(b, ErrorCode.REPLICATION_TIMEOUT, id(n), "replication timed out"));
        }
        onA.awaitClosed();

        Peer onB = nodeB.nextSession();
        onB.welcome("b-1");
        assertThat(onB.next(3)).as("sent again to node-b as REPUBLISH, each with its correlation id, in send order")
                .containsExactlyElementsOf(lines("REPUBLISH", 1, 3));
        assertThat(published).as("none failed while an address is left").noneMatch(CompletableFuture::isDone);

        onB.send(b -> {
            WireCodec.writePublishAck(b, id(1), 7);
            WireCodec.writeError(b, ErrorCode.REPLICATION_TIMEOUT, id(2), "replication timed out");
            WireCodec.writePublishAck(b, id(3), 8);
        });
        assertThat(published.get(0).get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS))
                .as("node-a had applied it: acked with its sequence").isEqualTo(7L);
        assertThat(published.get(2).get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(8L);
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> published.get(1).get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS));
        assertThat(failed.getCause()).as("both addresses refused it").isInstanceOf(RingcastException.class)
                .hasMessage("REPLICATION_TIMEOUT: replication timed out");
        assertThat(((RingcastException) failed.getCause()).code()).isEqualTo(ErrorCode.REPLICATION_TIMEOUT);

        // no third attempt: the client stays on node-b, and a new publish goes out there at once
        CompletableFuture<Long> next = publish(4, 4).get(0);
        assertThat(onB.next(1)).containsExactlyElementsOf(lines("PUBLISH", 4, 4));
        assertThat(onB.isOpen()).isTrue();
        assertThat(nodeA.noOtherConnection()).isTrue();
        onB.send(b -> WireCodec.writePublishAck(b, id(4), 9));
        assertThat(next.get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(9L);
    }

    @ParameterizedTest(name = "t/4 refused with {0}")
    @ValueSource(strings = {"NO_MAJORITY", "REPLICATION_TIMEOUT"})
    void publishesUnackedWhenTheConnectionDropsAndPublishesRefusedBeforeItAllGoAgainInTheOrderFirstSent(
            ErrorCode t4Refusal) throws Exception {
        Peer onA = connectedToNodeA();
        List<CompletableFuture<Long>> published = publish(1, 6);
        assertThat(onA.next(6)).containsExactlyElementsOf(lines("PUBLISH", 1, 6));

        // refusals newest first, with unacked publishes before, between and after them; then node-a
        // drops the connection before acking t/1, t/3 and t/6
        onA.sendThenDrop(b -> {
            WireCodec.writeError(b, ErrorCode.NO_MAJORITY, id(5), "minority");
            WireCodec.writeError(b, t4Refusal, id(4), "refused");
            WireCodec.writeError(b, ErrorCode.NO_MAJORITY, id(2), "an earlier publish of this session was refused");
        });

        Peer onB = nodeB.nextSession();
        CompletableFuture<Long> meanwhile = publish(7, 7).get(0);
        assertThat(published).noneMatch(CompletableFuture::isDone);
        onB.welcome("b-1");
        assertThat(onB.next(6)).as("refused or unacked, each goes again with its id, in the order first sent")
                .containsExactlyElementsOf(lines("REPUBLISH", 1, 6));
        assertThat(onB.next(1)).as("then the publish made meanwhile").containsExactlyElementsOf(lines("PUBLISH", 7, 7));

        onB.send(b -> IntStream.rangeClosed(1, 7).forEach(n -> WireCodec.writePublishAck(b, id(n), 19 + n)));
        assertThat(sequences(published)).containsExactly(20L, 21L, 22L, 23L, 24L, 25L);
        assertThat(meanwhile.get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(26L);
    }

    // ------------------------------------------------------------------ helpers

    /** Connects the client: its first address is node-a; returns that session, welcomed. */
    private Peer connectedToNodeA() throws Exception {
        CompletableFuture<Void> connected = client.connect();
        Peer onA = nodeA.nextSession();
        onA.welcome("a-1");
        connected.get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS);
        return onA;
    }

    /** Publishes value {@code vN} to topic {@code t/N} for N from {@code first} to {@code last}, in that order. */
    private List<CompletableFuture<Long>> publish(int first, int last) {
        List<CompletableFuture<Long>> futures = new ArrayList<>();
        for (int n = first; n <= last; n++) {
            futures.add(client.publish("t/" + n, ("v" + n).getBytes(StandardCharsets.UTF_8)));
        }
        return futures;
    }

    /** The correlation id of the client's Nth publish (a fresh client numbers them from the first id). */
    private static int id(int n) {
        return FIRST_CORRELATION_ID + n - 1;
    }

    /** {@code type id t/N vN} as {@link Wire} decodes it, for N from {@code first} to {@code last}. */
    private static List<String> lines(String type, int first, int last) {
        return IntStream.rangeClosed(first, last).mapToObj(n -> type + " " + id(n) + " t/" + n + " v" + n).toList();
    }

    private static List<Long> sequences(List<CompletableFuture<Long>> futures) throws Exception {
        List<Long> out = new ArrayList<>();
        for (CompletableFuture<Long> f : futures) {
            out.add(f.get(ScriptedServer.WAIT_MS, TimeUnit.MILLISECONDS));
        }
        return out;
    }
}
