package io.ringcast.server.internal;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An allocator that remembers every buffer it gave out, so a test can check, at once and by name,
 * that the code under test released what it allocated (leak detection only reports a leak after
 * the buffer was collected, and not which test leaked it). One thread.
 */
final class TrackingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> allocated = new ArrayList<>();

    TrackingAllocator() {
        super(true);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
    }

    private ByteBuf track(ByteBuf buf) {
        allocated.add(buf);
        return buf;
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    /** How many buffers were allocated so far. */
    int allocations() {
        return allocated.size();
    }

    /** Buffers allocated and not released yet. */
    List<ByteBuf> unreleased() {
        return allocated.stream().filter(b -> b.refCnt() > 0).toList();
    }

    void assertAllReleased() {
        assertThat(unreleased()).as("buffers still referenced, of %d allocated", allocated.size()).isEmpty();
    }
}
