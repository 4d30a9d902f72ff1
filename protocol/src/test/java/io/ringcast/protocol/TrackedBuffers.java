package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.util.ArrayList;
import java.util.List;

/**
 * Hands out pooled (hence leak-tracked) buffers to one test and releases them all at the end,
 * failing the test if the code under test released or retained one of them: the codec borrows
 * buffers, it never owns them. Not thread-safe; one instance per test.
 */
final class TrackedBuffers implements AutoCloseable {
    private final List<ByteBuf> buffers = new ArrayList<>();

    ByteBuf allocate() {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.heapBuffer();
        buffers.add(buf);
        return buf;
    }

    ByteBuf of(byte[] bytes) {
        return allocate().writeBytes(bytes);
    }

    /** Releases every buffer handed out; throws if one did not have exactly the one reference it was born with. */
    @Override
    public void close() {
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < buffers.size(); i++) {
            ByteBuf buf = buffers.get(i);
            int refCnt = buf.refCnt();
            if (refCnt != 1) {
                wrong.add("buffer #" + i + " has refCnt " + refCnt);
            }
            if (refCnt > 0) {
                buf.release(refCnt);
            }
        }
        buffers.clear();
        if (!wrong.isEmpty()) {
            throw new AssertionError("buffers released or retained by the code under test: " + wrong);
        }
    }
}
