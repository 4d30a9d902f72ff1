package io.ringcast.benchmark.load;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values whose publish failed after the client's own retries (a cluster that lost its leader
 * answers {@code REPLICATION_TIMEOUT}, outcome unknown, or {@code NO_MAJORITY} from every node),
 * by topic index and counter. Such a value was never acked, so it may or may not have been applied:
 * a subscriber that never receives it has lost nothing, and one that receives it late (applied
 * after values published after it) has not seen the server reorder anything. {@link SubscriberTally}
 * holds what it saw against this set once the run is over; lost and out of order stay reserved for
 * values the server acked.
 *
 * <p>Threads: {@link #add} from any thread (publish completions); the reads after every publish
 * was answered or given up on. Failures are rare, so a concurrent set of boxed keys is cheap enough.
 */
final class UnackedValues {
    /** Counters fit in the low 43 bits of a key, topic indexes (at most 1,000,000) in the 20 above. */
    private static final int COUNTER_BITS = 43;

    private final Set<Long> keys = ConcurrentHashMap.newKeySet();

    void add(int topic, long counter) {
        keys.add(key(topic, counter));
    }

    boolean contains(int topic, long counter) {
        return keys.contains(key(topic, counter));
    }

    boolean isEmpty() {
        return keys.isEmpty();
    }

    /** How many of them are values of the topics {@code matched} marks. */
    long countMatching(boolean[] matched) {
        long n = 0;
        for (long k : keys) {
            n += matched[(int) (k >>> COUNTER_BITS)] ? 1 : 0;
        }
        return n;
    }

    /** One long per (topic, counter), for sets of values. */
    static long key(int topic, long counter) {
        assert topic >= 0 && counter > 0 && counter < 1L << COUNTER_BITS : topic + "/" + counter;
        return (long) topic << COUNTER_BITS | counter;
    }
}
