package io.ringcast.it;

import static io.ringcast.it.ServerProcesses.JAR;
import static io.ringcast.it.ServerProcesses.awaitPort;
import static io.ringcast.it.ServerProcesses.collect;
import static io.ringcast.it.ServerProcesses.java;
import static io.ringcast.it.ServerProcesses.start;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.testkit.FreePorts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image's command line without the image: the Dockerfile's {@code ENTRYPOINT} and {@code CMD},
 * read from the Dockerfile, run against the built jar (the image's {@code java} and jar path
 * swapped for this JVM's and the build's) with configuration by environment variables, as a
 * container runs; then its {@code HEALTHCHECK} command, as Docker runs it, against that process.
 */
@Timeout(120)
class ContainerEntrypointTest {
    private static final Path DOCKERFILE = Path.of("..", "Dockerfile");

    /** Runs the health check command with {@code environment}, as Docker does in the container; its exit status. */
    private static int runHealthCheck(DockerfileStage image, Map<String, String> environment, Path workDir)
            throws Exception {
        Process check = start(image.healthCheck(), workDir, environment);
        List<String> out = collect(check);
        assertThat(check.waitFor(30, TimeUnit.SECONDS)).as("the health check ended: " + out).isTrue();
        return check.exitValue();
    }

    @Test
    void theImagesCommandRunsTheJarConfiguredByTheEnvironmentAndPassesItsHealthCheck(@TempDir Path workDir)
            throws Exception {
        DockerfileStage image = DockerfileStage.runtime(DOCKERFILE);
        List<String> inImage = image.command();
        String jarInImage = image.copiedTo("ringcast-server.jar");
        assertThat(inImage.get(0)).as("the image's java, on its PATH").isEqualTo("java");
        assertThat(inImage).contains("-XX:+ExitOnOutOfMemoryError", "-jar", jarInImage)
                .anyMatch(arg -> arg.startsWith("-XX:MaxRAMPercentage="));
        List<String> command = new ArrayList<>(inImage);
        command.set(0, java());
        command.set(command.indexOf(jarInImage), JAR.toAbsolutePath().toString());
        int port = FreePorts.pick();
        Map<String, String> environment = Map.of(
                "RINGCAST_SERVER_HOST", "127.0.0.1",
                "RINGCAST_SERVER_PORT", String.valueOf(port),
                "RINGCAST_FEATURES_COMPRESSION", "true");

        Process node = start(command, workDir, environment); // workDir: the image's WORKDIR, no config file in it
        List<String> out = collect(node);
        try {
            assertThat(awaitPort(node, out)).isEqualTo(String.valueOf(port));
            assertThat(runHealthCheck(image, environment, workDir)).as("the health check of a serving node").isZero();
            try (WireSocket ws = new WireSocket("ws://127.0.0.1:" + port + "/ws", "permessage-deflate", 0)) {
                assertThat(ws.negotiatedExtensions()).as("compression on by its variable").startsWith("permessage-deflate");
            }
            assertThat(out).anyMatch(l -> l.contains("Configuration: embedded defaults")
                    && l.contains("with environment overrides RINGCAST_FEATURES_COMPRESSION, RINGCAST_SERVER_HOST, "
                    + "RINGCAST_SERVER_PORT"));
            assertThat(out).as("the JVM flags the node asks for are given")
                    .noneMatch(l -> l.contains("started without -XX:+ExitOnOutOfMemoryError"));
        } finally {
            node.toHandle().destroy(); // SIGTERM, as docker stop sends
            assertThat(node.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s of SIGTERM").isTrue();
        }
        assertThat(node.exitValue()).as("a clean stop").isZero();
        assertThat(runHealthCheck(image, environment, workDir)).as("the health check with no node").isNotZero();
    }
}
