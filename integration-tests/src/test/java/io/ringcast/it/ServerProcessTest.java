package io.ringcast.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runnable jar as an operator runs it: a real process, its output, its exit code.
 * Needs {@code server/target/ringcast-server.jar}, which the reactor builds before this module.
 */
@Timeout(120)
class ServerProcessTest {
    static final Path JAR = Path.of("..", "server", "target", "ringcast-server.jar");
    static final Pattern LISTENING = Pattern.compile("Ringcast listening on ws://[^/]+:(\\d+)/ws");

    private static Process launch(Path workDir, String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>(List.of(java, "-jar", JAR.toAbsolutePath().toString()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true).start();
    }

    private static List<String> collect(Process p) {
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (Exception ignored) {
                // the process ended
            }
        }, "process-output");
        t.setDaemon(true);
        t.start();
        return lines;
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
        String port = Await.value(() -> out.stream().map(LISTENING::matcher).filter(Matcher::find)
                .map(m -> m.group(1)).findFirst().orElse(null), () -> "the listening line: " + out);

        HttpResponse<String> health = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(health.body()).contains("\"status\":\"UP\"");

        p.toHandle().destroy(); // SIGTERM; Process.destroy() would also close our end of its output
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s of SIGTERM").isTrue();
        Await.until(() -> out.stream().anyMatch(l -> l.contains("Ringcast node stopped")), "the stop line (exit " + p.exitValue() + "): " + out);
        assertThat(out).noneMatch(l -> l.contains("Exception"));
    }
}
