package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code scripts/ringcast}, the launcher the README and {@code scripts/cluster.sh} start nodes with,
 * as a real process: the node it starts runs with the JVM options docs/operations.md#memory gives
 * (the serial collector and its 8-MB young generation, bounded heap and direct memory, an exit on
 * running out, native memory given back every 5 s), and a collector chosen in {@code JAVA_OPTS}
 * replaces the serial one and keeps its own young sizing. The launcher {@code exec}s the JVM, so the process started is the node.
 */
@Timeout(60)
class LauncherProcessTest {
    private static final Path LAUNCHER = Path.of("..", "scripts", "ringcast").toAbsolutePath();

    @TempDir
    Path dir;

    @Test
    void aNodeStartsWithTheServersJvmOptionsAndGivesNativeMemoryBackEveryFiveSeconds() throws Exception {
        List<String> jvm = jvmOptionsOfANodeStartedWith("");
        assertThat(jvm).contains("-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC", "-Xms64m", "-Xmx512m", "-Xmn8m",
                "-XX:MaxDirectMemorySize=1g", "-XX:TrimNativeHeapInterval=5000");
    }

    @Test
    void aCollectorChosenInJavaOptsReplacesTheSerialOneAndItsYoungGeneration() throws Exception {
        // the node listening proves the JVM took the options: it refuses two collectors at start
        List<String> jvm = jvmOptionsOfANodeStartedWith("-XX:+UseG1GC");
        assertThat(jvm).contains("-XX:+UseG1GC", "-XX:TrimNativeHeapInterval=5000")
                .doesNotContain("-XX:+UseSerialGC", "-Xmn8m");
    }

    /** The arguments before {@code -jar} of a node the launcher started with {@code javaOpts}, once it listens. */
    private List<String> jvmOptionsOfANodeStartedWith(String javaOpts) throws IOException, InterruptedException {
        Files.writeString(dir.resolve("node.yaml"), "server:\n  host: 127.0.0.1\n  port: 0\n");
        Path javaBin = Path.of(ServerProcesses.java()).getParent();
        Process node = ServerProcesses.start(List.of(LAUNCHER.toString(), "--config", "node.yaml"), dir, Map.of(
                "RINGCAST_JAR", ServerProcesses.JAR.toAbsolutePath().toString(),
                "JAVA_OPTS", javaOpts,
                // the launcher runs the java on PATH: this JVM's, as in the other process tests
                "PATH", javaBin + ":" + System.getenv("PATH")));
        try {
            awaitPort(node, collect(node));
            String cmdline = Files.readString(Path.of("/proc", Long.toString(node.pid()), "cmdline"),
                    StandardCharsets.UTF_8);
            List<String> args = Arrays.asList(cmdline.split("\0"));
            assertThat(args).as("the launcher execs java: the process is the node").contains("-jar");
            return args.subList(0, args.indexOf("-jar"));
        } finally {
            node.toHandle().destroy();
            assertThat(node.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }
}
