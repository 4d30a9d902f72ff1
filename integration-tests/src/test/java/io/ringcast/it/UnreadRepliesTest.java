package io.ringcast.it;

import io.ringcast.protocol.WireCodec;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replies count against {@code limits.outboundQueueBytes} like updates do: a client that sends
 * requests (here protocol {@code PING}s, 5,000 to a frame) and reads none of the answers is held
 * back by TCP while its replies wait, and is a slow consumer once they pass the limit. Measured
 * from the outside: the server's largest outbound queue ({@code ringcast_outbound_queue_largest_bytes})
 * is sampled throughout the flood, and a witness keeps receiving every update.
 */
@Timeout(120)
class UnreadRepliesTest {
    private static final int PINGS_PER_FRAME = 5_000; // 65,000 bytes: one frame of the 16-bit length form
    /**
     * 260,000 bytes of PONGs from one frame: four times {@code limits.outboundQueueBytes} in the
     * flood test, and more than the kernel's socket buffers take from a connection whose peer reads
     * nothing. With a frame's replies near the limit, what the kernel took could leave a session
     * under the limit but unwritable after its first frame, its reads held until the idle timeout:
     * whether it was cut at the limit depended on how many frames one read happened to bring.
     */
    private static final int PINGS_PER_LARGE_FRAME = 20_000;

    private static void sendPings(WireSocket flooder, int frames, int pingsPerFrame, long firstNonce)
            throws IOException {
        for (int f = 0; f < frames; f++) {
            long base = firstNonce + (long) f * pingsPerFrame;
            flooder.send(out -> {
                for (int i = 0; i < pingsPerFrame; i++) {
                    WireCodec.writePing(out, base + i);
                }
            });
        }
    }

    /** Sends in a thread of its own: the server may stop reading, and then only our reading unblocks the send. */
    private static Thread flood(WireSocket flooder, int frames, int pingsPerFrame, String name) {
        Thread t = new Thread(() -> {
            try {
                sendPings(flooder, frames, pingsPerFrame, 1);
            } catch (IOException closedByTheServer) {
                // expected where the server closes the slow consumer while we are still sending
            }
        }, name);
        t.start();
        return t;
    }

    /**
     * At a sampled leak level, as {@link #aClientThatReadsNoRepliesIsHeldBackByTcpAndGetsEveryReplyWhenItReads}:
     * paranoid detection records a stack trace for every read of a buffer, so unmasking and answering
     * a flood took an event loop over ten seconds (thread dumps of CI's failures, in
     * {@code WebSocket08FrameDecoder.unmask}), and the next flooder's upgrade or {@code HELLO} on that
     * loop waited past its socket's timeout: a cost of the detector, not of the server.
     */
    @Test
    void fourSessionsFloodingPingsAndReadingNothingNeverQueueMoreThanTheLimit() throws Exception {
        io.ringcast.testkit.FailOnLeakExtension.withLevel(io.netty.util.ResourceLeakDetector.Level.SIMPLE,
                this::fourSessionsFloodPingsAndReadNothing);
    }

    private void fourSessionsFloodPingsAndReadNothing() throws Exception {
        long limit = 65536; // a quarter of one frame's replies
        try (RingcastServer server = TestServers.start("limits:\n  outboundQueueBytes: " + limit
                + "\n  slowConsumerCloseGraceMs: 200\n");
             Witness witness = Witness.start(server);
             MetricSampler queue = new MetricSampler(server, "ringcast_outbound_queue_largest_bytes")) {
            List<Thread> floods = new ArrayList<>();
            List<WireSocket> flooders = new ArrayList<>();
            for (int s = 0; s < 4; s++) {
                WireSocket flooder = new WireSocket(server.webSocketUrl(), null, 4096);
                flooder.hello();
                flooders.add(flooder);
                // 1,000,000 PINGs each: 13 MB of queued PONGs per session if nothing stopped them
                floods.add(flood(flooder, 50, PINGS_PER_LARGE_FRAME, "flooder-" + s));
            }
            // Each flooder ends either cut at the limit (SLOW_CONSUMER) or held below it with its reads
            // paused, since the server stops reading a session whose replies wait unwritten past half the
            // limit (aClientThatReadsNoRepliesIsHeldBackByTcp...): which of the two depends on how much of a
            // frame's PONGs the kernel took before the check, so this test asserts what holds either way.
            // Samples spanning the flood: each check comes right after a write, so a queue passes the limit
            // by one reply at most, plus the ERROR and close frame that end it (without the limit: tens of MB).
            queue.awaitSamples(50);
            assertThat(queue.largest()).as("the largest outbound queue during the flood ("
                            + MetricSampler.metric(server, "ringcast_slow_consumer_disconnects_total")
                            + " flooders cut as slow consumers)")
                    .isLessThanOrEqualTo(limit + 4096);
            for (WireSocket flooder : flooders) {
                flooder.close(); // ends a flood the server holds back, as a cut ends the others
            }
            for (Thread t : floods) {
                t.join(30_000);
                assertThat(t.isAlive()).as(t.getName() + " stopped: its connection is closed").isFalse();
            }
            MetricSampler.await(server, "ringcast_sessions", v -> v == 2,
                    "the flooders' sessions to be gone, the witness's two left");
            witness.stopAndVerify();
            try (RawWebSocket newcomer = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                newcomer.send(out -> WireCodec.writePing(out, 42));
                assertThat(newcomer.await("PONG").b()).isEqualTo(42);
            }
        }
    }

    /**
     * At a sampled leak level, so that the server reads the flood as fast as it would in production:
     * a server slowed down by paranoid detection reads no faster than the kernel's buffers take the
     * replies, with or without the pause, and the test could not tell the two apart.
     */
    @Test
    void aClientThatReadsNoRepliesIsHeldBackByTcpAndGetsEveryReplyWhenItReads() throws Exception {
        io.ringcast.testkit.FailOnLeakExtension.withLevel(io.netty.util.ResourceLeakDetector.Level.SIMPLE,
                this::readsNoRepliesThenReadsThemAll);
    }

    private void readsNoRepliesThenReadsThemAll() throws Exception {
        // unwritable past 64 KiB unsent: from there the server stops reading this client
        int highWaterMark = 65536;
        try (RingcastServer server = TestServers.start("features:\n  conflationBacklogBytes: " + highWaterMark + "\n");
             Witness witness = Witness.start(server);
             MetricSampler queue = new MetricSampler(server, "ringcast_outbound_queue_largest_bytes");
             // a 64 KiB window: small enough to fill, large enough that reading 15 MB through it is quick
             WireSocket flooder = new WireSocket(server.webSocketUrl(), null, 65536)) {
            flooder.hello();
            // 1,000,000 PINGs: their PONGs are 13 MB on the wire, far more than the kernel's socket buffers take
            // (some 400 KiB here: the server's 128 KiB send buffer and the client's 64 KiB receive buffer, each
            // doubled by Linux); without a pause the rest would queue in the server
            int frames = 200;
            Thread sender = flood(flooder, frames, PINGS_PER_FRAME, "flooder");
            // the abuse goes on: what the server does not read waits in the sockets' buffers, or blocks the sender.
            // Replies wait in the server once the kernel's buffers are full: past 64 KiB unsent it stops
            // reading, and it reads again below half of that; meanwhile the kernel takes what it can, so a
            // paused queue settles anywhere between the two (64,567 bytes, seen with 128 KiB socket buffers)
            Await.until(() -> queue.largest() > highWaterMark / 2, "the server to queue replies");
            queue.awaitSamples(300); // about 4 s of the flood, a sample every 10 ms
            assertThat(queue.largest()).as("the largest outbound queue while the client read nothing")
                    .isLessThan(4L << 20);
            long pongs = flooder.countMessages("PONG", (long) frames * PINGS_PER_FRAME);
            assertThat(pongs).isEqualTo((long) frames * PINGS_PER_FRAME);
            sender.join(10_000);
            assertThat(sender.isAlive()).as("the sender finished once the client read").isFalse();
            assertThat(flooder.messages).as("anything but the PONGs").noneMatch(m -> m.type().equals("ERROR"));
            witness.stopAndVerify();
            assertThat(MetricSampler.metric(server, "ringcast_slow_consumer_disconnects_total")).isZero();
        }
    }

    @Test
    void aClientThatReadsNothingForTheIdleTimeoutIsClosedAsASlowConsumer() throws Exception {
        // at a sampled leak level, as the flood above: paranoid detection made the reading of a
        // million PINGs take 12 to 20 s of the 20 s this test waits
        io.ringcast.testkit.FailOnLeakExtension.withLevel(io.netty.util.ResourceLeakDetector.Level.SIMPLE,
                this::readsNothingForTheIdleTimeout);
    }

    private void readsNothingForTheIdleTimeout() throws Exception {
        try (RingcastServer server = TestServers.start("features:\n  conflationBacklogBytes: 65536\n"
                + "session:\n  idleTimeoutMs: 2000\n");
             Witness witness = Witness.start(server);
             WireSocket flooder = new WireSocket(server.webSocketUrl(), null, 4096)) {
            flooder.hello();
            // 1,000,000 PINGs: their 13 MB of PONGs are more than the kernel's socket buffers take
            Thread sender = flood(flooder, 200, PINGS_PER_FRAME, "flooder");
            MetricSampler.await(server, "ringcast_slow_consumer_disconnects_total", v -> v == 1,
                    "the flooder, whose replies waited unread for the idle timeout, to be closed as a slow consumer");
            sender.join(30_000);
            assertThat(sender.isAlive()).as("the sender stopped: the server closed the connection").isFalse();
            witness.stopAndVerify();
        }
    }
}
