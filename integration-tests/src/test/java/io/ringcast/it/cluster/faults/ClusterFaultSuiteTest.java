package io.ringcast.it.cluster.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The cluster fault suite of issue 18 in CI, the quick version: each fault through
 * {@code scripts/cluster-faults.sh --quick <fault>}, which runs five node processes, the clients and
 * the checker in a private network namespace. Needs root, {@code unshare} and {@code iptables}
 * ({@code scripts/test.sh} installs it): without them these tests fail, naming what is missing.
 * Five of issue 18's six run here, on the Raft engine; never make one pass by weakening the checker.
 * {@code kill-leader} runs by hand ({@code scripts/cluster-faults.sh}): CI kills the leader with
 * {@code kill -9} and restarts it under load in {@code ClusterFailoverTest} (every subscriber's
 * stream checked for every acked update, in order, once) and here in {@code kill-two} (the busiest
 * leader and the next node), and the suite's time is CI's largest.
 */
@Tag("slow")
// a backstop: a quick fault takes 25 to 45 s; each step inside has its own deadline
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ClusterFaultSuiteTest {
    private static final Path SCRIPT = Path.of("..", "scripts", "cluster-faults.sh");
    private static final Path REPORTS = Path.of("target", "cluster-faults");

    @Test
    void partitionOfTwoFromThree() throws Exception {
        assertFaultPasses("partition");
    }

    @Test
    void bridgeNodeBetweenTwoCutPairs() throws Exception {
        assertFaultPasses("bridge");
    }

    @Test
    void killOfTwoNodesAtOnceAndTheirRestart() throws Exception {
        assertFaultPasses("kill-two");
    }

    @Test
    void sigstopOfTheBusiestLeader() throws Exception {
        assertFaultPasses("pause-leader");
    }

    @Test
    void rollingRestartOfAllFive() throws Exception {
        assertFaultPasses("rolling-restart");
    }

    private static void assertFaultPasses(String fault) throws IOException, InterruptedException {
        Files.createDirectories(REPORTS);
        Path output = REPORTS.resolve(fault + ".out");
        ProcessBuilder pb = new ProcessBuilder(List.of("bash", SCRIPT.toString(), "--quick", fault))
                .redirectErrorStream(true).redirectOutput(output.toFile());
        // the suite runs on this JVM's classpath (surefire sets it to the test classpath), without Maven
        pb.environment().put("RINGCAST_FAULTS_CLASSPATH", System.getProperty("java.class.path"));
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        try {
            if (!p.waitFor(230, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("fault " + fault + " still runs after 230 s\n" + tail(output));
            }
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
        }
        Path report = REPORTS.resolve(fault + ".txt");
        assertThat(p.exitValue())
                .as("fault %s (exit 0 = passed, 1 = failed, 2 = could not run):%n%s", fault,
                        Files.exists(report) ? Files.readString(report, StandardCharsets.UTF_8) : tail(output))
                .isZero();
    }

    private static String tail(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
}
