package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static io.ringcast.it.ServerProcesses.launch;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runnable jar as an operator runs it: a real process, its output, its exit code, its log file
 * ({@link ServerProcesses}).
 */
@Timeout(120)
class ServerProcessTest {
    /**
     * A node started as the README starts it takes Netty's direct memory in chunks of 1 MiB, not
     * Netty's 4 MiB: with the traffic of a subscriber and a publisher, each allocating thread (event
     * loops, the sequencer) holds a chunk in an arena of its own, at most one arena per thread up
     * to twice the cores ({@code Main} sets the chunk size; docs/operations.md, "Memory").
     */
    @Test
    void directMemoryIsTakenInChunksOfOneMebibyte(@TempDir Path dir) throws Exception {
        try (NodeProcess node = NodeProcess.start(dir, List.of(), "security:\n" + TestServers.OPEN_TO_ANONYMOUS);
             RingcastClient client = RingcastClient.builder().addresses(node.webSocketUrl()).build()) {
            client.connect().get(10, TimeUnit.SECONDS);
            AtomicInteger received = new AtomicInteger();
            client.subscribe("chunks/#", u -> received.incrementAndGet()).confirmed().get(10, TimeUnit.SECONDS);
            List<CompletableFuture<Long>> acks = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                acks.add(client.publish("chunks/" + i % 20, ("value " + i).getBytes(StandardCharsets.UTF_8)));
            }
            CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
            Await.until(() -> received.get() == 200, Duration.ofSeconds(10), () -> "200 updates delivered: " + received.get());
            assertThat(MetricSampler.metric(node.port(), "ringcast_netty_direct_memory_chunk_bytes")).isEqualTo(1 << 20);
            double used = MetricSampler.metric(node.port(), "ringcast_netty_direct_memory_used_bytes");
            // a chunk for each thread's arena (event loops, the sequencer): 8 MiB on two cores with Netty's default
            assertThat(used).as("direct memory in Netty's arenas").isPositive()
                    .isLessThanOrEqualTo(2.0 * Runtime.getRuntime().availableProcessors() * (1 << 20));
        }
    }

    @Test
    void unknownConfigKeyStopsStartupNamingTheKey(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("bad.yaml");
        Files.writeString(cfg, "server:\n  prot: 8080\n");
        Process p = launch(dir, "--config", cfg.toString());
        List<String> out = collect(p);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        Await.until(() -> String.join("\n", out).contains("server.prot"), "the message naming the key: " + out);
        assertThat(String.join("\n", out)).contains("unknown key 'server.prot'");
    }

    @Test
    void wrongTypeStopsStartupNamingTheKeyAndExpectedType(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("config").resolve("server.yaml"); // picked up without --config
        Files.createDirectories(cfg.getParent());
        Files.writeString(cfg, "limits:\n  maxFrameBytes: lots\n");
        Process p = launch(dir);
        List<String> out = collect(p);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        Await.until(() -> String.join("\n", out).contains("limits.maxFrameBytes"), "the message: " + out);
        assertThat(String.join("\n", out)).contains("expects an integer");
    }

    @Test
    void startsAnswersHealthAndStopsCleanlyOnSigterm(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("node.yaml");
        Files.writeString(cfg, "server:\n  host: 127.0.0.1\n  port: 0\n");
        Process p = launch(dir, "--config", cfg.toString());
        List<String> out = collect(p);
        String port = awaitPort(p, out);

        HttpResponse<String> health = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(health.body()).contains("\"status\":\"UP\"");

        p.toHandle().destroy(); // SIGTERM; Process.destroy() would also close our end of its output
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s of SIGTERM").isTrue();
        Await.until(() -> out.stream().anyMatch(l -> l.contains("Ringcast node stopped")), "the stop line (exit " + p.exitValue() + "): " + out);
        assertThat(p.exitValue()).as("exit status after SIGTERM and a clean stop (a systemd unit's success)").isZero();
        assertThat(out).noneMatch(l -> l.contains("Exception"));
    }

    /**
     * A client name is the client's to choose, and the node logs it (a session's close line): its
     * line breaks and other control characters must not start a line of their own in the log, nor
     * reach an operator's terminal as escape sequences.
     */
    @Test
    void aClientNameWithLineBreaksCannotForgeALogLine(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("node.yaml");
        Files.writeString(cfg, "server:\n  host: 127.0.0.1\n  port: 0\nsecurity:\n" + TestServers.OPEN_TO_ANONYMOUS);
        Process p = launch(dir, "--config", cfg.toString());
        List<String> out = collect(p);
        String port = awaitPort(p, out);
        try (WireSocket s = new WireSocket("ws://127.0.0.1:" + port + "/ws", null, 4096)) {
            s.send(b -> io.ringcast.protocol.WireCodec.writeHello(b, io.ringcast.protocol.WireCodec.VERSION,
                    "evil\n12:00:00.000 WARN  [main] NodeRuntime - FORGED\r\u001b[2J"));
            s.awaitMessage("WELCOME");
        }
        Await.until(() -> out.stream().anyMatch(l -> l.contains("(client 'evil")), "the session's close line");
        p.toHandle().destroy();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as("no line starts with the forged text").noneMatch(l -> l.startsWith("12:00:00.000"));
        assertThat(out).as("the close line carries the whole name").anyMatch(l -> l.contains("(client 'evil")
                && l.contains("FORGED"));
        assertThat(out).as("no control character reaches the log").noneMatch(l -> l.chars().anyMatch(c -> c < 0x20 && c != '\t'));
    }

    @Test
    void aPortInUseIsNamedAndTheStartFails(@TempDir Path dir) throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Path cfg = dir.resolve("node.yaml");
            Files.writeString(cfg, "server:\n  host: 127.0.0.1\n  port: " + taken.getLocalPort() + "\n");
            Process p = launch(dir, "--config", cfg.toString());
            List<String> out = collect(p);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isEqualTo(1);
            Await.until(() -> String.join("\n", out).contains("cannot listen on 127.0.0.1:" + taken.getLocalPort()),
                    "the message naming the port");
        }
    }

    /**
     * The unread-PONG flood against the real process, with a small heap and the README's JVM flags: it
     * either keeps serving (health answers, a new session is welcomed) or ends with a non-zero status;
     * never alive and deaf.
     */
    @Test
    void aPongFloodLeavesTheNodeServingOrEndsItNeverHalfDead(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("node.yaml");
        Files.writeString(cfg, "server:\n  host: 127.0.0.1\n  port: 0\nsession:\n  idleTimeoutMs: 2000\n"
                + "security:\n" + TestServers.OPEN_TO_ANONYMOUS);
        Process p = launch(dir, List.of("-Xmx96m", "-XX:+ExitOnOutOfMemoryError"), "--config", cfg.toString());
        List<String> out = collect(p);
        String port = awaitPort(p, out);
        String url = "ws://127.0.0.1:" + port + "/ws";
        List<WireSocket> flooders = new ArrayList<>();
        List<Thread> floods = new ArrayList<>();
        try {
            for (int s = 0; s < 8 && p.isAlive(); s++) {
                WireSocket flooder;
                try {
                    flooder = new WireSocket(url, null, 4096);
                    flooder.hello();
                } catch (java.io.IOException refused) {
                    break; // the node ended under the flood so far: its exit status is checked below
                }
                flooders.add(flooder);
                Thread t = new Thread(() -> {
                    try {
                        for (int f = 0; f < 100; f++) { // 500,000 PINGs each, nothing read
                            flooder.send(b -> {
                                for (int i = 0; i < 5_000; i++) {
                                    io.ringcast.protocol.WireCodec.writePing(b, i);
                                }
                            });
                        }
                    } catch (java.io.IOException closed) {
                        // the node closed the flooder, or ended
                    }
                }, "flooder-" + s);
                t.start();
                floods.add(t);
            }
            for (Thread t : floods) {
                t.join(60_000); // held back by TCP, then closed as a slow consumer by the idle timeout
            }
        } finally {
            for (WireSocket flooder : flooders) {
                flooder.close();
            }
        }
        if (!p.waitFor(1, TimeUnit.SECONDS)) { // an ending node is given a moment to end, a serving one loses nothing
            HttpResponse<String> health = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).as("health of the node that is still running").isEqualTo(200);
            try (RawWebSocket newcomer = RawWebSocket.connectAndHello(url)) {
                assertThat(newcomer.messages).anyMatch(m -> m.type().equals("WELCOME"));
            }
            p.toHandle().destroy();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
        } else {
            assertThat(p.exitValue()).as("exit status of the node that ended: " + out).isNotZero();
        }
    }

    /**
     * The example {@code config/logback.xml} given with {@code -Dlogback.configurationFile}, as
     * docs/operations.md tells an operator, with {@code jvmArgs} for its variables: the node is
     * started, a session opens and closes, and the node is stopped with SIGTERM.
     * @return the lines of its rolling file, {@code dir/logs/ringcast.log}
     */
    private static List<String> runWithTheExampleLogbackConfig(Path dir, String... jvmArgs) throws Exception {
        Path cfg = dir.resolve("node.yaml");
        Files.writeString(cfg, "server:\n  host: 127.0.0.1\n  port: 0\nsecurity:\n" + TestServers.OPEN_TO_ANONYMOUS);
        List<String> jvm = new ArrayList<>(List.of("-Dlogback.configurationFile="
                + Path.of("..", "config", "logback.xml").toAbsolutePath(), "-DRINGCAST_LOG_DIR=" + dir.resolve("logs")));
        jvm.addAll(List.of(jvmArgs));
        Process p = launch(dir, jvm, "--config", cfg.toString());
        List<String> out = collect(p);
        String port = awaitPort(p, out);
        try (RawWebSocket session = RawWebSocket.connectAndHello("ws://127.0.0.1:" + port + "/ws")) {
            assertThat(session.messages).anyMatch(m -> m.type().equals("WELCOME"));
        }
        Path file = dir.resolve("logs").resolve("ringcast.log");
        p.toHandle().destroy();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as("the console too").anyMatch(l -> l.contains("NodeRuntime - Ringcast node stopped"));
        assertThat(file).exists();
        return Files.readAllLines(file);
    }

    @Test
    void theExampleLogbackConfigWritesTheNodeAndItsSessionsToARollingFile(@TempDir Path dir) throws Exception {
        List<String> log = runWithTheExampleLogbackConfig(dir);

        assertThat(log).anyMatch(l -> l.matches("\\d{4}-\\d\\d-\\d\\dT\\S+ INFO .*NodeRuntime - Ringcast node listening on .*"))
                .anyMatch(l -> l.matches(".* INFO .*SessionHandler - session \\S+ \\(client 'raw-test'\\) from /\\S+:\\d+ closed after \\d+ ms: .*"))
                .noneMatch(l -> l.contains(" opened from ")) // DEBUG: a line per open costs connects
                .anyMatch(l -> l.contains("Ringcast node stopped"));
    }

    @Test
    void sessionLinesAreQuietAtTheSessionLogLevelWarnAndTheNodesAreNot(@TempDir Path dir) throws Exception {
        List<String> log = runWithTheExampleLogbackConfig(dir, "-DRINGCAST_SESSION_LOG_LEVEL=WARN");

        assertThat(log).anyMatch(l -> l.contains("Ringcast node listening on"))
                .anyMatch(l -> l.contains("Ringcast node stopped"))
                .noneMatch(l -> l.contains("SessionHandler"));
    }
}
