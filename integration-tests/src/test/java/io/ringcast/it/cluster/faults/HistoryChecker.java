package io.ringcast.it.cluster.faults;

import io.ringcast.client.UpdateKind;
import io.ringcast.it.cluster.faults.History.Attempt;
import io.ringcast.it.cluster.faults.History.Delivery;
import io.ringcast.it.cluster.faults.History.Outcome;
import io.ringcast.it.cluster.faults.History.TopicValue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Holds a {@link History} against the cluster's promise. Pure: the same history, the same verdict.
 *
 * <p>Definitions (a <em>stream</em> is one subscriber's deliveries of one topic, in the order received;
 * a <em>snapshot</em> is a delivery of kind {@link UpdateKind#SNAPSHOT}):
 * <ul>
 * <li>{@link Kind#LOST}: an acked attempt (topic, sequence, value) such that some declared subscriber
 *     neither received (topic, sequence) with that value (in any kind of delivery) nor began its stream
 *     of the topic with a snapshot at that sequence or later (the update was older than its
 *     subscription). A gap snapshot does not cover what it skipped: the client's own contract says
 *     values were lost to it. Also lost: a node's final state of a topic older than the newest ack of
 *     the topic. Counted once per acked attempt (the detail names the subscribers).</li>
 * <li>{@link Kind#TWO_VALUES}: a (topic, sequence) carrying two different values anywhere in the
 *     history: acks, deliveries to any subscriber, final states. Counted once per pair.</li>
 * <li>{@link Kind#APPLIED_TWICE}: a value (unique per attempt) under two different (topic, sequence)
 *     pairs anywhere in the history: one publish applied twice, whatever its publisher id.</li>
 * <li>{@link Kind#REORDER}: in a stream, a delivery at a sequence below the highest one received
 *     before it, or equal to it other than as a snapshot (a re-subscription's snapshot of the
 *     current value repeats its sequence legitimately).</li>
 * <li>{@link Kind#GAP}: in a stream, a delivery flagged as a gap ({@code SNAPSHOT_AFTER_GAP},
 *     {@code GAP_WITHOUT_VALUE}; also {@code CONFLATED}: the suite turns no conflation on), any
 *     delivery more than one above the highest received before it, or a stream starting with an
 *     update other than number 1. Only a stream's first snapshot may start anywhere.</li>
 * <li>{@link Kind#FINAL_STATES_DIFFER}: two nodes whose final states (each topic's sequence and value)
 *     differ, or a node whose final state could not be read.</li>
 * </ul>
 */
public final class HistoryChecker {
    /** A kind of violation. */
    public enum Kind {
        LOST, TWO_VALUES, APPLIED_TWICE, REORDER, GAP, FINAL_STATES_DIFFER
    }

    /** How many of each kind, and the first few of each, described. */
    public record Verdict(Map<Kind, Integer> counts, Map<Kind, List<String>> examples) {
        public boolean ok() {
            return counts.values().stream().allMatch(c -> c == 0);
        }

        public int count(Kind kind) {
            return counts.get(kind);
        }
    }

    private static final int EXAMPLES = 10;

    private final Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
    private final Map<Kind, List<String>> examples = new EnumMap<>(Kind.class);

    private HistoryChecker() {
        for (Kind k : Kind.values()) {
            counts.put(k, 0);
            examples.put(k, new ArrayList<>());
        }
    }

    public static Verdict check(History history) {
        HistoryChecker c = new HistoryChecker();
        List<Attempt> acked = history.attempts().stream().filter(a -> a.outcome() == Outcome.ACKED).toList();
        List<Delivery> deliveries = history.deliveries();
        Map<String, Map<String, TopicValue>> finals = history.finalStates();
        c.checkStreams(deliveries);
        c.checkValues(acked, deliveries, finals);
        c.checkLost(acked, deliveries, history.subscribers(), finals);
        c.checkFinalStates(finals);
        return new Verdict(c.counts, c.examples);
    }

    private void violation(Kind kind, String detail) {
        counts.merge(kind, 1, Integer::sum);
        if (examples.get(kind).size() < EXAMPLES) {
            examples.get(kind).add(detail);
        }
    }

    private void checkStreams(List<Delivery> deliveries) {
        Map<String, Long> highest = new HashMap<>(); // subscriber + topic -> highest sequence so far
        for (Delivery d : deliveries) {
            String stream = d.subscriber() + " " + d.topic();
            Long before = highest.get(stream);
            String what = stream + ": " + d.kind() + " " + d.sequence() + " after " + before;
            if (d.kind() == UpdateKind.SNAPSHOT_AFTER_GAP || d.kind() == UpdateKind.GAP_WITHOUT_VALUE
                    || d.kind() == UpdateKind.CONFLATED) {
                violation(Kind.GAP, what);
            } else if (before == null) {
                if (d.kind() != UpdateKind.SNAPSHOT && d.sequence() != 1) {
                    violation(Kind.GAP, what + " (a stream's first update must be 1 or a snapshot)");
                }
            } else if (d.sequence() < before || (d.sequence() == before && d.kind() != UpdateKind.SNAPSHOT)) {
                violation(Kind.REORDER, what);
            } else if (d.sequence() > before + 1) {
                violation(Kind.GAP, what);
            }
            highest.merge(stream, d.sequence(), Math::max);
        }
    }

    private void checkValues(List<Attempt> acked, List<Delivery> deliveries, Map<String, Map<String, TopicValue>> finals) {
        Map<String, Set<String>> valuesAt = new LinkedHashMap<>(); // "topic@seq" -> values
        Map<String, Set<String>> placesOf = new LinkedHashMap<>(); // value -> "topic@seq"
        for (Attempt a : acked) {
            note(valuesAt, placesOf, a.topic(), a.sequence(), a.value());
        }
        for (Delivery d : deliveries) {
            if (d.kind() != UpdateKind.GAP_WITHOUT_VALUE) {
                note(valuesAt, placesOf, d.topic(), d.sequence(), d.value());
            }
        }
        finals.values().stream().filter(Objects::nonNull).forEach(state -> state.forEach(
                (topic, tv) -> note(valuesAt, placesOf, topic, tv.sequence(), tv.value())));
        valuesAt.forEach((place, values) -> {
            if (values.size() > 1) {
                violation(Kind.TWO_VALUES, place + " carries " + values);
            }
        });
        placesOf.forEach((value, places) -> {
            if (places.size() > 1) {
                violation(Kind.APPLIED_TWICE, "'" + value + "' applied as " + places);
            }
        });
    }

    private static void note(Map<String, Set<String>> valuesAt, Map<String, Set<String>> placesOf,
                             String topic, long sequence, String value) {
        String place = topic + "@" + sequence;
        valuesAt.computeIfAbsent(place, k -> new LinkedHashSet<>()).add(value);
        placesOf.computeIfAbsent(value, k -> new LinkedHashSet<>()).add(place);
    }

    private void checkLost(List<Attempt> acked, List<Delivery> deliveries, List<String> subscribers,
                           Map<String, Map<String, TopicValue>> finals) {
        Set<String> received = new HashSet<>(); // subscriber, topic, sequence, value
        Map<String, Long> firstSnapshot = new HashMap<>(); // subscriber + topic -> sequence of its opening snapshot
        Set<String> started = new HashSet<>();
        for (Delivery d : deliveries) {
            received.add(d.subscriber() + "\n" + d.topic() + "\n" + d.sequence() + "\n" + d.value());
            String stream = d.subscriber() + "\n" + d.topic();
            if (started.add(stream) && d.kind() == UpdateKind.SNAPSHOT) {
                firstSnapshot.put(stream, d.sequence());
            }
        }
        Map<String, Long> newestAcked = new TreeMap<>();
        for (Attempt a : acked) {
            newestAcked.merge(a.topic(), a.sequence(), Math::max);
            List<String> missing = new ArrayList<>();
            for (String s : subscribers) {
                boolean got = received.contains(s + "\n" + a.topic() + "\n" + a.sequence() + "\n" + a.value());
                Long opening = firstSnapshot.get(s + "\n" + a.topic());
                if (!got && (opening == null || opening < a.sequence())) {
                    missing.add(s);
                }
            }
            if (!missing.isEmpty()) {
                violation(Kind.LOST, a.topic() + "@" + a.sequence() + " = '" + a.value() + "' (acked to "
                        + a.publisher() + ") never reached " + missing);
            }
        }
        finals.forEach((node, state) -> {
            if (state != null) {
                newestAcked.forEach((topic, seq) -> {
                    TopicValue tv = state.get(topic);
                    if (tv == null || tv.sequence() < seq) {
                        violation(Kind.LOST, node + "'s final state of " + topic + " is "
                                + (tv == null ? "missing" : "at " + tv.sequence()) + ", " + seq + " was acked");
                    }
                });
            }
        });
    }

    private void checkFinalStates(Map<String, Map<String, TopicValue>> finals) {
        String firstNode = null;
        Map<String, TopicValue> first = null;
        for (Map.Entry<String, Map<String, TopicValue>> e : finals.entrySet()) {
            if (e.getValue() == null) {
                violation(Kind.FINAL_STATES_DIFFER, e.getKey() + "'s final state could not be read");
            } else if (first == null) {
                firstNode = e.getKey();
                first = e.getValue();
            } else if (!first.equals(e.getValue())) {
                List<String> diff = new ArrayList<>();
                Set<String> topics = new java.util.TreeSet<>(first.keySet());
                topics.addAll(e.getValue().keySet());
                for (String t : topics) {
                    if (!Objects.equals(first.get(t), e.getValue().get(t)) && diff.size() < 3) {
                        diff.add(t + ": " + first.get(t) + " vs " + e.getValue().get(t));
                    }
                }
                violation(Kind.FINAL_STATES_DIFFER, firstNode + " and " + e.getKey() + " differ: " + diff);
            }
        }
    }
}
