package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ringcast.testkit.FreePorts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --target jetstream} end to end, short, against one real {@code nats-server} with JetStream
 * (Debian's: {@code scripts/test.sh} installs it, as {@code scripts/lib/jetstream.sh} does; skipped where none is on the PATH): the stream is
 * made, everything arrives once and in order, every publish is acked and its ack timed. Never asserts
 * a speed.
 */
class JetStreamLoadTest {
    @Test
    @Timeout(120)
    void aShortRunAgainstOneJetStreamServerIsCleanAndTimesItsAcks(@TempDir Path dir) throws Exception {
        assumeTrue(onPath("nats-server"), "no nats-server on the PATH");
        int port = FreePorts.pick();
        Process server = new ProcessBuilder("nats-server", "-js", "-a", "127.0.0.1", "-p", Integer.toString(port),
                "-sd", dir.resolve("store").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("nats.log").toFile()).start();
        try {
            awaitPort(port, server);
            Path out = dir.resolve("out");
            LoadGeneratorTest.Run r = LoadGeneratorTest.run("--target", "jetstream", "--servers",
                    "nats://127.0.0.1:" + port, "--subscribers", "3", "--topics", "20", "--publishers", "2",
                    "--rate", "200", "--duration", "2s", "--warmup", "500ms", "--server-pids",
                    Long.toString(server.pid()), "--out", out.toString());
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            assertThat(r.out()).contains("JetStream load 1n-2p-3s-20t-200B-jetstream-200ps")
                    .contains("JetStream stream " + JetStreamStream.NAME + " created: bench.>, file storage, replicas 1")
                    .contains("3 ordered-consumer subscribers");

            JsonNode result = LoadGeneratorTest.JSON.readTree(out.resolve("1n-2p-3s-20t-200B-jetstream-200ps.json").toFile());
            assertThat(result.at("/spec/target").asText()).isEqualTo("JETSTREAM");
            LoadGeneratorTest.assertCleanRun(result);
            assertThat(result.at("/deliveries/total").asLong()).isEqualTo(3 * result.at("/publishes/issued").asLong());
            // every measured publish's ack is timed, and a JetStream server has no wire figures of Ringcast's
            assertThat(result.at("/ackLatencyMs/count").asLong()).isEqualTo(result.at("/publishes/measured").asLong())
                    .isPositive();
            assertThat(result.at("/publishes/ackedPerSecond").asDouble()).isPositive();
            assertThat(result.at("/wire/known").asBoolean()).isFalse();
            assertThat(result.at("/serverCpu/rssBytes").asLong()).isPositive();
        } finally {
            server.destroy();
            if (!server.waitFor(10, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
        }
    }

    static boolean onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    /** Until the server accepts connections on {@code port} (it logs nothing else we could wait on). */
    static void awaitPort(int port, Process server) throws Exception {
        for (int i = 0; i < 300; i++) {
            assertThat(server.isAlive()).as("nats-server exited").isTrue();
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                TimeUnit.MILLISECONDS.sleep(50); // polling the port: a process gives no other sign of readiness
            }
        }
        throw new AssertionError("nats-server did not listen on " + port + " within 15 s");
    }
}
