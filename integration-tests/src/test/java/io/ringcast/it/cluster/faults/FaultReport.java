package io.ringcast.it.cluster.faults;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringcast.it.cluster.faults.History.Attempt;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A fault run's outcome, written as {@code <fault>.json} and {@code <fault>.txt}. */
record FaultReport(Fault fault, Fault.Durations durations, long startedMs, long durationMs, HistoryChecker.Verdict verdict,
                   List<Availability> availability, List<FaultRun.Window> windows, List<String> failures,
                   List<String> events, History history) {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    boolean passed() {
        return verdict.ok() && failures.isEmpty();
    }

    /** Attempts by outcome (and refusal), probes excluded. */
    Map<String, Integer> outcomes() {
        Map<String, Integer> m = new TreeMap<>();
        for (Attempt a : history.attempts()) {
            if (!a.publisher().startsWith("probe@")) {
                m.merge(a.outcome() + (a.error() == null ? "" : " " + a.error()), 1, Integer::sum);
            }
        }
        return m;
    }

    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        ObjectNode root = JSON.createObjectNode()
                .put("fault", fault.id)
                .put("passed", passed())
                .put("started", Instant.ofEpochMilli(startedMs).toString())
                .put("durationMs", durationMs);
        root.set("durations", JSON.valueToTree(Map.of("warmUpMs", durations.warmUp().toMillis(),
                "cutMs", durations.cut().toMillis(), "downMs", durations.down().toMillis(),
                "pauseMs", durations.pause().toMillis(), "settleMs", durations.settle().toMillis())));
        root.set("violations", JSON.valueToTree(verdict.counts()));
        root.set("violationExamples", JSON.valueToTree(verdict.examples()));
        root.set("failures", JSON.valueToTree(failures));
        root.set("attempts", JSON.valueToTree(outcomes()));
        root.put("deliveries", history.deliveries().size());
        ArrayNode windowsJson = root.putArray("windows");
        for (Availability a : availability) {
            ObjectNode w = windowsJson.addObject()
                    .put("window", a.window())
                    .put("fromMs", a.startNs() / 1_000_000)
                    .put("toMs", a.endNs() / 1_000_000)
                    .put("ackedShare", a.ackedShare())
                    .put("acks", a.acksInWindow())
                    .put("longestPauseMs", a.longestPauseMs())
                    .put("longestPauseFromMs", a.longestPauseFromNs() / 1_000_000)
                    .put("longestTopicPauseMs", a.longestTopicPauseMs());
            w.set("perPublisher", JSON.valueToTree(a.perPublisher()));
            windows.stream().filter(x -> x.name().equals(a.window())).findFirst().ifPresent(x -> {
                w.set("majorityHomes", JSON.valueToTree(x.majorityHomes()));
                if (x.minorityNode() != 0) {
                    w.put("minorityNode", x.minorityNode());
                    w.set("minorityProbes", JSON.valueToTree(x.probes().stream()
                            .map(p -> p.outcome() + (p.error() == null ? "" : " " + p.error())).toList()));
                }
                if (x.uncuttable() != null) {
                    w.put("uncuttable", x.uncuttable());
                }
            });
        }
        root.set("events", JSON.valueToTree(events));
        JSON.writeValue(dir.resolve(fault.id + ".json").toFile(), root);
        Files.writeString(dir.resolve(fault.id + ".txt"), text());
    }

    String text() {
        StringBuilder b = new StringBuilder();
        b.append("fault ").append(fault.id).append(": ").append(passed() ? "PASSED" : "FAILED")
                .append(" (").append(durationMs / 1000).append(" s)\n");
        b.append("violations: ").append(verdict.counts()).append('\n');
        verdict.examples().forEach((kind, list) -> list.stream().limit(5)
                .forEach(e -> b.append("  ").append(kind).append(": ").append(e).append('\n')));
        failures.forEach(f -> b.append("failure: ").append(f).append('\n'));
        b.append("attempts: ").append(outcomes()).append("; deliveries: ").append(history.deliveries().size()).append('\n');
        for (Availability a : availability) {
            b.append(String.format("window %s: %.1f%% of the majority side's attempts acked, %d acks, longest pause %d ms"
                    + " from %.1f s (of one topic: %d ms)%n", a.window(), 100 * a.ackedShare(), a.acksInWindow(),
                    a.longestPauseMs(), a.longestPauseFromNs() / 1e9, a.longestTopicPauseMs()));
            a.perPublisher().forEach((p, s) -> b.append(String.format("  %s: %d/%d acked %s%n", p, s.acked(), s.sent(),
                    s.refusals().isEmpty() ? "" : s.refusals())));
        }
        for (FaultRun.Window w : windows) {
            if (w.minorityNode() != 0) {
                b.append("minority node-").append(w.minorityNode()).append(" probes: ").append(w.probes().stream()
                        .map(p -> p.outcome() + (p.error() == null ? "" : " " + p.error())).toList()).append('\n');
            }
            if (w.uncuttable() != null) {
                b.append("during ").append(w.name()).append(": ").append(w.uncuttable()).append('\n');
            }
        }
        b.append("events:\n");
        events.forEach(e -> b.append("  ").append(e).append('\n'));
        return b.toString();
    }
}
