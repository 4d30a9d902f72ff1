package io.ringcast.client.internal;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.client.internal.ScriptedServer.Peer;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.ringcast.client.internal.PublishWindow.FIRST_CORRELATION_ID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link RingcastClient#remove} and {@link UpdateListener#onRemoved} through the public API, over a
 * real loopback socket, against a {@link ScriptedServer}: a removal made before the connection is
 * sent once it is welcomed and completes with the server's count; a refusal fails it with the
 * server's code; one whose connection is lost before its answer fails as maybe applied and is not
 * sent on the next connection; a removed topic reaches the listener as {@code onRemoved}, and the
 * path created again from sequence 1.
 */
@Timeout(60)
class RemovalThroughTheClientTest {
    private static final long WAIT_MS = ScriptedServer.WAIT_MS;

    private final ScriptedServer node = ScriptedServer.start("node");
    private final RingcastClient client = RingcastClient.builder()
            .addresses(node.url())
            .clientName("removals")
            .reconnectDelay(Duration.ofMillis(10), Duration.ofMillis(100))
            .build();

    @AfterEach
    void close() {
        client.close();
        node.close();
    }

    @Test
    void aRemovalIsAnsweredOnceNeverSentAgainAndTheListenerHearsOfTheRemovedTopic() throws Exception {
        CompletableFuture<Integer> early = client.remove("fx/#");
        CompletableFuture<Integer> invalid = client.remove("fx/#/bid");
        ExecutionException bad = assertThrows(ExecutionException.class, () -> invalid.get(0, TimeUnit.MILLISECONDS));
        assertThat(((RingcastException) bad.getCause()).code()).as("checked here, as a selector to subscribe to")
                .isEqualTo(ErrorCode.INVALID_SELECTOR);

        client.connect();
        Peer first = node.nextSession();
        first.welcome("s-1");
        assertThat(first.next(1)).containsExactly("REMOVE " + FIRST_CORRELATION_ID + " fx/#");
        first.send(b -> WireCodec.writeRemoved(b, FIRST_CORRELATION_ID, 2));
        assertThat(early.get(WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(2);

        Events events = new Events();
        Subscription subscription = client.subscribe("fx/#", events);
        assertThat(first.next(1)).containsExactly("SUBSCRIBE 1 fx/# {}");
        first.send(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD", 7);
            Wire.snapshot(b, 1, 1, 3, 0, "three");
            WireCodec.writeSubscribed(b, 1, 1);
            WireCodec.writeTopicRemoved(b, 1, 3);
            WireCodec.writeTopic(b, 2, "fx/EURUSD", 8);
            Wire.update(b, 2, 1, "one again");
        });
        subscription.confirmed().get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertThat(events.next(3)).containsExactly("SNAPSHOT fx/EURUSD #3 three", "REMOVED fx/EURUSD #3",
                "UPDATE fx/EURUSD #1 one again");

        CompletableFuture<Integer> refused = client.remove("eq/#");
        assertThat(first.next(1)).containsExactly("REMOVE " + (FIRST_CORRELATION_ID + 1) + " eq/#");
        first.send(b -> WireCodec.writeError(b, ErrorCode.PERMISSION_DENIED, FIRST_CORRELATION_ID + 1,
                "no publish grant can match 'eq/#'"));
        ExecutionException denied = assertThrows(ExecutionException.class,
                () -> refused.get(WAIT_MS, TimeUnit.MILLISECONDS));
        assertThat(((RingcastException) denied.getCause()).code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
        assertThat(denied.getCause()).hasMessageContaining("no publish grant can match 'eq/#'");

        CompletableFuture<Integer> lost = client.remove("fx/EURUSD");
        assertThat(first.next(1)).containsExactly("REMOVE " + (FIRST_CORRELATION_ID + 2) + " fx/EURUSD");
        first.sendThenDrop(b -> WireCodec.writePong(b, 0)); // the node goes before it answers
        ExecutionException maybe = assertThrows(ExecutionException.class,
                () -> lost.get(WAIT_MS, TimeUnit.MILLISECONDS));
        assertThat(maybe.getCause()).hasMessageContaining("may or may not have been applied");

        Peer second = node.nextSession();
        second.welcome("s-2");
        assertThat(second.next(1)).containsExactly("SUBSCRIBE 1 fx/# {fx/EURUSD=1@8} {incarnations=1}");
        CompletableFuture<Integer> next = client.remove("fx/GBPUSD");
        assertThat(second.next(1)).as("the lost removal was not sent again before this one")
                .containsExactly("REMOVE " + (FIRST_CORRELATION_ID + 3) + " fx/GBPUSD");
        second.send(b -> WireCodec.writeRemoved(b, FIRST_CORRELATION_ID + 3, 0));
        assertThat(next.get(WAIT_MS, TimeUnit.MILLISECONDS)).isZero();
    }

    /** A listener that queues what it gets, one line each, for the test thread to await. */
    private static final class Events implements UpdateListener {
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        @Override
        public void onUpdate(Update update) {
            lines.add(update.kind() + " " + update.topic() + " #" + update.sequence() + " " + update.text());
        }

        @Override
        public void onRemoved(String topic, long lastSequence) {
            lines.add("REMOVED " + topic + " #" + lastSequence);
        }

        @Override
        public void onError(RingcastException error) {
            lines.add("ERROR " + error.getMessage());
        }

        /** The next {@code n} events, waiting for each at most {@link #WAIT_MS}. */
        List<String> next(int n) throws InterruptedException {
            List<String> got = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String line = lines.poll(WAIT_MS, TimeUnit.MILLISECONDS);
                if (line == null) {
                    throw new AssertionError("no event " + (i + 1) + " of " + n + " within " + WAIT_MS + " ms after "
                            + got);
                }
                got.add(line);
            }
            return got;
        }
    }
}
