package io.ringcast.it;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.client.ConnectionListener;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.Transport;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.ringcast.server.ServerCounter.SLOW_CONSUMER_DISCONNECTS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A subscriber that stops reading is cut off with SLOW_CONSUMER once its unsent bytes pass the
 * limit, while a fast subscriber on the same node misses nothing. On every transport this JVM runs:
 * the limit reads the channel's outbound buffer and the cut-off half-closes the socket, both of
 * which each transport's channels implement in their own way.
 */
@Timeout(120)
class SlowConsumerTest {
    static final int VALUE_BYTES = 8 * 1024;
    /** Far above what a subscriber that keeps reading ever has queued with bursts of {@link #BURST}. */
    static final int LIMIT_BYTES = 1 << 20;
    static final int BURST = 32;
    /**
     * Longer than a frame's listeners must hold the Java client's I/O thread for it to count as a
     * stall (1 s: {@code ConnectionHandler.STALL_NANOS}, internal to the client).
     */
    static final long HELD_PAST_STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(1_200);

    @ParameterizedTest(name = "server and slow client on {0}")
    @MethodSource("io.ringcast.it.NativeTransportsTest#available")
    void slowSubscriberIsClosedWithSlowConsumerWhileFastOneMissesNothing(Transport transport) throws Exception {
        try (RingcastServer server = TestServers.start(transport,
                "limits:\n  outboundQueueBytes: " + LIMIT_BYTES + "\n  slowConsumerCloseGraceMs: 30000\n")) {
            CountDownLatch unblock = new CountDownLatch(1);
            CompletableFuture<RingcastException> slowReason = new CompletableFuture<>();
            List<Long> slowSequences = new CopyOnWriteArrayList<>();
            // the slow client has its own event loop: its listener blocks it, so it stops reading
            EventLoopGroup slowLoop = transport.newEventLoopGroup(1, new DefaultThreadFactory("slow-client", true));
            RingcastClient slow = RingcastClient.builder().addresses(server.webSocketUrl()).eventLoopGroup(slowLoop)
                    .connectionListener(new ConnectionListener() {
                        @Override
                        public void onDisconnected(String address, RingcastException reason, int closeCode) {
                            slowReason.complete(reason);
                        }
                    }).build();
            RingcastClient fast = RingcastClient.builder().addresses(server.webSocketUrl()).build();
            RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build();
            try (slow; fast; publisher) {
                slow.connect().get(10, TimeUnit.SECONDS);
                fast.connect().get(10, TimeUnit.SECONDS);
                publisher.connect().get(10, TimeUnit.SECONDS);
                slow.subscribe("slow/#", u -> {
                    slowSequences.add(u.sequence());
                    try {
                        unblock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }).confirmed().get(10, TimeUnit.SECONDS);
                Recorded fastGot = new Recorded();
                fast.subscribe("slow/#", fastGot).confirmed().get(10, TimeUnit.SECONDS);

                int total = publishUntilASlowConsumerIsClosed(server, publisher, "slow/t");
                unblock.countDown();

                RingcastException reason = slowReason.get(30, TimeUnit.SECONDS);
                assertThat(reason).isNotNull();
                assertThat(reason.code()).isEqualTo(ErrorCode.SLOW_CONSUMER);
                assertThat(reason.closeCode()).isEqualTo(1008);
                assertThat(reason.getMessage()).contains("limits.outboundQueueBytes");

                Await.until(() -> fastGot.lastSequence("slow/t") == total, "the fast subscriber gets everything");
                assertThat(fastGot.of("slow/t")).extracting(Recorded.Got::sequence)
                        .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, total).boxed().toList());
                assertThat(fastGot.updates).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);

                // the slow one reconnects and catches up (replay or snapshot after a gap), in order
                Await.until(() -> !slowSequences.isEmpty() && slowSequences.get(slowSequences.size() - 1) == total,
                        "the slow subscriber to resume to the newest update");
                for (int i = 1; i < slowSequences.size(); i++) {
                    assertThat(slowSequences.get(i)).isGreaterThan(slowSequences.get(i - 1));
                }
            } finally {
                slowLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A client stalled longer than {@code limits.slowConsumerCloseGraceMs}: the server's
     * {@code SLOW_CONSUMER} waits behind the updates it does not read and is dropped with the
     * connection, so the client infers it from its own stall rather than saying only "connection
     * lost" (issue 27).
     */
    @org.junit.jupiter.api.Test
    void aClientStalledPastTheGraceIsToldItWasMostLikelyClosedAsASlowConsumer() throws Exception {
        try (RingcastServer server = TestServers.start(
                "limits:\n  outboundQueueBytes: " + LIMIT_BYTES + "\n  slowConsumerCloseGraceMs: 200\n")) {
            CountDownLatch unblock = new CountDownLatch(1);
            AtomicLong stalledSinceNanos = new AtomicLong();
            CompletableFuture<RingcastException> slowReason = new CompletableFuture<>();
            EventLoopGroup slowLoop = Transport.NIO.newEventLoopGroup(1, new DefaultThreadFactory("stalled-client", true));
            RingcastClient slow = RingcastClient.builder().addresses(server.webSocketUrl()).eventLoopGroup(slowLoop)
                    .reconnectDelay(java.time.Duration.ofSeconds(30), java.time.Duration.ofSeconds(30))
                    .connectionListener(new ConnectionListener() {
                        @Override
                        public void onDisconnected(String address, RingcastException reason, int closeCode) {
                            slowReason.complete(reason);
                        }
                    }).build();
            RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl()).build();
            try (slow; publisher) {
                slow.connect().get(10, TimeUnit.SECONDS);
                publisher.connect().get(10, TimeUnit.SECONDS);
                slow.subscribe("stall/#", u -> {
                    try {
                        stalledSinceNanos.compareAndSet(0, System.nanoTime());
                        unblock.await(); // the listener holds the client's only I/O thread: it reads nothing
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }).confirmed().get(10, TimeUnit.SECONDS);
                publishUntilASlowConsumerIsClosed(server, publisher, "stall/t");
                // the grace passes and the server closes the socket while the client still reads nothing
                Await.until(() -> server.stats().get(io.ringcast.server.ServerCounter.SESSIONS) == 1,
                        "the server to close the stalled session after its grace");
                // a stall is one that held the I/O thread past the client's threshold: on a fast
                // machine the server closed the session within a second of the first update
                Await.until(() -> System.nanoTime() - stalledSinceNanos.get() > HELD_PAST_STALL_NANOS,
                        "the listener to hold the client's I/O thread past its stall threshold");
                unblock.countDown();
                RingcastException reason = slowReason.get(30, TimeUnit.SECONDS);
                assertThat(reason).isNotNull();
                assertThat(reason.getMessage()).startsWith("connection lost, most likely closed by the server as a slow"
                        + " consumer (SLOW_CONSUMER").contains("limits.slowConsumerCloseGraceMs");
            } finally {
                slowLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Publishes bursts to {@code topic} until the server gives up on a slow subscriber (kernel socket
     * buffers hold a few MB first); returns how many it published.
     */
    private static int publishUntilASlowConsumerIsClosed(RingcastServer server, RingcastClient publisher, String topic)
            throws Exception {
        byte[] value = new byte[VALUE_BYTES];
        int published = 0;
        while (server.stats().get(SLOW_CONSUMER_DISCONNECTS) == 0) {
            assertThat(published).as("published before the slow consumer was detected").isLessThan(50_000);
            CompletableFuture<?>[] acks = new CompletableFuture<?>[BURST];
            for (int i = 0; i < acks.length; i++) {
                acks[i] = publisher.publish(topic, value);
            }
            CompletableFuture.allOf(acks).get(30, TimeUnit.SECONDS);
            published += acks.length;
        }
        return published;
    }
}
