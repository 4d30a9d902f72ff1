package io.ringcast.it.cluster.faults;

import io.ringcast.client.UpdateKind;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the clients of one fault run saw, in the spirit of a Jepsen history: every publish attempt
 * with its outcome (acked with a sequence, refused with an error, or never answered), every
 * delivery to every subscriber in the order that subscriber received it, and each node's final
 * state as a fresh subscriber on that node read it. Times are nanoseconds since the run started.
 *
 * <p>Appends may come from any thread (client event loops, publisher threads); a subscriber's
 * deliveries are appended by its client's one event-loop thread, so their order in {@link #deliveries()}
 * is the order that subscriber received them. {@link #attempts()} and the rest copy under the lock.
 */
public final class History {
    /** How a publish attempt ended. */
    public enum Outcome {
        /** Acked with a topic sequence: the cluster promised it. */
        ACKED,
        /** Failed with an answer from a server or the client (refused, e.g. {@code NO_MAJORITY}). */
        REFUSED,
        /** Never answered before the run ended. */
        UNANSWERED
    }

    /**
     * One call of {@code publish(topic, value)}. {@code value} is unique in the run; {@code sequence}
     * is the acked topic sequence (0 unless {@link Outcome#ACKED}); {@code error} names a refusal.
     */
    public record Attempt(String publisher, String topic, String value, long sentNs, long doneNs, Outcome outcome,
                          long sequence, String error) {
    }

    /** One update a subscriber's listener received. */
    public record Delivery(String subscriber, String topic, long sequence, String value, UpdateKind kind, long atNs) {
    }

    /** A topic's sequence and value in a node's final state. */
    public record TopicValue(long sequence, String value) {
    }

    private final long startNs = System.nanoTime();
    private final List<Attempt> attempts = new ArrayList<>();
    private final List<Delivery> deliveries = new ArrayList<>();
    private final List<String> subscribers = new ArrayList<>();
    private final Map<String, Map<String, TopicValue>> finalStates = new TreeMap<>();

    /** Nanoseconds since the run started. */
    public long now() {
        return System.nanoTime() - startNs;
    }

    public synchronized void attempt(Attempt a) {
        attempts.add(a);
    }

    /** Declares a subscriber whose stream the checker holds every acked update against. */
    public synchronized void subscriber(String name) {
        subscribers.add(name);
    }

    public synchronized void delivery(Delivery d) {
        deliveries.add(d);
    }

    /** A node's final state (topic to sequence and value), or null when it could not be read. */
    public synchronized void finalState(String node, Map<String, TopicValue> topics) {
        finalStates.put(node, topics == null ? null : new TreeMap<>(topics));
    }

    public synchronized List<Attempt> attempts() {
        return new ArrayList<>(attempts);
    }

    public synchronized List<Delivery> deliveries() {
        return new ArrayList<>(deliveries);
    }

    public synchronized List<String> subscribers() {
        return new ArrayList<>(subscribers);
    }

    public synchronized Map<String, Map<String, TopicValue>> finalStates() {
        return new TreeMap<>(finalStates);
    }
}
