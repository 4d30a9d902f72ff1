package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.ringcast.testkit.FreePorts;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --target redis} end to end, short, against one real {@code redis-server} (Debian's:
 * {@code scripts/test.sh} installs it; where there is none on the PATH these tests fail and say to
 * install it): everything arrives once and in order, every publish is acked and its ack timed, the
 * server's CPU and memory are read by its pid; and a connection Redis drops fails the run with a
 * message that says why. Never asserts a speed.
 */
class RedisLoadTest {
    @Test
    @Timeout(120)
    void aShortRunAgainstOneRedisServerIsCleanAndDeliversEveryValue(@TempDir Path dir) throws Exception {
        try (RedisServer redis = RedisServer.start(dir)) {
            Path out = dir.resolve("out");
            LoadGeneratorTest.Run r = LoadGeneratorTest.run(redis.args("--subscribers", "3", "--topics", "20",
                    "--publishers", "2", "--rate", "300", "--duration", "2s", "--warmup", "500ms", "--out",
                    out.toString()));
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            assertThat(r.out()).contains("Redis load 1n-2p-3s-20t-200B-redis-300ps")
                    .contains("3 subscribers confirmed in").contains("(PSUBSCRIBE bench.* on Redis)")
                    .contains("3 PSUBSCRIBE bench.* subscribers");

            JsonNode result = LoadGeneratorTest.JSON.readTree(out.resolve("1n-2p-3s-20t-200B-redis-300ps.json").toFile());
            assertThat(result.at("/spec/target").asText()).isEqualTo("REDIS");
            LoadGeneratorTest.assertCleanRun(result);
            // every value to every subscriber, the warm-up's included
            assertThat(result.at("/deliveries/total").asLong()).isEqualTo(3 * result.at("/publishes/issued").asLong());
            // every measured publish's ack (its PUBLISH reply) is timed; Redis has no wire figures of Ringcast's
            assertThat(result.at("/ackLatencyMs/count").asLong()).isEqualTo(result.at("/publishes/measured").asLong())
                    .isPositive();
            assertThat(result.at("/wire/known").asBoolean()).isFalse();
            assertThat(result.at("/serverCpu/known").asBoolean()).isTrue();
            assertThat(result.at("/serverCpu/rssBytes").asLong()).isPositive();
            assertThat(result.at("/serverCpu/peakRssBytes").asLong()).isPositive();
            assertThat(result.has("subscribersConfirmedMs")).isTrue();
            assertThat(LoadReport.summary(out)).contains("| 3 | 300 |").contains("| 0 / 0 / 0 |");
        }
    }

    @Test
    @Timeout(120)
    void aSubscriberWhoseConnectionRedisDropsFailsTheRunAndSaysWhy(@TempDir Path dir) throws Exception {
        LoadGeneratorTest.Run r = runAndDrop(dir, "subscribers confirmed", "CLIENT KILL TYPE pubsub");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(LoadGenerator.EXIT_NOT_CLEAN);
        assertThat(r.out()).contains("NOT CLEAN").contains("2 subscriber(s) stopped")
                .contains("lost its connection to redis://127.0.0.1:").contains(RedisSubscriber.NO_RESEND);
    }

    @Test
    @Timeout(120)
    void aPublisherWhoseConnectionRedisDropsFailsTheRunAndSaysWhy(@TempDir Path dir) throws Exception {
        LoadGeneratorTest.Run r = runAndDrop(dir, "publishing", "CLIENT KILL TYPE normal");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(LoadGenerator.EXIT_RUN_FAILED);
        assertThat(r.err()).contains("redis publisher 0 lost its connection to redis://127.0.0.1:")
                .contains("Redis pub/sub keeps no message");
    }

    /**
     * A short run of two subscribers and a publisher, whose connections Redis drops with {@code kill}
     * (a {@code CLIENT KILL}) once the generator's output shows {@code marker}.
     */
    static LoadGeneratorTest.Run runAndDrop(Path dir, String marker, String kill) throws Exception {
        try (RedisServer redis = RedisServer.start(dir)) {
            return runUntil(marker, () -> redis.command(kill), redis.args("--subscribers", "2", "--topics", "10",
                    "--publishers", "1", "--rate", "200", "--duration", "1s", "--warmup", "500ms", "--out",
                    dir.resolve("out").toString()));
        }
    }

    /**
     * Runs the generator on a thread of its own, and {@code action} on this one once its output
     * has shown {@code marker}; the run's outcome once it ended.
     */
    static LoadGeneratorTest.Run runUntil(String marker, ThrowingAction action, String... args) throws Exception {
        CompletableFuture<Void> seen = new CompletableFuture<>();
        StringWriter out = new StringWriter() {
            @Override
            public void flush() { // the generator's writer flushes after every line it prints
                if (!seen.isDone() && getBuffer().indexOf(marker) >= 0) {
                    seen.complete(null);
                }
            }
        };
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(
                () -> LoadGenerator.run(args, new PrintWriter(out, true), new PrintWriter(err, true)));
        CompletableFuture.anyOf(seen, code).get(); // the run may end before it, which the assertions then show
        if (seen.isDone()) {
            action.run();
        }
        int exit = code.get();
        System.out.print(out);
        System.err.print(err);
        return new LoadGeneratorTest.Run(exit, out.toString(), err.toString());
    }

    @FunctionalInterface
    interface ThrowingAction {
        void run() throws Exception;
    }

    /**
     * One {@code redis-server} of its defaults on a free port of 127.0.0.1, persistence off, in a
     * directory of the test's; its log in {@code redis.log} there. Ready when {@link #start} returns.
     */
    static final class RedisServer implements AutoCloseable {
        private final Process process;
        private final int port;

        private RedisServer(Process process, int port) {
            this.process = process;
            this.port = port;
        }

        static RedisServer start(Path dir) throws Exception {
            assertThat(JetStreamLoadTest.onPath("redis-server"))
                    .as("redis-server is not on the PATH: install it (apt-get install -y redis-server; scripts/test.sh"
                            + " installs it when missing)").isTrue();
            int port = FreePorts.pick();
            Process process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--dir", dir.toString())
                    .redirectErrorStream(true).start();
            RedisServer server = new RedisServer(process, port);
            CompletableFuture<Void> ready = new CompletableFuture<>();
            Path log = dir.resolve("redis.log");
            Thread reader = new Thread(() -> copyLog(process, log, ready), "redis-server-log");
            reader.setDaemon(true);
            reader.start();
            try {
                ready.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                server.close();
                throw new AssertionError("redis-server did not start: " + e.getMessage() + "; its log: "
                        + (Files.exists(log) ? Files.readString(log) : "none"), e);
            }
            return server;
        }

        /** Copies the server's output to {@code log}, and completes {@code ready} once it says it accepts connections. */
        private static void copyLog(Process process, Path log, CompletableFuture<Void> ready) {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8)); Writer file = Files.newBufferedWriter(log)) {
                for (String line; (line = lines.readLine()) != null; ) {
                    file.write(line);
                    file.write('\n');
                    file.flush();
                    if (line.contains("Ready to accept connections")) {
                        ready.complete(null);
                    }
                }
            } catch (IOException e) {
                ready.completeExceptionally(e);
            }
            ready.completeExceptionally(new IllegalStateException("redis-server exited before it was ready"));
        }

        String url() {
            return "redis://127.0.0.1:" + port;
        }

        /** The generator's arguments for a run against this server, its pid measured, then {@code more}. */
        String[] args(String... more) {
            return LoadGeneratorTest.concat(new String[] {"--target", "redis", "--servers", url(), "--server-pids",
                    Long.toString(process.pid())}, more);
        }

        /** Sends {@code command} inline and returns Redis's one-line reply. */
        String command(String command) throws IOException {
            try (Socket s = new Socket("127.0.0.1", port)) {
                OutputStream o = s.getOutputStream();
                o.write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
                o.flush();
                String reply = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
                        .readLine();
                assertThat(reply).as("reply to " + command).startsWith(":");
                return reply;
            }
        }

        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
