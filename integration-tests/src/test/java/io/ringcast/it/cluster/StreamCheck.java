package io.ringcast.it.cluster;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.UpdateListener;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;

/**
 * What the cluster tests check of every subscriber: per topic, each update one after the other
 * (sequence n + 1 after n), nothing flagged as a gap, nothing twice; and, at the end, every update
 * a publisher saw acked. Listener calls come on client event loops; checks from the test thread.
 */
final class StreamCheck implements UpdateListener {
    final String name;
    final RingcastClient client;
    Subscription subscription;
    private final Map<String, Long> last = new ConcurrentHashMap<>();
    private final List<String> problems = new ArrayList<>();
    private final AtomicInteger received = new AtomicInteger();
    /** Every value received, when asked for: a publish applied twice shows as its value twice. */
    private volatile Set<String> values;

    StreamCheck(String name, RingcastClient client) {
        this.name = name;
        this.client = client;
    }

    /** Also checks that no value comes twice (the publishers make each one unique). */
    StreamCheck checkingValuesOnce() {
        values = ConcurrentHashMap.newKeySet();
        return this;
    }

    @Override
    public void onUpdate(Update u) {
        received.incrementAndGet();
        Set<String> seen = values;
        if (seen != null && u.kind() != UpdateKind.SNAPSHOT && !seen.add(u.topic() + " = " + u.text())) {
            problem(u.topic() + ": value '" + u.text() + "' again at " + u.sequence() + ": a publish applied twice");
        }
        Long before = last.get(u.topic());
        if (u.kind() == UpdateKind.SNAPSHOT_AFTER_GAP || u.kind() == UpdateKind.GAP_WITHOUT_VALUE) {
            problem(u.topic() + ": " + u.kind() + " at " + u.sequence() + " after " + before);
        } else if (before == null) {
            if (u.kind() != UpdateKind.SNAPSHOT && u.sequence() != 1) {
                problem(u.topic() + ": first update " + u.sequence() + " is neither a snapshot nor number 1");
            }
        } else if (u.sequence() != before + 1) {
            problem(u.topic() + ": " + u.sequence() + " after " + before);
        }
        last.put(u.topic(), u.sequence());
    }

    private synchronized void problem(String p) {
        if (problems.size() < 20) {
            problems.add(p);
        }
    }

    synchronized List<String> problems() {
        return new ArrayList<>(problems);
    }

    long lastOf(String topic) {
        return last.getOrDefault(topic, 0L);
    }

    int received() {
        return received.get();
    }

    /** Whether this subscriber has seen, for each topic, at least the newest acked sequence. */
    boolean hasAll(Map<String, Long> newestAcked) {
        for (Map.Entry<String, Long> e : newestAcked.entrySet()) {
            if (lastOf(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** Topics where this subscriber is behind the newest acked sequence, for a failure message. */
    Map<String, String> missing(Map<String, Long> newestAcked) {
        return behind(newestAcked, this::lastOf);
    }

    /** Topics whose last sequence received ({@code last}) is behind the newest acked: "received of acked". */
    static Map<String, String> behind(Map<String, Long> newestAcked, ToLongFunction<String> last) {
        Map<String, String> m = new HashMap<>();
        newestAcked.forEach((topic, seq) -> {
            if (last.applyAsLong(topic) < seq) {
                m.put(topic, last.applyAsLong(topic) + " of " + seq);
            }
        });
        return m;
    }
}
