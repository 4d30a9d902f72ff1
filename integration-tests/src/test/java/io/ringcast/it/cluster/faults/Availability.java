package io.ringcast.it.cluster.faults;

import io.ringcast.it.cluster.faults.History.Attempt;
import io.ringcast.it.cluster.faults.History.Outcome;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * How a fault window looked to the publishers: of the attempts sent during it, the share acked
 * (whenever the ack came), and the longest pause between acks received during it (counting from
 * the window's start and to its end: no ack at all is a pause of the whole window), over all topics
 * and, worst of all topics, for one topic (what a fault costs the topics of one group), with the
 * moment that pause began (the run's clock, as the events'), so that it can be laid beside the events
 * and the nodes' logs. Pure.
 */
record Availability(String window, long startNs, long endNs, Map<String, Share> perPublisher, long longestPauseMs,
                    long longestPauseFromNs, long longestTopicPauseMs, long acksInWindow) {

    /** One publisher's attempts sent in the window, and how many of them were acked. */
    record Share(int sent, int acked, Map<String, Integer> refusals) {
        double ackedShare() {
            return sent == 0 ? 0 : (double) acked / sent;
        }
    }

    /** The window's figures for the publishers {@code counted} selects (e.g. those homed on the majority side). */
    static Availability of(String window, long startNs, long endNs, List<Attempt> attempts, Predicate<String> counted) {
        Map<String, int[]> counts = new TreeMap<>();
        Map<String, Map<String, Integer>> refusals = new TreeMap<>();
        List<Long> ackTimes = attempts.stream()
                .filter(a -> counted.test(a.publisher()) && a.outcome() == Outcome.ACKED
                        && a.doneNs() >= startNs && a.doneNs() <= endNs)
                .map(Attempt::doneNs).sorted().toList();
        for (Attempt a : attempts) {
            if (!counted.test(a.publisher()) || a.sentNs() < startNs || a.sentNs() > endNs) {
                continue;
            }
            int[] c = counts.computeIfAbsent(a.publisher(), p -> new int[2]);
            c[0]++;
            if (a.outcome() == Outcome.ACKED) {
                c[1]++;
            } else {
                refusals.computeIfAbsent(a.publisher(), p -> new TreeMap<>())
                        .merge(a.error() == null ? a.outcome().name() : a.error(), 1, Integer::sum);
            }
        }
        Map<String, Share> shares = new TreeMap<>();
        counts.forEach((p, c) -> shares.put(p, new Share(c[0], c[1], refusals.getOrDefault(p, Map.of()))));
        long longest = 0;
        long longestFrom = startNs;
        long previous = startNs;
        for (long t : ackTimes) {
            if (t - previous > longest) {
                longest = t - previous;
                longestFrom = previous;
            }
            previous = t;
        }
        if (endNs - previous > longest) {
            longest = endNs - previous;
            longestFrom = previous;
        }
        Map<String, List<Long>> perTopic = new TreeMap<>();
        attempts.stream().filter(a -> counted.test(a.publisher()) && a.outcome() == Outcome.ACKED
                        && a.doneNs() >= startNs && a.doneNs() <= endNs)
                .forEach(a -> perTopic.computeIfAbsent(a.topic(), t -> new java.util.ArrayList<>()).add(a.doneNs()));
        long longestTopic = perTopic.isEmpty() ? endNs - startNs : 0;
        for (List<Long> times : perTopic.values()) {
            times.sort(null);
            long before = startNs;
            for (long t : times) {
                longestTopic = Math.max(longestTopic, t - before);
                before = t;
            }
            longestTopic = Math.max(longestTopic, endNs - before);
        }
        return new Availability(window, startNs, endNs, shares, longest / 1_000_000, longestFrom,
                longestTopic / 1_000_000, ackTimes.size());
    }

    double ackedShare() {
        int sent = perPublisher.values().stream().mapToInt(Share::sent).sum();
        int acked = perPublisher.values().stream().mapToInt(Share::acked).sum();
        return sent == 0 ? 0 : (double) acked / sent;
    }
}
