package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a node's {@code /metrics} holds besides {@link io.ringcast.server.ServerCounter}'s figures
 * (which {@link ServerCounterReportingTest} checks): the JVM's and the process's families, which
 * every node's registry reads from the one JVM-wide registry. No sockets: rendered to a string.
 */
class ServerMetricsTest {

    private static String render(ServerMetrics metrics) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        metrics.write(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The family names of a scrape, from its {@code # TYPE} lines, e.g. {@code jvm_threads_current}. */
    private static List<String> families(String scrape) {
        return scrape.lines().filter(l -> l.startsWith("# TYPE ")).map(l -> l.split(" ")[2]).toList();
    }

    @Test
    void twoNodesInOneJvmEachReportTheJvmFamiliesOnce() throws Exception {
        String first = render(new ServerMetrics(new ServerCounters(), null));
        String second = render(new ServerMetrics(new ServerCounters(), null));

        assertThat(families(first)).doesNotHaveDuplicates()
                .contains("jvm_memory_used_bytes", "process_cpu_seconds_total", "ringcast_netty_direct_memory_used_bytes",
                        "ringcast_sessions");
        assertThat(families(second)).isEqualTo(families(first));
    }

    @Test
    void everyFamilyANodeReportsIsDocumentedInOperations() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "operations.md"));
        List<String> families = families(render(new ServerMetrics(new ServerCounters(), null)));

        assertThat(families).hasSizeGreaterThan(40);
        for (String family : families) {
            assertThat(doc).as("docs/operations.md names " + family).containsPattern("`" + family + "[`{]");
        }
    }
}
