package io.ringcast.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.server.RingcastServer;
import io.ringcast.testkit.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard {@code docs/grafana/ringcast.json} cannot drift from the metrics: every
 * metric its panels and template variables query is in a real node's {@code /metrics}, the node a
 * one-member cluster so that the {@code ringcast_cluster_*} metrics are there too. And it imports as
 * Grafana's dashboards exported for sharing do: every query goes to the {@code ${DS_PROMETHEUS}}
 * datasource input the importer asks for.
 */
@Timeout(120)
class GrafanaDashboardTest {
    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "ringcast.json");
    private static final String DATASOURCE = "${DS_PROMETHEUS}";
    /** PromQL words that look like metric names: operators and modifiers. */
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
            "ignoring", "group_left", "group_right", "inf", "nan");
    /** An identifier not followed by "(" (so not a function or an aggregation), not within another word. */
    private static final Pattern NAME = Pattern.compile("(?<![\\w.:])[a-zA-Z_:][\\w:]*+(?!\\s*\\()");
    private static final Pattern LABEL_VALUES = Pattern.compile("^\\s*label_values\\(\\s*([a-zA-Z_:][\\w:]*)");

    @TempDir
    Path data;

    private static JsonNode dashboard() throws IOException {
        return new ObjectMapper().readTree(DASHBOARD.toFile());
    }

    /** Every panel, those inside collapsed rows too, rows included. */
    private static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> all = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            all.add(panel);
            panel.path("panels").forEach(all::add);
        }
        return all;
    }

    /**
     * The metric names a PromQL expression selects: what is left once strings, label matchers,
     * ranges, grouping label lists and Grafana's variables are taken out, less functions (followed by
     * a parenthesis), numbers and keywords.
     */
    static Set<String> metricNames(String promQl) {
        String bare = promQl.replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"")
                .replaceAll("\\{[^}]*}", "")
                .replaceAll("\\[[^]]*]", "")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
                .replaceAll("\\$\\{?\\w+}?", "");
        Set<String> names = new TreeSet<>();
        Matcher m = NAME.matcher(bare);
        while (m.find()) {
            if (!KEYWORDS.contains(m.group().toLowerCase(Locale.ROOT))) {
                names.add(m.group());
            }
        }
        return names;
    }

    /** Metric name to the titles of the panels (or variables) whose queries use it. */
    private static Map<String, Set<String>> metricsQueried(JsonNode dashboard) {
        Map<String, Set<String>> usedBy = new TreeMap<>();
        for (JsonNode panel : panels(dashboard)) {
            for (JsonNode target : panel.path("targets")) {
                for (String name : metricNames(target.path("expr").asText())) {
                    usedBy.computeIfAbsent(name, n -> new TreeSet<>()).add(panel.path("title").asText());
                }
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            Matcher labelValues = LABEL_VALUES.matcher(variable.path("query").path("query").asText());
            assertThat(labelValues.find()).as("variable %s is label_values(metric, label)", variable.path("name")).isTrue();
            usedBy.computeIfAbsent(labelValues.group(1), n -> new TreeSet<>()).add("$" + variable.path("name").asText());
        }
        return usedBy;
    }

    @Test
    void everyMetricTheDashboardQueriesIsInARealClusterNodesMetrics() throws Exception {
        Map<String, Set<String>> usedBy = metricsQueried(dashboard());
        assertThat(usedBy.keySet()).as("metrics the dashboard queries").hasSizeGreaterThan(40)
                .contains("ringcast_sessions", "ringcast_cluster_term", "ringcast_publish_to_write_seconds_bucket",
                        "process_resident_memory_bytes", "jvm_gc_collection_seconds_sum");

        String yaml = "cluster:\n  enabled: true\n  nodeName: solo\n  commitFsync: false\n  dataDir: \"" + data
                + "\"\n  members:\n    - {name: solo, host: 127.0.0.1, membershipPort: " + FreePorts.pick() + "}\n";
        try (RingcastServer node = TestServers.start(yaml)) {
            Set<String> served = MetricsScrape.of(node).sampleNames();
            Map<String, Set<String>> missing = new TreeMap<>(usedBy);
            missing.keySet().removeAll(served);
            assertThat(missing).as("metrics the dashboard queries (with the panels using them) that a node does not "
                    + "report").isEmpty();
        }
    }

    @Test
    void everyQueryGoesToThePrometheusDatasourceInput() throws Exception {
        JsonNode dashboard = dashboard();
        JsonNode input = dashboard.path("__inputs").path(0);
        assertThat(input.path("name").asText()).isEqualTo("DS_PROMETHEUS");
        assertThat(input.path("type").asText()).isEqualTo("datasource");
        assertThat(input.path("pluginId").asText()).isEqualTo("prometheus");
        assertThat(dashboard.path("uid").asText()).isEqualTo("ringcast");
        assertThat(dashboard.path("id").isNull()).as("no id of one Grafana's database").isTrue();

        Set<Integer> ids = new HashSet<>();
        for (JsonNode panel : panels(dashboard)) {
            String title = panel.path("title").asText();
            assertThat(ids.add(panel.path("id").asInt())).as("panel id of %s is unique", title).isTrue();
            JsonNode pos = panel.path("gridPos");
            assertThat(pos.path("x").asInt() + pos.path("w").asInt()).as("%s fits the 24 columns", title)
                    .isBetween(1, 24);
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            assertThat(panel.path("datasource").path("uid").asText()).as(title).isEqualTo(DATASOURCE);
            assertThat(panel.path("targets")).as("%s queries something", title).isNotEmpty();
            for (JsonNode target : panel.path("targets")) {
                assertThat(target.path("datasource").path("uid").asText()).as(title).isEqualTo(DATASOURCE);
                assertThat(metricNames(target.path("expr").asText())).as("%s: %s", title, target.path("expr"))
                        .isNotEmpty();
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            assertThat(variable.path("datasource").path("uid").asText()).isEqualTo(DATASOURCE);
        }
    }

    @Test
    void metricNamesAreReadFromPromQlWithoutFunctionsLabelsNumbersOrVariables() {
        assertThat(metricNames("histogram_quantile(0.99, sum by (instance, le) (rate(a_bucket{job=~\"$job\", "
                + "le!=\"x}\"}[$__rate_interval])))")).containsExactly("a_bucket");
        assertThat(metricNames("scalar(max(b{job=~\"$job\"})) - b{instance=~\"$instance\"}")).containsExactly("b");
        assertThat(metricNames("time() - process_start_time_seconds")).containsExactly("process_start_time_seconds");
        assertThat(metricNames("sum without (code) (rate(c_total[5m] offset 1h)) > 1e3 and on (instance) d == bool 0"))
                .containsExactly("c_total", "d");
        assertThat(metricNames("rate(e[1m]) / rate (f[1m])")).containsExactly("e", "f");
    }
}
