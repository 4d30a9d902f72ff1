package io.ringcast.client.internal;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.client.internal.ScriptedServer.Peer;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A subscription with options through the public API, over real loopback sockets, against two
 * {@link ScriptedServer}s: {@code node-a} (the client's first address) and {@code node-b} (its
 * next). Each node numbers its views its own way, so after the move the subscription must be
 * resumed with the same options and its own last sequences, and must take the view id of
 * {@code node-b}'s {@code VIEW}, not the one {@code node-a} gave.
 */
@Timeout(60)
class ViewedSubscriptionResumesOnTheNextNodeTest {
    private static final long WAIT_MS = ScriptedServer.WAIT_MS;
    private static final SubscribeOptions BIDS_WHEN_TIGHT = SubscribeOptions.builder()
            .fields("bid").filter("spread < 0.0005").build();

    private final ScriptedServer nodeA = ScriptedServer.start("node-a");
    private final ScriptedServer nodeB = ScriptedServer.start("node-b");
    private final RingcastClient client = RingcastClient.builder()
            .addresses(nodeA.url(), nodeB.url())
            .clientName("views")
            .reconnectDelay(Duration.ofMillis(10), Duration.ofMillis(100))
            .build();

    @AfterEach
    void close() {
        client.close();
        nodeA.close();
        nodeB.close();
    }

    @Test
    void aViewedSubscriptionResumesOnTheNextNodeWithItsOptionsItsOwnLastSequenceAndThatNodesViewId() throws Exception {
        client.connect();
        Peer onA = nodeA.nextSession();
        onA.welcome("a-1");
        Events bids = new Events();
        Subscription subscription = client.subscribe("fx/#", BIDS_WHEN_TIGHT, bids);
        int id = subscriptionId(onA.next(1).get(0), " fx/# {} " + BIDS_WHEN_TIGHT);

        onA.send(b -> {
            WireCodec.writeView(b, id, 7);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.viewedSnapshot(b, id, 1, 10, 0, 7, "{\"bid\":1.0840}");
            WireCodec.writeSubscribed(b, id, 1);
            Wire.update(b, 1, 11, "{\"bid\":1.0841,\"spread\":0.0004}"); // plain: not for this subscription
            Wire.viewedUpdate(b, 1, 12, 0, 7, "{\"bid\":1.0842}");
        });
        subscription.confirmed().get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertThat(bids.next(2)).containsExactly("SNAPSHOT fx/EURUSD #10 {\"bid\":1.0840}",
                "UPDATE fx/EURUSD #12 {\"bid\":1.0842}");
        onA.sendThenDrop(b -> WireCodec.writeUnmatched(b, 7, 1, 13));
        assertThat(bids.next(1)).containsExactly("UNMATCHED fx/EURUSD #13");

        Peer onB = nodeB.nextSession();
        onB.welcome("b-1");
        assertThat(onB.next(1)).as("the same options, and the last sequence it received through its view")
                .containsExactly("SUBSCRIBE " + id + " fx/# {fx/EURUSD=13} " + BIDS_WHEN_TIGHT);
        onB.send(b -> {
            WireCodec.writeTopic(b, 4, "fx/EURUSD");
            Wire.viewedUpdate(b, 4, 14, 0, 7, "node-a's view id: not this subscription's on node-b");
            WireCodec.writeView(b, id, 2);
            Wire.viewedSnapshot(b, id, 4, 13, 0, 2, "a duplicate of #13");
            WireCodec.writeSubscribed(b, id, 1);
            Wire.viewedUpdate(b, 4, 15, 0, 2, "{\"bid\":1.0850}");
        });
        assertThat(bids.next(1)).containsExactly("UPDATE fx/EURUSD #15 {\"bid\":1.0850}");

        // node-b refuses another subscription's options: that one is over, the session goes on
        Events refused = new Events();
        Subscription throttled = client.subscribe("eq/#", SubscribeOptions.builder().maxRate(4).build(), refused);
        int throttledId = subscriptionId(onB.next(1).get(0), " eq/# {} {maxRate=4}");
        onB.send(b -> WireCodec.writeError(b, ErrorCode.INVALID_OPTIONS, throttledId,
                "options are not served yet (issue 16): maxRate"));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> throttled.confirmed().get(WAIT_MS, TimeUnit.MILLISECONDS));
        assertThat(((RingcastException) e.getCause()).code()).isEqualTo(ErrorCode.INVALID_OPTIONS);
        assertThat(refused.next(1))
                .containsExactly("ERROR INVALID_OPTIONS: options are not served yet (issue 16): maxRate");

        onB.send(b -> Wire.viewedUpdate(b, 4, 16, 0, 2, "{\"bid\":1.0851}"));
        assertThat(bids.next(1)).containsExactly("UPDATE fx/EURUSD #16 {\"bid\":1.0851}");
        assertThat(onB.isOpen()).isTrue();
        assertThat(nodeA.noOtherConnection() && nodeB.noOtherConnection()).as("no reconnect after the refusal")
                .isTrue();
    }

    /** The subscription id of a {@code SUBSCRIBE} line, checking that the rest of it is {@code rest}. */
    private static int subscriptionId(String subscribeLine, String rest) {
        assertThat(subscribeLine).startsWith("SUBSCRIBE ").endsWith(rest);
        return Integer.parseInt(subscribeLine.substring("SUBSCRIBE ".length(), subscribeLine.length() - rest.length()));
    }

    /** A listener that queues what it gets, one line each, for the test thread to await. */
    private static final class Events implements UpdateListener {
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        @Override
        public void onUpdate(Update update) {
            lines.add(update.kind() + " " + update.topic() + " #" + update.sequence() + " " + update.text());
        }

        @Override
        public void onUnmatched(String topic, long sequence) {
            lines.add("UNMATCHED " + topic + " #" + sequence);
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
