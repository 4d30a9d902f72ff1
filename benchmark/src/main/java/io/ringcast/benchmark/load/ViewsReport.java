package io.ringcast.benchmark.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * Views against plain subscriptions ({@code scripts/bench-e2e.sh --views}): the single runs under a
 * directory tree grouped by point (subscribers, offered rate) and by subscriptions (plain, or so
 * many view shapes, from each run's spec), each group's medians over its runs, and per point the
 * ratio of each view group's medians to the plain group's: above all the server's CPU per
 * delivery, which issue 16 wants within {@value #TARGET_CPU_RATIO}x of plain. Sweeps are left out.
 *
 * <p>Usage: {@code java -cp ringcast-bench.jar io.ringcast.benchmark.load.ViewsReport DIR}; writes
 * {@code DIR/views.md} and prints it. Stateless.
 */
public final class ViewsReport {
    /** Issue 16: server CPU per delivery through views at most this many times plain subscriptions'. */
    static final double TARGET_CPU_RATIO = 1.5;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ViewsReport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ViewsReport DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        String summary = summary(dir);
        Files.writeString(dir.resolve("views.md"), summary, StandardCharsets.UTF_8);
        System.out.print(summary);
    }

    /** Where a run was measured: so many subscribers at so many publishes a second. */
    record Point(int subscribers, int rate) implements Comparable<Point> {
        @Override
        public int compareTo(Point o) {
            return subscribers != o.subscribers ? Integer.compare(subscribers, o.subscribers)
                    : Integer.compare(rate, o.rate);
        }
    }

    /** One point's runs with one kind of subscription. */
    record Group(int subscribers, int rate, int viewShapes, List<JsonNode> runs) {
        String subscriptions() {
            return viewShapes == 0 ? "plain" : viewShapes + " view shapes";
        }

        /** The median over the runs of a figure, NaN when no run has it (a negative figure is unknown). */
        double median(ToDoubleFunction<JsonNode> figure) {
            double[] known = runs.stream().mapToDouble(figure).filter(v -> v >= 0).sorted().toArray();
            if (known.length == 0) {
                return Double.NaN;
            }
            int mid = known.length / 2;
            return known.length % 2 == 1 ? known[mid] : (known[mid - 1] + known[mid]) / 2;
        }

        long sum(String pointer) {
            return runs.stream().mapToLong(r -> r.at(pointer).asLong()).sum();
        }
    }

    static double cpuNsPerDelivery(JsonNode run) {
        return run.at("/serverCpu/cpuNsPerDelivery").asDouble(-1);
    }

    static double p99Ms(JsonNode run) {
        return run.at("/latencyMs/p99").asDouble(-1);
    }

    static double framesPerDelivery(JsonNode run) {
        return run.at("/wire/known").asBoolean() ? run.at("/wire/framesPerDelivery").asDouble(-1) : -1;
    }

    static double peakRssMb(JsonNode run) {
        long bytes = run.at("/serverCpu/peakRssBytes").asLong(-1);
        return bytes < 0 ? -1 : bytes / 1048576.0;
    }

    static double deliveriesPerSecond(JsonNode run) {
        return run.at("/deliveries/perSecond").asDouble(-1);
    }

    /** The Markdown comparison of every single run's JSON file under {@code dir}. */
    static String summary(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        // point -> view shapes -> runs, in order: plain (0) first
        Map<Point, Map<Integer, List<JsonNode>>> points = new TreeMap<>();
        for (Path file : files) {
            JsonNode run = JSON.readTree(file.toFile());
            if (!run.has("latencyMs") || !run.has("spec")) {
                continue; // a sweep, or not the generator's
            }
            Point point = new Point(run.at("/spec/subscribers").asInt(), run.at("/spec/rate").asInt());
            points.computeIfAbsent(point, p -> new TreeMap<>())
                    .computeIfAbsent(run.at("/spec/viewShapes").asInt(0), v -> new ArrayList<>()).add(run);
        }
        StringBuilder md = new StringBuilder();
        md.append("Medians over each group's runs (each run against a fresh server); lost, duplicated, out of order and"
                + " failed subscribers summed.\n\n");
        md.append("| subscribers | offered/s | subscriptions | runs | deliveries/s | server CPU ns/delivery (each run)"
                        + " | p99 ms | frames/delivery | server peak RSS MB | lost / dup / out of order / failed |\n")
                .append("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |\n");
        List<String> ratios = new ArrayList<>();
        points.forEach((point, byShapes) -> {
            Group plain = null;
            for (Map.Entry<Integer, List<JsonNode>> e : byShapes.entrySet()) {
                Group g = new Group(point.subscribers(), point.rate(), e.getKey(), e.getValue());
                md.append(row(g));
                if (g.viewShapes() == 0) {
                    plain = g;
                } else if (plain != null) {
                    ratios.add(ratioRow(plain, g));
                }
            }
        });
        if (!ratios.isEmpty()) {
            md.append("\nViews against plain subscriptions at the same point, median against median (issue 16: server"
                            + " CPU per delivery within ").append(TARGET_CPU_RATIO).append("x):\n\n")
                    .append("| subscribers | offered/s | subscriptions | server CPU per delivery | within "
                            + TARGET_CPU_RATIO + "x | p99 | frames per delivery | server peak RSS |\n")
                    .append("| ---: | ---: | --- | ---: | :---: | ---: | ---: | ---: |\n");
            ratios.forEach(md::append);
        }
        return md.toString();
    }

    private static String row(Group g) {
        String each = String.join(", ", g.runs().stream().map(r -> format("%.0f", cpuNsPerDelivery(r))).toList());
        return String.format(Locale.ROOT, "| %,d | %,d | %s | %d | %s | %s (%s) | %s | %s | %s | %d / %d / %d / %d |%n",
                g.subscribers(), g.rate(), g.subscriptions(), g.runs().size(),
                format("%,.0f", g.median(ViewsReport::deliveriesPerSecond)),
                format("%.0f", g.median(ViewsReport::cpuNsPerDelivery)), each, format("%.2f", g.median(ViewsReport::p99Ms)),
                format("%.3f", g.median(ViewsReport::framesPerDelivery)), format("%.0f", g.median(ViewsReport::peakRssMb)),
                g.sum("/correctness/lost"), g.sum("/correctness/duplicated"), g.sum("/correctness/outOfOrder"),
                g.sum("/correctness/subscriberFailures"));
    }

    private static String ratioRow(Group plain, Group views) {
        double cpu = views.median(ViewsReport::cpuNsPerDelivery) / plain.median(ViewsReport::cpuNsPerDelivery);
        return String.format(Locale.ROOT, "| %,d | %,d | %s | %s | %s | %s | %s | %s |%n", views.subscribers(),
                views.rate(), views.subscriptions(), format("%.2fx", cpu),
                Double.isNaN(cpu) ? "unknown" : cpu <= TARGET_CPU_RATIO ? "yes" : "**no**",
                format("%.2fx", views.median(ViewsReport::p99Ms) / plain.median(ViewsReport::p99Ms)),
                format("%.2fx", views.median(ViewsReport::framesPerDelivery) / plain.median(ViewsReport::framesPerDelivery)),
                format("%.2fx", views.median(ViewsReport::peakRssMb) / plain.median(ViewsReport::peakRssMb)));
    }

    /** {@code value} formatted, or {@code n/a} when unknown (NaN or negative). */
    private static String format(String pattern, double value) {
        return Double.isNaN(value) || Double.isInfinite(value) || value < 0 ? "n/a"
                : String.format(Locale.ROOT, pattern, value);
    }
}
