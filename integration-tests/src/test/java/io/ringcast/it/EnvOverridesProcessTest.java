package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.JAR;
import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static io.ringcast.it.ServerProcesses.java;
import static io.ringcast.it.ServerProcesses.start;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.testkit.FreePorts;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar started with {@code RINGCAST_*} environment variables, as a container or a unit file
 * starts it: they win over its file, are logged by name only, stay set over a hot reload of the
 * file, and one naming no key stops it.
 */
@Timeout(120)
class EnvOverridesProcessTest {
    private static final String SECRET = "env-test-secret-0123456789-abcdefghijklmnop";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static List<String> jar(Path config) {
        return List.of(java(), "-jar", JAR.toAbsolutePath().toString(), "--config", config.toString());
    }

    private static HttpResponse<String> health(int port) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void variablesSetThePortAndAToggleOverTheFileAndStaySetOverAHotReload(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("server.yaml");
        Files.writeString(config, "server: {host: 127.0.0.1, port: 0}\nfeatures: {compression: false}\n");
        int port = FreePorts.pick();
        Process p = start(jar(config), dir, Map.of(
                "RINGCAST_SERVER_PORT", String.valueOf(port),
                "RINGCAST_FEATURES_COMPRESSION", "true",
                "RINGCAST_SECURITY_JWTHS256SECRET", SECRET));
        List<String> out = collect(p);
        try {
            assertThat(awaitPort(p, out)).as("the variable's port, not the file's 0").isEqualTo(String.valueOf(port));
            HttpResponse<String> health = health(port);
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"");
            try (WireSocket ws = new WireSocket("ws://127.0.0.1:" + port + "/ws", "permessage-deflate", 0)) {
                assertThat(ws.negotiatedExtensions()).as("compression on by the variable").startsWith("permessage-deflate");
            }
            assertThat(out).anyMatch(l -> l.contains("Configuration: " + config + ", with environment overrides "
                    + "RINGCAST_FEATURES_COMPRESSION, RINGCAST_SECURITY_JWTHS256SECRET, RINGCAST_SERVER_PORT"));

            Files.writeString(config, "server: {host: 127.0.0.1, port: 0}\nfeatures: {compression: false, deltas: true}\n");
            io.ringcast.testkit.Await.until(() -> {
                try {
                    return health(port).body().contains("\"configReloads\":1");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }, Duration.ofSeconds(30), Duration.ofMillis(50), () -> "the edit of the file reloaded: " + out);
            assertThat(out).noneMatch(l -> l.contains("config reload refused") || l.contains("after a restart"));
            try (WireSocket ws = new WireSocket("ws://127.0.0.1:" + port + "/ws", "permessage-deflate", 0)) {
                assertThat(ws.negotiatedExtensions()).as("the variable still wins over the edited file")
                        .startsWith("permessage-deflate");
            }
        } finally {
            p.toHandle().destroy(); // SIGTERM
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s of SIGTERM").isTrue();
        }
        assertThat(p.exitValue()).isZero();
        assertThat(out).as("values are never logged").noneMatch(l -> l.contains(SECRET));
    }

    @Test
    void aVariableNamingNoKeyOfASectionStopsStartupNamingIt(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("server.yaml");
        Files.writeString(config, "server: {host: 127.0.0.1, port: 0}\n");

        Process p = start(jar(config), dir, Map.of("RINGCAST_SERVER_PROT", "8080"));
        List<String> out = collect(p);

        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("a bad config").isEqualTo(2);
        Await.until(() -> String.join("\n", out).contains("RINGCAST_SERVER_PROT"), "the message naming it: " + out);
        assertThat(out).anyMatch(l -> l.startsWith("ringcast: bad config: environment variable RINGCAST_SERVER_PROT: "
                + "names no key of section 'server'"));
    }
}
