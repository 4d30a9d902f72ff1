package io.ringcast.benchmark.jmh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Turns JMH JSON results of {@link FanOutBenchmark} and {@link QueueFanOutBenchmark} into figures
 * per delivered update, ours against the baseline. JMH reports per operation; one operation is
 * {@code updates x subscribers} deliveries ({@link Workload}), so:
 * <ul>
 *   <li>ns per delivery = the primary score (time per operation) in ns / deliveries per operation;</li>
 *   <li>bytes per delivery = {@code gc.alloc.rate.norm} (bytes allocated per operation, by every
 *       thread of the fork) / deliveries per operation;</li>
 *   <li>ratio = baseline / ours, for both.</li>
 * </ul>
 * It also checks the {@code deliveries} counter each benchmark reports against that divisor.
 *
 * <p>Usage: {@code java -cp ringcast-bench.jar io.ringcast.benchmark.jmh.DeliveryReport OUT_DIR RESULT.json...};
 * writes {@code OUT_DIR/summary.json} and {@code OUT_DIR/summary.md} and prints the table.
 */
public final class DeliveryReport {
    private static final String OURS = "io.ringcast.benchmark.jmh.FanOutBenchmark.fanOut";
    private static final String BASELINE = "io.ringcast.benchmark.jmh.QueueFanOutBenchmark.fanOut";
    private static final String LEAK_PROPERTY = "-Dio.netty.leakDetection.level=";

    private DeliveryReport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: DeliveryReport OUT_DIR RESULT.json...");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        List<Path> inputs = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            inputs.add(Path.of(args[i]));
        }
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        List<Row> rows = rows(json, inputs);
        String table = markdown(rows);
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), table, StandardCharsets.UTF_8);
        json.writeValue(out.resolve("summary.json").toFile(), summary(json, rows, inputs));
        System.out.print(table);
    }

    /** One point of a sweep: the same workload run by ours and by the baseline (either may be missing). */
    static final class Row {
        final Map<String, String> params;
        final String leakDetection;
        Figures ours;
        Figures baseline;

        Row(Map<String, String> params, String leakDetection) {
            this.params = params;
            this.leakDetection = leakDetection;
        }

        int subscribers() {
            return Integer.parseInt(params.get("subscribers"));
        }

        long updates() {
            return Long.parseLong(params.get("updates"));
        }

        long deliveriesPerOp() {
            return updates() * subscribers();
        }

        /** Params that differ from the defaults of the sweeps, and the leak detection level if not disabled. */
        String variant() {
            StringBuilder s = new StringBuilder();
            appendIfNot(s, "readers", "2");
            appendIfNot(s, "topics", "1000");
            appendIfNot(s, "valueBytes", "200");
            appendIfNot(s, "ringSize", "1024");
            appendIfNot(s, "features", "cache");
            if (!"disabled".equals(leakDetection)) {
                s.append(s.length() == 0 ? "" : ", ").append("leakDetection=").append(leakDetection);
            }
            return s.toString();
        }

        private void appendIfNot(StringBuilder s, String param, String usual) {
            String v = params.get(param);
            if (v != null && !v.equals(usual)) {
                s.append(s.length() == 0 ? "" : ", ").append(param).append('=').append(v);
            }
        }
    }

    /** One benchmark's result at one point, per delivery. */
    static final class Figures {
        double nsPerDelivery;
        double nsPerDeliveryError;
        double bytesPerDelivery = Double.NaN;
        int iterations;
        double gcCount = Double.NaN;
        double gcTimeMs = Double.NaN;
        /** Deliveries counted by the benchmark per operation, which must equal updates x subscribers. */
        double countedDeliveriesPerOp;
    }

    static List<Row> rows(ObjectMapper json, List<Path> inputs) throws IOException {
        Map<String, Row> byKey = new LinkedHashMap<>();
        for (Path input : inputs) {
            for (JsonNode result : json.readTree(input.toFile())) {
                String benchmark = result.path("benchmark").asText();
                if (!benchmark.equals(OURS) && !benchmark.equals(BASELINE)) {
                    continue;
                }
                Map<String, String> params = new TreeMap<>();
                result.path("params").properties().forEach(e -> params.put(e.getKey(), e.getValue().asText()));
                if ("cache".equals(params.get("features"))) {
                    params.remove("features"); // the default: pairs with the baseline, which has no such param
                }
                String leak = leakDetection(result.path("jvmArgs"));
                Row row = byKey.computeIfAbsent(params + leak, k -> new Row(params, leak));
                Figures f = figures(result, row.deliveriesPerOp());
                if (benchmark.equals(OURS)) {
                    row.ours = f;
                } else {
                    row.baseline = f;
                }
            }
        }
        List<Row> rows = new ArrayList<>(byKey.values());
        rows.sort(Comparator.comparing(Row::variant).thenComparingLong(Row::updates).thenComparingInt(Row::subscribers));
        return rows;
    }

    private static String leakDetection(JsonNode jvmArgs) {
        String level = "simple"; // Netty's default when the property is absent
        for (JsonNode arg : jvmArgs) {
            if (arg.asText().startsWith(LEAK_PROPERTY)) {
                level = arg.asText().substring(LEAK_PROPERTY.length()).toLowerCase(Locale.ROOT);
            }
        }
        return level;
    }

    private static Figures figures(JsonNode result, long deliveriesPerOp) {
        JsonNode primary = result.path("primaryMetric");
        double nsPerOpUnit = nanosPer(primary.path("scoreUnit").asText());
        Figures f = new Figures();
        f.nsPerDelivery = primary.path("score").asDouble() * nsPerOpUnit / deliveriesPerOp;
        f.nsPerDeliveryError = primary.path("scoreError").asDouble(Double.NaN) * nsPerOpUnit / deliveriesPerOp;
        f.iterations = 0;
        for (JsonNode fork : primary.path("rawData")) {
            f.iterations += fork.size();
        }
        JsonNode secondary = result.path("secondaryMetrics");
        if (secondary.has("gc.alloc.rate.norm")) {
            f.bytesPerDelivery = secondary.path("gc.alloc.rate.norm").path("score").asDouble() / deliveriesPerOp;
        }
        if (secondary.has("gc.count")) {
            f.gcCount = secondary.path("gc.count").path("score").asDouble();
        }
        if (secondary.has("gc.time")) {
            f.gcTimeMs = secondary.path("gc.time").path("score").asDouble();
        }
        // an EVENTS counter: JMH sums it over the measurement iterations
        f.countedDeliveriesPerOp = secondary.path("deliveries").path("score").asDouble() / Math.max(1, f.iterations);
        return f;
    }

    /** Nanoseconds in the time unit of a JMH score unit such as {@code ms/op}. */
    static double nanosPer(String scoreUnit) {
        String unit = scoreUnit.substring(0, scoreUnit.indexOf('/'));
        switch (unit) {
            case "ns":
                return 1;
            case "us":
                return 1e3;
            case "ms":
                return 1e6;
            case "s":
                return 1e9;
            case "min":
                return 60e9;
            default:
                throw new IllegalArgumentException("not a time per operation: " + scoreUnit);
        }
    }

    static String markdown(List<Row> rows) {
        StringBuilder s = new StringBuilder();
        s.append("| subscribers | updates | deliveries/op | ours ns/delivery | baseline ns/delivery | time ratio"
                + " (baseline/ours) | ours B/delivery | baseline B/delivery | ours B/update | iterations (ours, baseline)"
                + " | variant |\n");
        s.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | --- |\n");
        for (Row r : rows) {
            s.append("| ").append(String.format(Locale.ROOT, "%,d", r.subscribers()))
                    .append(" | ").append(String.format(Locale.ROOT, "%,d", r.updates()))
                    .append(" | ").append(powerOfTen(r.deliveriesPerOp()))
                    .append(" | ").append(time(r.ours))
                    .append(" | ").append(time(r.baseline))
                    .append(" | ").append(ratio(r.baseline == null ? Double.NaN : r.baseline.nsPerDelivery,
                            r.ours == null ? Double.NaN : r.ours.nsPerDelivery))
                    .append(" | ").append(bytes(r.ours))
                    .append(" | ").append(bytes(r.baseline))
                    .append(" | ").append(r.ours == null || Double.isNaN(r.ours.bytesPerDelivery) ? "-"
                            : number(r.ours.bytesPerDelivery * r.subscribers()))
                    .append(" | ").append(r.ours == null ? "-" : r.ours.iterations)
                    .append(", ").append(r.baseline == null ? "-" : r.baseline.iterations)
                    .append(" | ").append(r.variant()).append(" |\n");
            for (Figures f : new Figures[]{r.ours, r.baseline}) {
                if (f != null && Math.abs(f.countedDeliveriesPerOp - r.deliveriesPerOp()) > 0.5) {
                    s.append("\nWARNING: a benchmark counted ").append(f.countedDeliveriesPerOp)
                            .append(" deliveries per operation at this point, expected ").append(r.deliveriesPerOp())
                            .append("\n\n");
                }
            }
        }
        return s.toString();
    }

    /** {@code 10^6} for a million; other numbers as they are. */
    static String powerOfTen(long n) {
        int exponent = 0;
        for (long v = n; v > 1 && v % 10 == 0; v /= 10) {
            exponent++;
        }
        return Math.round(Math.pow(10, exponent)) == n ? "10^" + exponent : String.format(Locale.ROOT, "%,d", n);
    }

    private static String time(Figures f) {
        if (f == null) {
            return "-";
        }
        String err = Double.isNaN(f.nsPerDeliveryError) ? "" : String.format(Locale.ROOT, " ± %s", number(f.nsPerDeliveryError));
        return number(f.nsPerDelivery) + err;
    }

    private static String bytes(Figures f) {
        return f == null || Double.isNaN(f.bytesPerDelivery) ? "-" : number(f.bytesPerDelivery);
    }

    private static String ratio(double baseline, double ours) {
        return Double.isNaN(baseline) || Double.isNaN(ours) || ours == 0 ? "-"
                : String.format(Locale.ROOT, "%.2f", baseline / ours);
    }

    /** Three significant figures, without an exponent for the usual range. */
    static String number(double v) {
        if (v == 0) {
            return "0";
        }
        double a = Math.abs(v);
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 0.001) {
            return new BigDecimal(v).round(new MathContext(3)).stripTrailingZeros().toPlainString();
        }
        return String.format(Locale.ROOT, "%.2e", v);
    }

    private static ObjectNode summary(ObjectMapper json, List<Row> rows, List<Path> inputs) {
        ObjectNode root = json.createObjectNode();
        root.put("generated", OffsetDateTime.now(ZoneOffset.UTC).toString());
        ObjectNode machine = root.putObject("machine");
        machine.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        machine.put("reportJvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        ArrayNode files = root.putArray("inputs");
        inputs.forEach(p -> files.add(Objects.toString(p.getFileName())));
        root.put("conversion", "ns/delivery = score (time per op) / (updates x subscribers); "
                + "B/delivery = gc.alloc.rate.norm / (updates x subscribers); ratio = baseline / ours");
        ArrayNode out = root.putArray("points");
        for (Row r : rows) {
            ObjectNode p = out.addObject();
            ObjectNode params = p.putObject("params");
            r.params.forEach(params::put);
            p.put("leakDetection", r.leakDetection);
            p.put("deliveriesPerOp", r.deliveriesPerOp());
            put(p, "ours", r.ours, r.subscribers());
            put(p, "baseline", r.baseline, r.subscribers());
            if (r.ours != null && r.baseline != null) {
                p.put("timeRatioBaselineOverOurs", r.baseline.nsPerDelivery / r.ours.nsPerDelivery);
                p.put("bytesRatioBaselineOverOurs", r.baseline.bytesPerDelivery / r.ours.bytesPerDelivery);
            }
        }
        return root;
    }

    private static void put(ObjectNode p, String name, Figures f, int subscribers) {
        if (f == null) {
            return;
        }
        ObjectNode o = p.putObject(name);
        o.put("nsPerDelivery", f.nsPerDelivery);
        o.put("nsPerDeliveryError", f.nsPerDeliveryError);
        o.put("bytesPerDelivery", f.bytesPerDelivery);
        o.put("bytesPerUpdate", f.bytesPerDelivery * subscribers);
        o.put("measurementIterations", f.iterations);
        o.put("gcCount", f.gcCount);
        o.put("gcTimeMs", f.gcTimeMs);
        o.put("countedDeliveriesPerOp", f.countedDeliveriesPerOp);
    }
}
