package io.ringcast.it;

import io.ringcast.testkit.DeflateBomb;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decompression bombs (permessage-deflate, RFC 7692): a client message is inflated only up to
 * {@code limits.maxFrameBytes}, whether it comes in one frame or in many, and past that the client
 * gets {@code FRAME_TOO_LARGE} naming the limit and the close; the server's heap never holds the
 * inflated size, a witness misses nothing and the next client is welcomed. The server runs in this
 * JVM, so this JVM's heap is the server's.
 */
@Timeout(120)
class DeflateBombTest {
    static final int MAX_FRAME_BYTES = 1048576;
    static final long MIB = 1024 * 1024;
    /**
     * Heap growth allowed while bombs go off: half of what the 1 GiB bomb inflates to. The peak of
     * heap used counts garbage not yet collected (measured with the bound in place: up to 160 MiB
     * on a busy machine), so it cannot be tight; without the bound the 1 GiB bomb needs 1 GiB at once.
     */
    static final long HEAP_GROWTH_BOUND_BYTES = 512 * MIB;

    static byte[] fiftyMiB;
    static byte[] oneGiB;
    /** One per test: a {@link Witness} counts its topic's sequences from 1. */
    RingcastServer server;

    @BeforeAll
    static void makeBombs() {
        fiftyMiB = DeflateBomb.zeros(50 * MIB);
        oneGiB = DeflateBomb.zeros(1024 * MIB);
        assertThat(fiftyMiB.length).as("the 50 MiB bomb's frame").isBetween(40_000, 60_000);
        assertThat(oneGiB.length).as("the 1 GiB bomb's frame, within the frame limit").isBetween(1_000_000, MAX_FRAME_BYTES);
    }

    @BeforeEach
    void start() throws InterruptedException {
        server = TestServers.start("limits:\n  maxFrameBytes: " + MAX_FRAME_BYTES + "\nfeatures:\n  compression: true\n");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void fiftyMiBBombInOneFrameIsRefusedAsTooLargeWithoutInflatingIt() throws Exception {
        assertBombsRefusedWithinTheHeapBound(fiftyMiB, 1, 5);
    }

    @Test
    void oneGiBBombInOneFrameIsRefusedAsTooLargeWithoutInflatingIt() throws Exception {
        assertBombsRefusedWithinTheHeapBound(oneGiB, 1, 3);
    }

    /**
     * Each frame of the message inflates to half the limit, so no single frame is refused: the
     * reassembled message is, once its frames add up to more than the limit.
     */
    @Test
    void bombSpreadOverContinuationFramesIsBoundedAsAWhole() throws Exception {
        assertBombsRefusedWithinTheHeapBound(fiftyMiB, 100, 3);
    }

    @Test
    void corruptDeflateDataIsAMalformedFrame() throws Exception {
        try (Witness witness = Witness.start(server);
             WireSocket bad = new WireSocket(server.webSocketUrl(), "permessage-deflate", 0)) {
            bad.hello();
            bad.sendDeflated(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x12, 0x34}, 1);
            RawWebSocket.Msg error = bad.awaitMessage("ERROR");
            assertThat(ErrorCode.of(error.a())).as("error code, reason: %s", error.text()).isEqualTo(ErrorCode.MALFORMED_FRAME);
            assertThat(error.text()).contains("permessage-deflate");
            assertThat(bad.awaitMessage("CLOSE").a()).isEqualTo(ErrorCode.MALFORMED_FRAME.closeCode());
            witness.stopAndVerify();
        }
    }

    private void assertBombsRefusedWithinTheHeapBound(byte[] bomb, int frames, int times) throws Exception {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        try (Witness witness = Witness.start(server); HeapPeak peak = HeapPeak.start(memory)) {
            for (int i = 0; i < times; i++) {
                try (WireSocket bad = new WireSocket(server.webSocketUrl(), "permessage-deflate", 0)) {
                    assertThat(bad.negotiatedExtensions()).startsWith("permessage-deflate");
                    bad.hello();
                    bad.sendDeflated(bomb, frames);
                    RawWebSocket.Msg error = bad.awaitMessage("ERROR");
                    assertThat(ErrorCode.of(error.a())).as("error code, reason: %s", error.text())
                            .isEqualTo(ErrorCode.FRAME_TOO_LARGE);
                    assertThat(error.text()).contains("limits.maxFrameBytes = " + MAX_FRAME_BYTES);
                    assertThat(bad.awaitMessage("CLOSE").a()).as("close code").isEqualTo(ErrorCode.FRAME_TOO_LARGE.closeCode());
                }
                System.out.printf("bomb %d of %d (%d frames): server heap growth %d MiB%n", i + 1, times, frames,
                        peak.growthBytes() / MIB);
                assertThat(peak.growthBytes()).as("server heap growth after bomb %d, MiB", i + 1)
                        .isLessThan(HEAP_GROWTH_BOUND_BYTES);
            }
            witness.stopAndVerify();
        }
        try (WireSocket next = new WireSocket(server.webSocketUrl(), "permessage-deflate", 0)) {
            next.hello(); // awaits WELCOME
        }
    }

    /** The most heap used, above what was used at its start, sampled every millisecond while it runs. */
    static final class HeapPeak implements AutoCloseable {
        private final MemoryMXBean memory;
        private final long baseline;
        private final AtomicLong peak = new AtomicLong();
        private final Thread sampler;
        private volatile boolean running = true;

        private HeapPeak(MemoryMXBean memory) {
            this.memory = memory;
            memory.gc(); // the baseline without garbage the test made before
            this.baseline = memory.getHeapMemoryUsage().getUsed();
            this.sampler = new Thread(this::sample, "heap-peak");
            sampler.setDaemon(true);
            sampler.start();
        }

        static HeapPeak start(MemoryMXBean memory) {
            return new HeapPeak(memory);
        }

        private void sample() {
            while (running) {
                peak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(1); // the sampling period
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        long growthBytes() {
            peak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
            return Math.max(0, peak.get() - baseline);
        }

        @Override
        public void close() {
            running = false;
            try {
                sampler.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the test sees it; close() must not hide it
            }
        }
    }
}
