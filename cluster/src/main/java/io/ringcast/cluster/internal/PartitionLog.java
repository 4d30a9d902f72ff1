package io.ringcast.cluster.internal;

/**
 * The newest updates of one partition, by partition sequence, in a ring of fixed length: what a
 * node serves to peers that fall behind. Older updates fall out; a peer further behind gets a
 * snapshot instead. Cluster thread only.
 */
final class PartitionLog {
    private final PeerMessage.Update[] ring;
    /** The oldest sequence the log holds, or the next one to come when it is empty. */
    private long first = 1;
    /** The newest sequence held, {@code first - 1} when empty. */
    private long last;

    PartitionLog(int length) {
        ring = new PeerMessage.Update[length];
    }

    /** Appends the next update ({@code last + 1}); returns the one that fell out, or null. */
    PeerMessage.Update add(PeerMessage.Update u) {
        assert u.partitionSequence() == last + 1 : "the log is appended in order";
        int slot = (int) (u.partitionSequence() % ring.length);
        PeerMessage.Update evicted = null;
        if (last - first + 1 == ring.length) {
            evicted = ring[slot];
            first++;
        }
        ring[slot] = u;
        last = u.partitionSequence();
        return evicted;
    }

    /** Whether every update from {@code from} to the newest is held. */
    boolean covers(long from) {
        return from >= first;
    }

    /** The update {@code seq}, which must be between the oldest and the newest held. */
    PeerMessage.Update get(long seq) {
        assert seq >= first && seq <= last;
        return ring[(int) (seq % ring.length)];
    }

    /** Forgets everything: the partition continues after {@code seq} (taken from a snapshot). */
    void restartAfter(long seq) {
        java.util.Arrays.fill(ring, null);
        first = seq + 1;
        last = seq;
    }
}
