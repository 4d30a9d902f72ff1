package io.ringcast.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

class FailOnLeakExtensionTest {

    @Test
    void aBufferNeverReleasedIsReportedAsALeak() {
        leakOne();
        List<String> leaks = List.of();
        for (int attempt = 0; attempt < 20 && leaks.isEmpty(); attempt++) {
            leaks = FailOnLeakExtension.collectLeaks(); // garbage collection decides when the buffer is found
        }
        assertTrue(leaks.stream().anyMatch(l -> l.contains("LEAK")), "the leaked buffer was reported: " + leaks);
    }

    @Test
    void releasedBuffersAreNotReported() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(1);
        b.release();
        assertTrue(FailOnLeakExtension.collectLeaks().isEmpty());
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeLong(42); // and never released
    }
}
