package io.ringcast.benchmark.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Gathers the JSON files the load generator wrote under one directory tree into one Markdown
 * summary: a table of the single runs and a table of the sweeps. Each first-level subdirectory is a
 * <em>set</em> (for {@code scripts/bench-e2e.sh}, one server configuration such as a flush policy,
 * or another system: {@code --vs-redis}'s {@code redis}) and names the rows it holds. The rows of
 * one point (runs: subscribers and offered rate; sweeps: subscribers) stand together, one per set,
 * so that the sets compare side by side.
 *
 * <p>Usage: {@code java -cp ringcast-bench.jar io.ringcast.benchmark.load.LoadReport DIR}; writes
 * {@code DIR/summary.md} and prints it. Stateless.
 */
public final class LoadReport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private LoadReport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: LoadReport DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        String summary = summary(dir);
        Files.writeString(dir.resolve("summary.md"), summary, StandardCharsets.UTF_8);
        System.out.print(summary);
    }

    /** The Markdown summary of every run and sweep JSON file under {@code dir}, sorted by path. */
    static String summary(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        List<Row> runs = new ArrayList<>();
        List<Row> sweeps = new ArrayList<>();
        for (Path file : files) {
            JsonNode node = JSON.readTree(file.toFile());
            String set = dir.relativize(file).getNameCount() > 1 ? dir.relativize(file).getName(0).toString() : "";
            if (node.has("steps")) {
                JsonNode first = node.path("steps").path(0).path("result");
                sweeps.add(new Row(first.at("/spec/subscribers").asInt(), 0, set, sweepRow(set, node)));
            } else if (node.has("latencyMs")) {
                runs.add(new Row(node.at("/spec/subscribers").asInt(), node.at("/publishes/offeredPerSecond").asInt(),
                        set, runRow(set, node)));
            }
        }
        runs.sort(Row.BY_POINT); // stable: within a set, by path as before
        sweeps.sort(Row.BY_POINT);
        StringBuilder md = new StringBuilder();
        if (!runs.isEmpty()) {
            md.append("| set | subscribers | offered/s | achieved/s | deliveries/s | p50 ms | p90 ms | p99 ms"
                            + " | p99.9 ms | max ms | lost / dup / out of order | conflated | wire B/delivery"
                            + " | frames/delivery | server CPU ns/delivery | server peak RSS MB | generator CPU (of 1 core)"
                            + " | subscribers confirmed in ms |\n")
                    .append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: "
                            + "| ---: | ---: | ---: | ---: | ---: |\n");
            runs.forEach(r -> md.append(r.markdown()));
            md.append('\n');
        }
        if (!sweeps.isEmpty()) {
            md.append("| set | sweep | steps | max clean rate /s | deliveries/s there | p99 ms there"
                            + " | first failed step | why |\n")
                    .append("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
            sweeps.forEach(r -> md.append(r.markdown()));
        }
        return md.toString();
    }

    /** A table row and the point it belongs to: its subscribers, and a run's offered rate (0 for a sweep). */
    private record Row(int subscribers, int rate, String set, String markdown) {
        static final Comparator<Row> BY_POINT = Comparator.comparingInt(Row::subscribers).thenComparingInt(Row::rate)
                .thenComparing(Row::set);
    }

    private static String runRow(String set, JsonNode r) {
        JsonNode latency = r.get("latencyMs");
        JsonNode correctness = r.get("correctness");
        JsonNode wire = r.get("wire");
        boolean wireKnown = wire != null && wire.path("known").asBoolean();
        String wireBytes = wireKnown ? String.format(Locale.ROOT, "%.1f", wire.get("bytesPerDelivery").asDouble()) : "n/a";
        String frames = wireKnown && wire.has("framesPerDelivery")
                ? String.format(Locale.ROOT, "%.3f", wire.get("framesPerDelivery").asDouble()) : "n/a";
        JsonNode server = r.path("serverCpu");
        String cpuPerDelivery = server.path("cpuNsPerDelivery").asDouble(-1) > 0
                ? String.format(Locale.ROOT, "%.0f", server.get("cpuNsPerDelivery").asDouble()) : "n/a";
        String rss = server.path("peakRssBytes").asLong(-1) > 0
                ? String.format(Locale.ROOT, "%.0f", server.get("peakRssBytes").asLong() / 1048576.0) : "n/a";
        String confirmed = r.has("subscribersConfirmedMs") // not in the files of a generator before it
                ? String.format(Locale.ROOT, "%,d", r.get("subscribersConfirmedMs").asLong()) : "n/a";
        return String.format(Locale.ROOT, "| %s | %,d | %,d | %,.0f | %,.0f | %.2f | %.2f | %.2f | %.2f | %.2f"
                        + " | %d / %d / %d%s | %,d | %s | %s | %s | %s | %.0f%% | %s |%n", set, r.at("/spec/subscribers").asInt(),
                r.at("/publishes/offeredPerSecond").asInt(), r.at("/publishes/achievedPerSecond").asDouble(),
                r.at("/deliveries/perSecond").asDouble(), latency.get("p50").asDouble(),
                latency.get("p90").asDouble(), latency.get("p99").asDouble(), latency.get("p999").asDouble(),
                latency.get("max").asDouble(), correctness.get("lost").asLong(),
                correctness.get("duplicated").asLong(), correctness.get("outOfOrder").asLong(),
                correctness.path("subscriberFailures").asLong() > 0
                        ? ", " + correctness.get("subscriberFailures").asLong() + " failed subscribers" : "",
                correctness.path("conflated").asLong(), wireBytes, frames, cpuPerDelivery, rss,
                r.at("/cpu/percentOfOneCore").asDouble(), confirmed);
    }

    private static String sweepRow(String set, JsonNode s) {
        JsonNode steps = s.get("steps");
        String firstFailed = "none";
        String why = "";
        for (JsonNode step : steps) {
            if (!step.get("clean").asBoolean()) {
                firstFailed = String.format(Locale.ROOT, "%,d/s", step.get("offeredRate").asInt());
                List<String> reasons = new ArrayList<>();
                step.get("failedOn").forEach(reason -> reasons.add(reason.asText()));
                why = String.join("; ", reasons);
                break;
            }
        }
        return String.format(Locale.ROOT, "| %s | %s | %d | %,d | %,.0f | %.2f | %s | %s |%n", set,
                s.get("scenario").asText(), steps.size(), s.get("maxCleanRate").asInt(),
                s.get("deliveriesPerSecondAtMaxCleanRate").asDouble(), s.get("p99MsAtMaxCleanRate").asDouble(),
                firstFailed, why);
    }
}
