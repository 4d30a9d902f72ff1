package io.ringcast.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one node's cluster layer applied, per topic, in order (any number of apply threads: one per
 * group): each topic's sequences and values, and its updates and removals in the order they came
 * ({@link #events}).
 */
final class RecordingSink implements UpdateSink {
    private final Map<String, List<Long>> sequences = new ConcurrentHashMap<>();
    private final Map<String, List<String>> values = new ConcurrentHashMap<>();
    private final Map<String, List<String>> events = new ConcurrentHashMap<>();
    private volatile int count;

    @Override
    public synchronized void apply(String path, long topicSequence, int incarnation, byte[] value) {
        String v = new String(value, StandardCharsets.UTF_8);
        sequences.computeIfAbsent(path, p -> new ArrayList<>()).add(topicSequence);
        values.computeIfAbsent(path, p -> new ArrayList<>()).add(v);
        events.computeIfAbsent(path, p -> new ArrayList<>())
                .add("apply " + topicSequence + " #" + incarnation + " " + v);
        count++;
    }

    @Override
    public synchronized void removed(String path, long lastSequence, int incarnation) {
        events.computeIfAbsent(path, p -> new ArrayList<>()).add("removed " + lastSequence);
    }

    int count() {
        return count;
    }

    synchronized boolean has(String path, long sequence) {
        List<Long> applied = sequences.get(path);
        return applied != null && applied.contains(sequence);
    }

    synchronized long last(String path) {
        List<Long> s = sequences.get(path);
        return s == null || s.isEmpty() ? 0 : s.get(s.size() - 1);
    }

    synchronized Map<String, List<Long>> sequences() {
        Map<String, List<Long>> copy = new TreeMap<>();
        sequences.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        return copy;
    }

    synchronized Map<String, List<String>> values() {
        Map<String, List<String>> copy = new TreeMap<>();
        values.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        return copy;
    }

    /**
     * The topic's updates ({@code "apply <sequence> #<incarnation> <value>"}) and removals
     * ({@code "removed <lastSequence>"}), in the order the sink got them.
     */
    synchronized List<String> events(String path) {
        List<String> e = events.get(path);
        return e == null ? List.of() : List.copyOf(e);
    }
}
