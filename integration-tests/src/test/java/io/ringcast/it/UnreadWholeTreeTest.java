package io.ringcast.it;

import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two hundred anonymous sessions subscribe to {@code #} over 20,000 topics and read nothing, while
 * every topic is updated again and again: each reply streams a window and waits, and what the node
 * keeps for them is bounded. Against a node process with a 256 MiB heap: a witness keeps receiving
 * (p99 under 100 ms), the heap after a full collection grows by less than 32 MB for the two hundred
 * (an external test saw some 200 MB), what the kernel holds for their sockets stays under a bound
 * ({@code limits.socketSendBufferBytes}), the node's resident memory too, and once they leave, the
 * heap and Netty's memory in use come back to where they were, with no session object left on the heap.
 */
@Timeout(240)
class UnreadWholeTreeTest {
    private static final long MIB = 1 << 20;
    private static final int TOPICS = 20_000;
    private static final int SESSIONS = 200;
    private static final long RSS_BOUND = 512 * MIB;
    /**
     * What the kernel may hold for the unread sessions: each socket's send buffer is
     * {@code limits.socketSendBufferBytes} (128 KiB, which Linux doubles): 35 MB measured for the
     * node's 202 connections. Left to the system, 535 MB: it grows them toward 4 MiB each, and the
     * sequencer spent seconds filling them with replies.
     */
    private static final long KERNEL_QUEUED_BOUND = SESSIONS * 384 * 1024L;
    private static final String PINNED = "ringcast_netty_direct_memory_pinned_bytes";
    private static final byte[] VALUE = "v".repeat(200).getBytes(StandardCharsets.UTF_8);
    /** Each topic's history holds this many updates: full after as many rounds, so the node's idle level is reached. */
    private static final int HISTORY = 4;
    /** The witness's p99 bound, milliseconds: it is served between the sessions' reply windows. */
    private static final double WITNESS_P99_MS = 100;

    /**
     * Publishes one update to each of the {@value #TOPICS} topics, {@code rounds} times, 500 to a
     * frame, each frame's acks awaited before the next: a publisher sending flat out fills the
     * inbound ring, and every other session's publishes wait behind it, which is another matter
     * than what unread sessions hold.
     */
    private static void publishRounds(NodeProcess node, int rounds) throws IOException {
        try (WireSocket publisher = new WireSocket(node.webSocketUrl(), null, 0)) {
            publisher.hello();
            for (int round = 0; round < rounds; round++) {
                for (int first = 0; first < TOPICS; first += 500) {
                    int from = first;
                    publisher.send(out -> {
                        for (int i = from; i < from + 500; i++) {
                            WireCodec.writePublish(out, i, "tree/" + (i % 100) + "/" + i, VALUE);
                        }
                    });
                    assertThat(publisher.countMessages("PUBLISH_ACK", 500)).isEqualTo(500);
                }
            }
        }
    }

    /**
     * Opens {@value #SESSIONS} sessions into {@code sessions}, each subscribing to {@code #} and reading
     * nothing, waits until every reply streams, and publishes three rounds meanwhile.
     */
    private static void unreadSessionsUnderLoad(NodeProcess node, List<WireSocket> sessions) throws IOException {
        for (int s = 0; s < SESSIONS; s++) {
            WireSocket session = new WireSocket(node.webSocketUrl(), null, 4096);
            sessions.add(session);
            session.hello();
            session.send(out -> WireCodec.writeSubscribe(out, 1, "#", Map.of()));
        }
        MetricSampler.await(node.port(), "ringcast_subscribe_replies_pending", v -> v == SESSIONS,
                "every session's reply streaming, unread");
        publishRounds(node, 3);
    }

    @Test
    void twoHundredSessionsSubscribedToEverythingThatReadNothingHoldLittleAndLeaveNothing(@TempDir Path dir)
            throws Exception {
        String yaml = "history:\n  length: " + HISTORY + "\nsecurity:\n" + TestServers.OPEN_TO_ANONYMOUS;
        try (NodeProcess node = NodeProcess.start(dir, List.of("-Xmx256m"), yaml)) {
            publishRounds(node, HISTORY);
            double idleHeap = node.heapAfterGc();
            double idlePinned = MetricSampler.metric(node.port(), PINNED);

            List<WireSocket> unread = new ArrayList<>();
            try (Witness witness = Witness.start(node.webSocketUrl())) {
                unreadSessionsUnderLoad(node, unread);
                // served between the sessions' windows, not behind all of them (before the reply
                // turns, 200 windows could queue ahead of its publish); 20-24 ms on 2 cores with a
                // busy process beside. Sockets the kernel grew to 4 MiB each (limits.
                // socketSendBufferBytes 0) kept the sequencer making windows for seconds: 25-37 ms
                // on a quiet machine, and 0.2-1.4 s in 3 of 4 runs beside a busy process (and in CI)
                witness.stopAndVerifyWithin(WITNESS_P99_MS);
                double heap = node.heapAfterGc();
                long kernelQueued = node.kernelSendQueueBytes();
                System.out.printf("MEASURED %d sessions on # unread: heap +%.1f MB after a full collection, "
                                + "witness p99 %.1f ms, RSS %.0f MB, kernel send queues %.1f MB%n", SESSIONS,
                        (heap - idleHeap) / MIB, witness.p99Millis(), node.rssBytes() / (double) MIB,
                        kernelQueued / (double) MIB);
                assertThat(kernelQueued).as("bytes the kernel holds for the node's connections, unread")
                        .isLessThan(KERNEL_QUEUED_BOUND);
                assertThat(heap - idleHeap).as("heap kept for the sessions").isLessThan(32.0 * MIB);
                assertThat(MetricSampler.metric(node.port(), "ringcast_sessions")).as("sessions open")
                        .isEqualTo(SESSIONS + 2);
            } finally {
                for (WireSocket session : unread) {
                    session.close();
                }
            }
            node.assertAlive();
            assertThat(node.rssBytes()).as("the node's resident memory").isLessThan(RSS_BOUND);
            MetricSampler.await(node.port(), "ringcast_sessions", v -> v == 0, "every session gone");
            assertThat(node.heapAfterGc() - idleHeap).as("heap kept after the sessions left").isLessThan(16.0 * MIB);
            MetricSampler.await(node.port(), PINNED, v -> v < idlePinned + 16 * MIB,
                    "Netty's memory in use back within 16 MiB of " + idlePinned);
            // no session left on the heap once a batch went through after the last close (its end
            // releases the fan-out ring's slots the pollers passed): the ring's slots kept 65,536
            // events' sessions, each with its channel and pipeline, until reused
            publishRounds(node, 1);
            node.awaitSessionsOnTheHeap(0, "no session object left on the node's heap");
        }
    }
}
