package io.ringcast.cluster;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.InterruptedIOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node's part of the snapshots that is captured at once but written only once {@link #gate}
 * opens: what shows whether a snapshot's write holds up the group (both engines' tests use it).
 */
final class GatedSnapshotContent implements SnapshotContent {
    final CountDownLatch gate = new CountDownLatch(1);
    final AtomicInteger captures = new AtomicInteger();

    @Override
    public void write(DataOutput out) {
    }

    @Override
    public void read(DataInput in) {
    }

    @Override
    public Captured capture() {
        captures.incrementAndGet();
        return out -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("the gate did not open");
            }
        };
    }
}
