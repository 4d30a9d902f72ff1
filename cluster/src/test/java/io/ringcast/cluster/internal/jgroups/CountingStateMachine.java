package io.ringcast.cluster.internal.jgroups;


import java.io.DataInput;
import java.io.DataOutput;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * The smallest state machine that shows order: how many entries were applied, a hash chained over
 * every entry in apply order (two members that applied the same entries in the same order have the
 * same hash), and the last entry. A snapshot holds all three. Answers each entry with its count.
 *
 * <p>Thread contract: the engine's runner thread applies, snapshots and restores; tests read the
 * volatile fields from their own thread.
 */
final class CountingStateMachine implements ReloadableStateMachine {
    private volatile long applied;
    private volatile long chain = 0xcbf29ce484222325L;
    private volatile byte[] last = new byte[0];
    private volatile int snapshotsRead;
    /** The first long of each entry of at least 8 bytes, in apply order (since start or the last reset). */
    private final List<Long> heads = new CopyOnWriteArrayList<>();
    /** How long each apply takes at least: a slow state machine keeps the engine's runner in each batch longer. */
    volatile long applyNanos;

    @Override
    public byte[] apply(byte[] data, int offset, int length, boolean serializeResponse) {
        if (applyNanos > 0) {
            LockSupport.parkNanos(applyNanos);
        }
        byte[] entry = Arrays.copyOfRange(data, offset, offset + length);
        long h = chain;
        for (byte b : entry) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L; // FNV-1a, continued over every entry in order
        }
        chain = h;
        last = entry;
        if (entry.length >= Long.BYTES) {
            heads.add(ByteBuffer.wrap(entry).getLong());
        }
        long n = applied + 1;
        applied = n;
        return serializeResponse ? ByteBuffer.allocate(Long.BYTES).putLong(n).array() : null;
    }

    @Override
    public void reset() {
        applied = 0;
        chain = 0xcbf29ce484222325L;
        last = new byte[0];
        heads.clear();
    }

    @Override
    public void readContentFrom(DataInput in) throws Exception {
        applied = in.readLong();
        chain = in.readLong();
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        last = b;
        snapshotsRead++;
    }

    @Override
    public void writeContentTo(DataOutput out) throws Exception {
        out.writeLong(applied);
        out.writeLong(chain);
        out.writeInt(last.length);
        out.write(last);
    }

    /** The first long of each entry of 8 bytes or more it applied, in order. */
    List<Long> heads() {
        return List.copyOf(heads);
    }

    long applied() {
        return applied;
    }

    long chain() {
        return chain;
    }

    int snapshotsRead() {
        return snapshotsRead;
    }
}
