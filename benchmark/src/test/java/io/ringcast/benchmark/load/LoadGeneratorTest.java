package io.ringcast.benchmark.load;

import static io.ringcast.server.ServerCounter.SLOW_CONSUMER_DISCONNECTS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.util.ResourceLeakDetector;
import io.ringcast.protocol.Transport;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.testkit.FailOnLeakExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The load generator end to end, short, against a real server on a real port: everything arrives
 * once and in order, every publish is acked, and the result files are written; with lean
 * subscribers (the default) and with the Java client's. Never asserts a speed: this runs beside
 * other builds on a small machine.
 */
class LoadGeneratorTest {
    static final ObjectMapper JSON = new ObjectMapper();

    record Run(int exitCode, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = LoadGenerator.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        System.out.print(out); // the run's own report, in the surefire output file
        System.err.print(err);
        return new Run(code, out.toString(), err.toString());
    }

    static void assertCleanRun(JsonNode result) {
        JsonNode c = result.get("correctness");
        assertThat(c.get("lost").asLong()).as("lost").isZero();
        assertThat(c.get("duplicated").asLong()).as("duplicated").isZero();
        assertThat(c.get("outOfOrder").asLong()).as("out of order").isZero();
        assertThat(c.get("clean").asBoolean()).isTrue();
        JsonNode p = result.get("publishes");
        assertThat(p.get("issued").asLong()).isPositive();
        assertThat(p.get("acked").asLong()).as("acked").isEqualTo(p.get("issued").asLong());
        assertThat(p.get("failed").asLong()).isZero();
        assertThat(result.get("latencyMs").get("count").asLong()).isPositive();
    }

    static RingcastServer startServer(String more) throws Exception {
        return RingcastServer.start(ConfigLoader.fromYaml("server:\n  host: 127.0.0.1\n  port: 0\n" + more
                + LoadGenerator.OPEN_TO_ANONYMOUS));
    }

    @Test
    @Timeout(60)
    void aShortLeanRunIsCleanAndMeasuresEveryDelivery(@TempDir Path out) throws Exception {
        try (RingcastServer server = startServer("")) {
            // under paranoid leak detection, as every test here unless said otherwise: small, so it stays quick
            Run r = run("--servers", server.webSocketUrl(), "--subscribers", "4", "--topics", "50", "--publishers", "2",
                    "--rate", "500", "--duration", "2s", "--warmup", "500ms", "--out", out.toString());
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            assertThat(r.out()).contains("4 lean subscribers").contains("(lean connections, all welcomed after");

            JsonNode result = JSON.readTree(out.resolve("1n-2p-4s-50t-200B-500ps.json").toFile());
            assertThat(result.at("/spec/subscriberClient").asText()).isEqualTo("LEAN");
            assertCleanRun(result);
            assertThat(result.get("deliveries").get("total").asLong())
                    .isEqualTo(4 * result.get("publishes").get("issued").asLong());
            // every measured delivery is in the histogram, and nothing else is
            assertThat(result.at("/latencyMs/count").asLong()).isEqualTo(result.at("/deliveries/measured").asLong())
                    .isPositive();
            JsonNode c = result.get("correctness");
            assertThat(c.get("subscriberFailures").asLong()).isZero();
            assertThat(c.get("unchecked").asLong()).isZero();
            assertThat(c.get("disconnects").asLong()).isZero();
            assertThat(c.get("subscriberErrors").asLong()).isZero();
            assertThat(server.stats().get(SLOW_CONSUMER_DISCONNECTS)).isZero();
        }
    }

    /**
     * The server gathers the updates that wait together for a session into one frame: at a few
     * thousand updates a second to 10 subscribers, many frames hold several, which a lean
     * subscriber must check one message at a time (LeanSubscriberTest does it without sockets).
     */
    @Test
    @Timeout(60)
    void aLeanRunChecksEveryUpdateOfFramesThatHoldMany(@TempDir Path out) throws Exception {
        try (RingcastServer server = startServer("")) {
            // sampled leak detection, as in the Java client's run below: paranoid at this scale is slow on 2 cores
            Run[] holder = new Run[1];
            FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.ADVANCED, () -> holder[0] = run(
                    "--servers", server.webSocketUrl(), "--subscribers", "10", "--topics", "100",
                    "--rate", "4000", "--duration", "3s", "--warmup", "1s", "--out", out.toString()));
            Run r = holder[0];
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();

            JsonNode result = JSON.readTree(out.resolve("1n-4p-10s-100t-200B-4000ps.json").toFile());
            assertCleanRun(result);
            assertThat(result.get("deliveries").get("total").asLong())
                    .isEqualTo(10 * result.get("publishes").get("issued").asLong());
            assertThat(result.at("/latencyMs/count").asLong()).isEqualTo(result.at("/deliveries/measured").asLong());
            // the server's own count: fewer frames than deliveries, so some frames held several updates
            JsonNode wire = result.get("wire");
            assertThat(wire.get("known").asBoolean()).isTrue();
            assertThat(wire.get("frames").asLong()).isPositive().isLessThan(wire.get("deliveries").asLong());
        }
    }

    /**
     * Views end to end against the real server: JSON values, then the same with the subscribers
     * spread over 3 view shapes. Every update reaches every subscriber through its view (their
     * filters pass every value, and the counter makes every projection new), checked as plain
     * deliveries are; what the server wrote is the projections, not the 200-byte values.
     */
    @Test
    @Timeout(60)
    void aLeanRunWithViewShapesGetsEveryUpdateProjectedAsThePlainJsonRunGetsItWhole(@TempDir Path out)
            throws Exception {
        try (RingcastServer server = startServer("")) {
            String[] args = {"--servers", server.webSocketUrl(), "--value-format", "json", "--subscribers", "6",
                    "--topics", "20", "--publishers", "1", "--rate", "500", "--duration", "1s", "--warmup", "500ms",
                    "--out", out.toString()};
            Run plain = run(args);
            assertThat(plain.exitCode()).as(plain.out() + plain.err()).isZero();
            Run views = run(concat(args, "--view-shapes", "3"));
            assertThat(views.exitCode()).as(views.out() + views.err()).isZero();
            assertThat(views.out()).contains("round robin over 3 view shapes").contains("JSON (10 fields)");

            JsonNode whole = JSON.readTree(out.resolve("1n-1p-6s-20t-200B-json-500ps.json").toFile());
            JsonNode viewed = JSON.readTree(out.resolve("1n-1p-6s-20t-200B-json-3v-500ps.json").toFile());
            for (JsonNode result : new JsonNode[] {whole, viewed}) {
                assertCleanRun(result);
                assertThat(result.at("/deliveries/total").asLong()).isEqualTo(6 * result.at("/publishes/issued").asLong());
                assertThat(result.at("/correctness/subscriberFailures").asLong()).isZero();
            }
            // the second run's replies: each topic's last value of the first run, through each subscriber's view
            assertThat(whole.at("/correctness/foreignValues").asLong()).isZero();
            assertThat(viewed.at("/correctness/foreignValues").asLong()).isEqualTo(6 * 20);
            assertThat(whole.at("/spec/viewShapes").asInt()).isZero();
            assertThat(viewed.at("/spec/viewShapes").asInt()).isEqualTo(3);
            assertThat(viewed.at("/spec/valueFormat").asText()).isEqualTo("JSON");
            // {"r":..,"t":..,"c":..,"s":..,"fN":..} is under 90 bytes; the whole value 200
            assertThat(whole.at("/wire/bytesPerDelivery").asDouble()).isGreaterThan(200);
            assertThat(viewed.at("/wire/bytesPerDelivery").asDouble()).isLessThan(120);
        }
    }

    /** The Java client's subscribers through views: the listener reads JSON from its copies. */
    @Test
    @Timeout(60)
    void aJavaClientRunWithViewShapesIsClean(@TempDir Path out) throws Exception {
        try (RingcastServer server = startServer("")) {
            Run r = run("--servers", server.webSocketUrl(), "--subscriber-client", "java", "--value-format", "json",
                    "--view-shapes", "2", "--subscribers", "4", "--topics", "20", "--publishers", "1", "--rate", "500",
                    "--duration", "1s", "--warmup", "500ms", "--out", out.toString());
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            JsonNode result = JSON.readTree(out.resolve("1n-1p-4s-20t-200B-json-2v-500ps.json").toFile());
            assertCleanRun(result);
            assertThat(result.at("/deliveries/total").asLong()).isEqualTo(4 * result.at("/publishes/issued").asLong());
            assertThat(result.at("/wire/bytesPerDelivery").asDouble()).isLessThan(120);
        }
    }

    static String[] concat(String[] args, String... more) {
        String[] all = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }

    /** Deltas are what a lean subscriber cannot check: the run says so and is not clean. */
    @Test
    @Timeout(60)
    void aLeanRunAgainstDeltasIsNotCleanAndNamesTheJavaClient(@TempDir Path out) throws Exception {
        try (RingcastServer server = startServer("features:\n  deltas: true\n")) {
            // JSON-like padding: only the header changes from one value to the next, so deltas are smaller
            Run r = run("--servers", server.webSocketUrl(), "--subscribers", "3", "--topics", "20", "--publishers",
                    "1", "--padding", "text", "--rate", "200", "--duration", "1s", "--warmup", "500ms",
                    "--out", out.toString());
            assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(LoadGenerator.EXIT_NOT_CLEAN);
            assertThat(r.out()).contains("NOT CLEAN").contains("--subscriber-client java");

            JsonNode c = JSON.readTree(out.resolve("1n-1p-3s-20t-200B-200ps.json").toFile()).get("correctness");
            assertThat(c.get("clean").asBoolean()).isFalse();
            assertThat(c.get("subscriberFailures").asLong()).isEqualTo(3);
            assertThat(c.get("firstFailure").asText()).contains("delta").contains("--subscriber-client java");
            // what the stopped subscribers never received is unchecked, not lost
            assertThat(c.get("lost").asLong()).isZero();
            assertThat(c.get("unchecked").asLong()).isPositive();
            assertThat(c.get("disconnects").asLong()).isZero();

            // and what the message says works: the Java client applies the deltas, and the run is clean
            Path javaOut = out.resolve("java");
            Run java = run("--servers", server.webSocketUrl(), "--subscriber-client", "java", "--subscribers", "3",
                    "--topics", "20", "--publishers", "1", "--padding", "text", "--rate", "200", "--duration", "1s",
                    "--warmup", "500ms", "--out", javaOut.toString());
            assertThat(java.exitCode()).as(java.out() + java.err()).isZero();
            JsonNode javaResult = JSON.readTree(javaOut.resolve("1n-1p-3s-20t-200B-200ps.json").toFile());
            assertCleanRun(javaResult);
            assertThat(javaResult.at("/spec/subscriberClient").asText()).isEqualTo("JAVA");
            assertThat(javaResult.at("/wire/bytesPerDelivery").asDouble()).as("deltas on the wire").isLessThan(200);
        }
    }

    @Test
    @Timeout(60)
    void aShortRunDeliversEverythingOnceInOrderAndWritesItsFiles(@TempDir Path out) throws Exception {
        try (RingcastServer server = RingcastServer.start(
                ConfigLoader.fromYaml("server:\n  host: 127.0.0.1\n  port: 0\n" + LoadGenerator.OPEN_TO_ANONYMOUS))) {
            // Leak detection samples here (advanced: 1 buffer in 128, with access records): paranoid
            // tracking of 80,000 deliveries makes this test several times slower on 2 cores, and the
            // sweep test below runs the same path under paranoid.
            Run[] holder = new Run[1];
            FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.ADVANCED, () -> holder[0] = run(
                    "--servers", server.webSocketUrl(), "--subscriber-client", "java", "--subscribers", "10",
                    "--topics", "100", "--rate", "2000", "--duration", "3s", "--warmup", "1s", "--out", out.toString(),
                    "--server-pids", Long.toString(ProcessHandle.current().pid())));
            Run r = holder[0];
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();

            String name = "1n-4p-10s-100t-200B-2000ps";
            JsonNode result = JSON.readTree(out.resolve(name + ".json").toFile());
            assertCleanRun(result);
            // 10 subscribers on '#' get every one of the 8,000 publishes (1 s warm-up + 3 s at 2,000/s)
            assertThat(result.get("deliveries").get("total").asLong())
                    .isEqualTo(10 * result.get("publishes").get("issued").asLong());
            assertThat(Files.readString(out.resolve(name + ".hgrm"))).contains("Percentile").contains("#[Max");
            assertPng(out.resolve(name + "-latency.png"));
            assertThat(server.stats().get(SLOW_CONSUMER_DISCONNECTS)).isZero();
            // the server's own count of what it wrote: a 200-byte value, its UPDATE header and the frame header
            assertThat(result.get("wire").get("known").asBoolean()).isTrue();
            assertThat(result.get("wire").get("bytesPerDelivery").asDouble()).isBetween(200.0, 240.0);
            // updates waiting together for a session may share a frame: at most one frame a delivery
            assertThat(result.get("wire").get("framesPerDelivery").asDouble()).isGreaterThan(0.0).isLessThanOrEqualTo(1.0);
            assertThat(result.get("wire").get("frames").asLong()).isPositive();
            // the server is in this process: its CPU and memory are this process's, read from /proc
            JsonNode serverCpu = result.get("serverCpu");
            assertThat(serverCpu.get("known").asBoolean()).isTrue();
            assertThat(serverCpu.get("deliveriesPerCoreSecond").asDouble()).isPositive();
            assertThat(serverCpu.get("cpuNsPerDelivery").asDouble()).isPositive();
            assertThat(serverCpu.get("peakRssBytes").asLong()).isGreaterThan(10L << 20);
            // a steady run pauses for about the time between two publishes, never for nothing
            assertThat(result.get("pauses").get("longestAckGapMs").asDouble()).isPositive();
            assertThat(result.get("pauses").get("longestDeliveryGapMs").asDouble()).isPositive();
            assertThat(result.get("pauses").get("ackGapEndEpochMs").asLong()).isPositive();
            // the e2e script's summary: one row for this run, its figures taken from the JSON
            assertThat(LoadReport.summary(out)).contains("| 10 | 2,000 |")
                    .contains("| 0 / 0 / 0 |").doesNotContain("| set | sweep |");
        }
    }

    @Test
    @Timeout(60)
    void aShortSweepReportsItsStepsAndCharts(@TempDir Path out) throws Exception {
        Run r = run("--embedded", "--subscriber-client", "java", "--sweep", "--sweep-start", "500", "--sweep-step", "500",
                "--sweep-max", "1000",
                "--subscribers", "5", "--topics", "50", "--publishers", "2", "--duration", "1s", "--warmup", "500ms",
                "--out", out.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();

        JsonNode sweep = JSON.readTree(out.resolve("1n-2p-5s-50t-200B-sweep.json").toFile());
        // a step may miss the speed criteria on a busy machine, so the sweep may stop after one step
        assertThat(sweep.get("steps").size()).isBetween(1, 2);
        for (JsonNode step : sweep.get("steps")) {
            assertCleanRun(step.get("result"));
            assertThat(out.resolve(step.get("result").get("scenario").asText() + ".hgrm")).exists();
        }
        assertPng(out.resolve("1n-2p-5s-50t-200B-sweep.png"));
        assertPng(out.resolve("1n-2p-5s-50t-200B-sweep-latency.png"));
        assertThat(r.out()).contains("max clean rate");
        assertThat(LoadReport.summary(out)).contains("| set | sweep |").contains("1n-2p-5s-50t-200B");
    }

    /** The generator's clients on each transport this JVM runs, against the server on the default one. */
    @ParameterizedTest
    @EnumSource(value = Transport.class, names = "AUTO", mode = EnumSource.Mode.EXCLUDE)
    @Timeout(60)
    void theClientsRunOnTheTransportAskedFor(Transport transport, @TempDir Path out) throws Exception {
        assumeTrue(transport.isAvailable(), () -> transport + " is not available: " + transport.unavailabilityCause());
        try (RingcastServer server = RingcastServer.start(
                ConfigLoader.fromYaml("server:\n  host: 127.0.0.1\n  port: 0\n" + LoadGenerator.OPEN_TO_ANONYMOUS))) {
            Run r = run("--servers", server.webSocketUrl(), "--transport", transport.configName(), "--subscribers", "3",
                    "--topics", "20", "--publishers", "2", "--rate", "500", "--duration", "1s", "--warmup", "200ms",
                    "--out", out.toString());
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();

            JsonNode result = JSON.readTree(out.resolve("1n-2p-3s-20t-200B-500ps.json").toFile());
            assertCleanRun(result);
            assertThat(result.get("spec").get("transport").asText()).isEqualTo(transport.configName());
            assertThat(r.out()).contains("2 event loops on " + transport.configName());
        }
    }

    @Test
    void aBadCommandLineExitsWithTwoAndSaysWhy() {
        Run badTransport = run("--servers", "ws://127.0.0.1:1/ws", "--transport", "iouring");
        assertThat(badTransport.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(badTransport.err()).contains("'iouring' is not one of auto, nio, epoll, io_uring");

        Run neither = run("--rate", "10");
        assertThat(neither.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(neither.err()).contains("--servers or --embedded");

        Run tooFewTopics = run("--servers", "ws://127.0.0.1:1/ws", "--topics", "2", "--publishers", "4");
        assertThat(tooFewTopics.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(tooFewTopics.err()).contains("--publishers");

        Run unknownClient = run("--servers", "ws://127.0.0.1:1/ws", "--subscriber-client", "go");
        assertThat(unknownClient.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(unknownClient.err()).contains("'go' is not one of lean, java");

        Run viewsOfBinary = run("--servers", "ws://127.0.0.1:1/ws", "--view-shapes", "10");
        assertThat(viewsOfBinary.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(viewsOfBinary.err()).contains("--view-shapes").contains("--value-format json");

        Run unknownFormat = run("--servers", "ws://127.0.0.1:1/ws", "--value-format", "xml");
        assertThat(unknownFormat.exitCode()).isEqualTo(LoadGenerator.EXIT_USAGE);
        assertThat(unknownFormat.err()).contains("'xml' is not one of binary, json");
    }

    static void assertPng(Path file) throws Exception {
        assertThat(file).exists();
        byte[] head = java.util.Arrays.copyOf(Files.readAllBytes(file), 4);
        assertThat(head).containsExactly(0x89, 'P', 'N', 'G');
    }
}
