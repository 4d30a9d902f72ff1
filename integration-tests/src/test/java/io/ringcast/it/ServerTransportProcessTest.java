package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static io.ringcast.it.ServerProcesses.launch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.protocol.Transport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code server.transport} in the runnable jar, as an operator runs it: the shaded jar loads the
 * native libraries it carries ({@code auto} runs a native transport here), and a transport named
 * that the JVM cannot run stops start-up naming the key and the native library's reason. A JVM is
 * made unable to run the native transports with Netty's own switch,
 * {@code -Dio.netty.transport.noNative=true}: nothing of ours is faked.
 */
@Timeout(120)
class ServerTransportProcessTest {
    static final String NO_NATIVE = "-Dio.netty.transport.noNative=true";

    private static Path config(Path dir, String transport) throws Exception {
        return Files.writeString(dir.resolve("node.yaml"), "server:\n  host: 127.0.0.1\n  port: 0\n  transport: "
                + transport + "\n");
    }

    private static String healthTransport(String port) throws Exception {
        HttpResponse<String> health = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        return new ObjectMapper().readTree(health.body()).get("transport").asText();
    }

    /** Starts the jar, waits for it to listen, returns what /health and the start-up line say, stops it. */
    private static void assertRunsOn(Path dir, List<String> jvmArgs, String configured, Transport expected)
            throws Exception {
        Process p = launch(dir, jvmArgs, "--config", config(dir, configured).toString());
        List<String> out = collect(p);
        try {
            String port = awaitPort(p, out);
            assertThat(healthTransport(port)).isEqualTo(expected.configName());
            assertThat(out).anyMatch(l -> l.contains("I/O threads on " + expected.configName()
                    + " (server.transport " + configured + ")"));
        } finally {
            p.toHandle().destroy();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void theJarRunsTheFirstAvailableTransportOfAutoFromTheLibrariesItCarries(@TempDir Path dir) throws Exception {
        assertRunsOn(dir, List.of(), "auto", Transport.AUTO.resolve("transport"));
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"EPOLL", "IO_URING"})
    void theJarRunsANativeTransportNamed(Transport transport, @TempDir Path dir) throws Exception {
        assumeTrue(transport.isAvailable(), () -> transport + " is not available: " + transport.unavailabilityCause());
        assertRunsOn(dir, List.of(), transport.configName(), transport);
    }

    @Test
    void withoutNativeTransportsAutoIsNio(@TempDir Path dir) throws Exception {
        assertRunsOn(dir, List.of(NO_NATIVE), "auto", Transport.NIO);
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"EPOLL", "IO_URING"})
    void aNativeTransportNamedThatTheJvmCannotRunStopsStartUpNamingTheKeyAndTheReason(Transport transport,
                                                                                    @TempDir Path dir) throws Exception {
        Process p = launch(dir, List.of(NO_NATIVE), "--config", config(dir, transport.configName()).toString());
        List<String> out = collect(p);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("a bad config: " + out).isEqualTo(2);
        String expected = "key 'server.transport' is " + transport.configName() + ", which is not available in this "
                + "JVM: java.lang.UnsupportedOperationException: Native transport was explicit disabled with "
                + NO_NATIVE + "; auto takes the first available of ";
        Await.until(() -> String.join("\n", out).contains(expected), "the message naming the key and the reason: " + out);
        assertThat(out).noneMatch(l -> l.contains("listening"));
    }
}
