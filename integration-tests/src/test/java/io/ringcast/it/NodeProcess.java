package io.ringcast.it;

import io.ringcast.testkit.TcpSockets;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
            return new NodeProcess(p, out, Integer.parseInt(ServerProcesses.awaitPort(p, out)));
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

    /**
     * Bytes the kernel holds unsent (or unacknowledged) on the node's client connections: the send
     * queues of the sockets whose local port is the node's, listening socket aside.
     */
    long kernelSendQueueBytes() throws IOException {
        return TcpSockets.all().stream().filter(s -> s.localPort() == port && s.state() != TcpSockets.LISTEN)
                .mapToLong(TcpSockets.Socket::sendQueueBytes).sum();
    }

    /** The node's heap in use after a full collection ({@code jcmd GC.run}), from its own metrics. */
    double heapAfterGc() throws Exception {
        jcmd("GC.run");
        return MetricSampler.metric(port, "jvm_memory_used_bytes{area=\"heap\"}");
    }

    /**
     * How many objects of class {@code className} the node's heap holds alive: {@code jcmd
     * GC.class_histogram}, which collects first.
     */
    long liveInstances(String className) throws Exception {
        String suffix = " " + className;
        return jcmd("GC.class_histogram").lines().map(String::strip).filter(l -> l.endsWith(suffix))
                .mapToLong(l -> Long.parseLong(l.split("\\s+")[1])).sum();
    }

    /**
     * Waits until the node's heap holds exactly {@code expected} session objects alive ({@link
     * #liveInstances}): its open sessions, once nothing refers to a closed one any more. Each look is
     * a {@code jcmd} and a full collection of the node, hence half a second between them.
     */
    void awaitSessionsOnTheHeap(long expected, String what) {
        long[] live = {-1};
        io.ringcast.testkit.Await.until(() -> {
            try {
                live[0] = liveInstances("io.ringcast.server.internal.Session");
            } catch (Exception e) {
                throw new AssertionError("cannot read the node's class histogram", e);
            }
            return live[0] == expected;
        }, Duration.ofSeconds(20), Duration.ofMillis(500), () -> what + ": " + live[0] + " session objects alive");
    }

    /** What {@code jcmd <pid> <command>} prints; fails unless it exits 0 within 30 s. */
    private String jcmd(String command) throws Exception {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(process.pid()), command).redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(jcmd.waitFor(30, TimeUnit.SECONDS)).as("jcmd %s within 30 s", command).isTrue();
        assertThat(jcmd.exitValue()).as("jcmd %s's exit status; it printed:%n%s", command, out).isZero();
        return out;
    }

    /**
     * Waits until the node's JIT compiler has settled: less than 5% of a core spent compiling over
     * the last second. Until then a node on 2 cores shared with its clients spends up to half a core
     * compiling, and a latency measured meanwhile is the compiler's.
     */
    void awaitJitSettled() {
        long[] sampledAt = new long[1];
        double[] compiledSeconds = {Double.NaN};
        Await.until(() -> {
            long now = System.nanoTime();
            if (now - sampledAt[0] < 1_000_000_000L) {
                return false;
            }
            double compiled = metricQuietly("jvm_compilation_time_seconds_total");
            boolean settled = compiled - compiledSeconds[0] < 0.05 * (now - sampledAt[0]) / 1e9;
            sampledAt[0] = now;
            compiledSeconds[0] = compiled;
            return settled;
        }, Duration.ofSeconds(60), () -> "the node's JIT compiler to settle; compiled for " + compiledSeconds[0] + " s");
    }

    private double metricQuietly(String name) {
        try {
            return MetricSampler.metric(port, name);
        } catch (Exception e) {
            throw new AssertionError("cannot read " + name + " of the node", e);
        }
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
