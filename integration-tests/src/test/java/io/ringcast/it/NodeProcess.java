package io.ringcast.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One node as its own process, started from the runnable jar on loopback with a config file, for
 * tests that measure the node from outside: its resident memory, whether it is still up, and
 * latency that the test's own allocations and pauses do not touch.
 */
final class NodeProcess implements AutoCloseable {
    private final Process process;
    private final List<String> output;
    private final int port;

    private NodeProcess(Process process, List<String> output, int port) {
        this.process = process;
        this.output = output;
        this.port = port;
    }

    /**
     * Starts a node with {@code jvmArgs}, on a free loopback port, with {@code yaml} (top-level
     * sections other than {@code server}) written to a config file in {@code dir}; returns once it listens.
     */
    static NodeProcess start(Path dir, List<String> jvmArgs, String yaml) throws IOException {
        Path config = dir.resolve("node.yaml");
        Files.writeString(config, "server:\n  host: 127.0.0.1\n  port: 0\n" + yaml);
        Process p = ServerProcesses.launch(dir, jvmArgs, "--config", config.toString());
        List<String> out = ServerProcesses.collect(p);
        try {
            return new NodeProcess(p, out, Integer.parseInt(ServerProcesses.awaitPort(out)));
        } catch (RuntimeException | Error e) {
            p.destroyForcibly();
            throw e;
        }
    }

    String webSocketUrl() {
        return "ws://127.0.0.1:" + port + "/ws";
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    /** Resident memory now, from {@code /proc/<pid>/status}. */
    long rssBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS for process " + process.pid());
    }

    /** Fails unless the node is still running; its output says why when it is not. */
    void assertAlive() {
        assertThat(process.isAlive()).as("the node process is up; its output:\n" + String.join("\n", output))
                .isTrue();
    }

    /** Stops the node (SIGTERM), waiting for it to exit. */
    @Override
    public void close() {
        process.toHandle().destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
