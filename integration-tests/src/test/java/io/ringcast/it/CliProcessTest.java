package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import at.favre.lib.crypto.bcrypt.BCrypt;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar's {@code sub}, {@code pub} and {@code remove} commands as a user runs them: real processes of the jar
 * against a real node process (the jar too), their output, their exit status. The node runs the
 * embedded defaults (anonymous sessions hold the {@code demo} role: {@code demo/#} only) plus one
 * principal. Needs {@code server/target/ringcast-server.jar}, which the reactor builds before this module.
 */
@Timeout(120)
class CliProcessTest {
    private static final String ALICE_PASSWORD = "alice's long password";
    private static final long EXIT_WAIT_S = 60;

    @TempDir
    static Path dir;
    private static Process node;
    private static String url;

    /** A run of a command: the process, its standard output and standard error. */
    record Run(Process process, OutputLines out, OutputLines err) {
        /** Waits for the end and returns the exit status. */
        int exitStatus() throws InterruptedException {
            assertThat(process.waitFor(EXIT_WAIT_S, TimeUnit.SECONDS)).as("ended; stderr so far: " + err.lines).isTrue();
            return process.exitValue();
        }

        /** Every line of standard output, once the process closed it. */
        List<String> outLines() throws InterruptedException {
            return out.all(EXIT_WAIT_S);
        }

        /** Standard error, once the process closed it. */
        String errText() throws InterruptedException {
            return String.join("\n", err.all(EXIT_WAIT_S));
        }

        /** Waits until standard error has a line containing {@code text}. */
        void awaitErr(String text) {
            Await.until(() -> err.lines.stream().anyMatch(l -> l.contains(text)),
                    "'" + text + "' on standard error; so far: " + err.lines + ", alive " + process.isAlive());
        }
    }

    @BeforeAll
    static void startNode() throws Exception {
        String hash = BCrypt.withDefaults().hashToString(10, ALICE_PASSWORD.toCharArray());
        Path cfg = dir.resolve("node.yaml");
        Files.writeString(cfg, "server:\n  host: 127.0.0.1\n  port: 0\n"
                + "security:\n  principals:\n    - name: alice\n      passwordHash: \"" + hash + "\"\n"
                + "      roles: [demo]\n");
        node = ServerProcesses.launch(dir, "--config", cfg.toString());
        url = "ws://127.0.0.1:" + ServerProcesses.awaitPort(node, ServerProcesses.collect(node)) + "/ws";
    }

    @AfterAll
    static void stopNode() throws Exception {
        if (node != null) {
            node.toHandle().destroy();
            assertThat(node.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void subWithCountPrintsTheThreeValuesPubSentAsArgumentsInOrderWithTheirSequences() throws Exception {
        Run sub = cli(null, "sub", url, "demo/args/#", "--count", "3");
        sub.awaitErr("subscribed to 'demo/args/#'");

        Run pub = cli(null, "pub", url, "demo/args/t", "one", "two", "three and four");

        assertThat(pub.exitStatus()).as("pub's status; stderr: " + pub.err.lines).isZero();
        assertThat(sub.exitStatus()).as("sub's status after --count 3; stderr: " + sub.err.lines).isZero();
        assertThat(sub.outLines()).containsExactly("demo/args/t 1 one", "demo/args/t 2 two", "demo/args/t 3 three and four");
        assertThat(pub.outLines()).isEmpty();
    }

    @Test
    void pubWithoutValuesPublishesEachLineOfStandardInputUntilItsEnd() throws Exception {
        Run sub = cli(null, "sub", url, "demo/stdin/t", "-n", "3", "--format", "json");
        sub.awaitErr("subscribed");

        Run pub = cli("first\n\"quoted\" second\nthird\ttabbed\n", "pub", url, "demo/stdin/t");

        assertThat(pub.exitStatus()).as("pub's status; stderr: " + pub.err.lines).isZero();
        assertThat(sub.exitStatus()).isZero();
        assertThat(sub.outLines()).containsExactly(
                "{\"topic\":\"demo/stdin/t\",\"sequence\":1,\"kind\":\"UPDATE\",\"value\":\"first\"}",
                "{\"topic\":\"demo/stdin/t\",\"sequence\":2,\"kind\":\"UPDATE\",\"value\":\"\\\"quoted\\\" second\"}",
                "{\"topic\":\"demo/stdin/t\",\"sequence\":3,\"kind\":\"UPDATE\",\"value\":\"third\\ttabbed\"}");
    }

    @Test
    void binaryValuesGoInAndComeOutInTheEncodingAsked() throws Exception {
        Run pub = cli(null, "pub", url, "demo/binary/t", "--value-encoding", "hex", "00ff0a", "7f");
        assertThat(pub.exitStatus()).as("stderr: " + pub.err.lines).isZero();

        Run sub = cli(null, "sub", url, "demo/binary/t", "-n", "1", "--value-encoding", "base64");

        assertThat(sub.exitStatus()).isZero();
        assertThat(sub.outLines()).containsExactly("demo/binary/t 2 fw=="); // the snapshot: the last value, 0x7f
    }

    @Test
    void aPublishTheAnonymousRoleMayNotMakeExitsFourWithTheErrorCode() throws Exception {
        Run pub = cli(null, "pub", url, "private/t", "v1", "v2");

        assertThat(pub.exitStatus()).isEqualTo(4);
        assertThat(pub.errText()).contains("value 1: PERMISSION_DENIED", "'private/t'", "0 acked; none sent after it");
        assertThat(pub.outLines()).isEmpty();
    }

    @Test
    void aSubscriptionTheAnonymousRoleMayNotMakeExitsFourWithTheErrorCode() throws Exception {
        Run sub = cli(null, "sub", url, "private/#");

        assertThat(sub.exitStatus()).isEqualTo(4);
        assertThat(sub.errText()).contains("PERMISSION_DENIED: subscription to 'private/#' refused");
    }

    @Test
    void removePrintsHowManyTopicsWentAndSubPrintsALineForEachThenTheNewIncarnationFromOne() throws Exception {
        Run text = cli(null, "sub", url, "demo/rm/#", "-n", "5");
        Run json = cli(null, "sub", url, "demo/rm/a", "-n", "3", "--format", "json");
        text.awaitErr("subscribed to 'demo/rm/#'");
        json.awaitErr("subscribed to 'demo/rm/a'");
        assertThat(cli(null, "pub", url, "demo/rm/a", "one").exitStatus()).isZero();
        assertThat(cli(null, "pub", url, "demo/rm/b", "first", "second").exitStatus()).isZero();

        Run remove = cli(null, "remove", url, "demo/rm/#");

        assertThat(remove.exitStatus()).as("remove's status; stderr: " + remove.err.lines).isZero();
        assertThat(remove.outLines()).containsExactly("removed 2 topics matching 'demo/rm/#'");
        assertThat(remove.errText()).isEmpty();
        assertThat(cli(null, "pub", url, "demo/rm/a", "again").exitStatus()).isZero();
        assertThat(text.exitStatus()).as("sub's status after -n 5; stderr: " + text.err.lines).isZero();
        List<String> lines = text.outLines();
        assertThat(lines.subList(0, 3)).containsExactly("demo/rm/a 1 one", "demo/rm/b 1 first", "demo/rm/b 2 second");
        assertThat(lines.subList(3, 5)).as("one removal line per topic, in the server's order of removal")
                .containsExactlyInAnyOrder("demo/rm/a removed after 1", "demo/rm/b removed after 2");
        assertThat(json.exitStatus()).as("json sub's status; stderr: " + json.err.lines).isZero();
        assertThat(json.outLines()).containsExactly(
                "{\"topic\":\"demo/rm/a\",\"sequence\":1,\"kind\":\"UPDATE\",\"value\":\"one\"}",
                "{\"topic\":\"demo/rm/a\",\"sequence\":1,\"kind\":\"REMOVED\"}",
                "{\"topic\":\"demo/rm/a\",\"sequence\":1,\"kind\":\"UPDATE\",\"value\":\"again\"}");

        Run again = cli(null, "remove", url, "demo/rm/a");
        Run none = cli(null, "remove", url, "demo/rm/nothing/#");
        assertThat(again.exitStatus()).isZero();
        assertThat(again.outLines()).containsExactly("removed 1 topic matching 'demo/rm/a'");
        assertThat(none.exitStatus()).as("a selector that matches nothing is no failure").isZero();
        assertThat(none.outLines()).containsExactly("removed 0 topics matching 'demo/rm/nothing/#'");
    }

    @Test
    void aRemovalTheAnonymousRoleMayNotMakeExitsFourWithTheErrorCodeAndReason() throws Exception {
        Run remove = cli(null, "remove", url, "private/#");

        assertThat(remove.exitStatus()).isEqualTo(4);
        assertThat(remove.errText()).isEqualTo("ringcast: PERMISSION_DENIED: remove of 'private/#' refused: the "
                + "session's roles grant publishing to no topic it can match");
        assertThat(remove.outLines()).isEmpty();
    }

    /**
     * A selector that breaks a rule of every server is refused by the CLI itself (2, nothing sent); one
     * that only this server's limits refuse (17 segments; limits.maxPathDepth is 16) by the server (4).
     */
    @Test
    void aBadRemovalSelectorExitsTwoBeforeConnectingAndOneTheServerRefusesExitsFour() throws Exception {
        Run local = cli(null, "remove", url, "demo/#/x");
        String deep = "demo/" + "x/".repeat(15) + "#";
        Run refused = cli(null, "remove", url, deep);

        assertThat(local.exitStatus()).isEqualTo(2);
        assertThat(local.errText()).isEqualTo("ringcast: invalid selector 'demo/#/x': '#' must be the last segment");
        assertThat(refused.exitStatus()).as("stderr: " + refused.err.lines).isEqualTo(4);
        assertThat(refused.errText()).startsWith("ringcast: INVALID_SELECTOR: ").contains(deep);
        assertThat(refused.outLines()).isEmpty();
    }

    @Test
    void aUrlThatIsNotWebSocketExitsTwoNamingIt() throws Exception {
        String http = url.replace("ws://", "http://");

        Run pub = cli(null, "pub", http, "demo/t", "v");

        assertThat(pub.exitStatus()).isEqualTo(2);
        assertThat(pub.errText()).isEqualTo("ringcast: addresses: '" + http + "' must start with ws:// or wss://");
    }

    @Test
    void aServerThatIsNotThereExitsOneNamingTheAddress() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        String nowhere = "ws://127.0.0.1:" + closedPort + "/ws";

        Run sub = cli(null, "sub", nowhere, "demo/#", "--connect-timeout-ms", "1500");

        assertThat(sub.exitStatus()).isEqualTo(1);
        assertThat(sub.errText()).startsWith("ringcast: could not connect to [" + nowhere + "] within 1500 ms")
                .contains("Connection refused");
    }

    @Test
    void aPasswordFromAFileLogsInAndAWrongOneExitsFour() throws Exception {
        Path good = Files.writeString(dir.resolve("alice.pw"), ALICE_PASSWORD + "\n");
        Path wrong = Files.writeString(dir.resolve("wrong.pw"), "not it\n");

        Run refused = cli(null, "pub", url, "demo/login/t", "v", "--user", "alice", "--password-file", wrong.toString());
        Run accepted = cli(null, "pub", url, "demo/login/t", "v", "--user", "alice", "--password-file", good.toString());

        assertThat(refused.exitStatus()).isEqualTo(4);
        assertThat(refused.errText()).startsWith("ringcast: login refused: ").contains("AUTHENTICATION_FAILED");
        assertThat(accepted.exitStatus()).as("stderr: " + accepted.err.lines).isZero();
    }

    @Test
    void subStopsCleanlyOnSigtermWithWhatItReceivedPrinted() throws Exception {
        Run sub = cli(null, "sub", url, "demo/sigterm/#");
        sub.awaitErr("subscribed");
        assertThat(cli(null, "pub", url, "demo/sigterm/t", "last words").exitStatus()).isZero();
        Await.until(() -> sub.out.lines.contains("demo/sigterm/t 1 last words"), "the update printed: " + sub.out.lines);

        sub.process.toHandle().destroy(); // SIGTERM

        assertThat(sub.exitStatus()).as("exit status after SIGTERM; stderr: " + sub.err.lines).isZero();
        assertThat(sub.errText()).doesNotContain("Exception");
    }

    /** pub given two nodes says when it loses the first and goes on through the second, as sub does. */
    @Test
    void pubSaysWhenItFailsOverToTheNextNode() throws Exception {
        Path first = dir.resolve("first");
        Path second = dir.resolve("second");
        Files.createDirectories(first);
        Files.createDirectories(second);
        String open = "server:\n  host: 127.0.0.1\n  port: 0\nsecurity:\n" + TestServers.OPEN_TO_ANONYMOUS;
        Files.writeString(first.resolve("node.yaml"), open);
        Files.writeString(second.resolve("node.yaml"), open);
        Process a = ServerProcesses.launch(first, "--config", "node.yaml");
        Process b = ServerProcesses.launch(second, "--config", "node.yaml");
        try {
            String portA = ServerProcesses.awaitPort(a, ServerProcesses.collect(a));
            String portB = ServerProcesses.awaitPort(b, ServerProcesses.collect(b));
            String urlA = "ws://127.0.0.1:" + portA + "/ws";
            String urlB = "ws://127.0.0.1:" + portB + "/ws";
            Process p = new ProcessBuilder(ServerProcesses.jarCommand(List.of(), "pub", urlA + "," + urlB, "fail/over"))
                    .directory(dir.toFile()).start();
            Run pub = new Run(p, OutputLines.read(p.getInputStream()), OutputLines.read(p.getErrorStream()));
            try (OutputStream in = p.getOutputStream()) {
                in.write("one\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
                Await.until(() -> health(portA).contains("\"publishes\":1,"), "the first value published on the first node");
                a.toHandle().destroy();
                assertThat(a.waitFor(30, TimeUnit.SECONDS)).isTrue();
                pub.awaitErr("connection to " + urlA + " lost");
                pub.awaitErr("reconnected to " + urlB);
                in.write("two\n".getBytes(StandardCharsets.UTF_8));
            }
            assertThat(pub.exitStatus()).as("pub's status; stderr: " + pub.err.lines).isZero();
            assertThat(health(portB)).contains("\"publishes\":1,");
        } finally {
            a.toHandle().destroy();
            b.toHandle().destroy();
            assertThat(b.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * sub whose standard output nobody reads holds about a megabyte of values, not 65,536 updates:
     * the rest stays unread on the connection, and so queues at the server (its outbound bytes
     * grow), where the slow-consumer rule applies.
     */
    @Test
    void subReadsNoFasterThanItPrints() throws Exception {
        Path home = dir.resolve("backpressure");
        Files.createDirectories(home);
        Files.writeString(home.resolve("node.yaml"), "server:\n  host: 127.0.0.1\n  port: 0\n"
                + "limits:\n  outboundQueueBytes: 134217728\nsecurity:\n" + TestServers.OPEN_TO_ANONYMOUS);
        Process server = ServerProcesses.launch(home, "--config", "node.yaml");
        Process sub = null;
        try {
            String port = ServerProcesses.awaitPort(server, ServerProcesses.collect(server));
            String wsUrl = "ws://127.0.0.1:" + port + "/ws";
            sub = new ProcessBuilder(ServerProcesses.jarCommand(List.of(), "sub", wsUrl, "bulk/#"))
                    .directory(dir.toFile()).start(); // its standard output is never read
            OutputLines err = OutputLines.read(sub.getErrorStream());
            Await.until(() -> err.lines.stream().anyMatch(l -> l.contains("subscribed")), "sub subscribed");
            byte[] value = new byte[32 * 1024];
            java.util.Arrays.fill(value, (byte) 'v');
            // 20 MB, in far fewer updates than the 65,536 sub held before: sub may hold 1 MB, the pipe
            // and the sockets' buffers a few more (measured with 40 MB: the node queued 34 to 38 MB)
            int updates = 640;
            try (io.ringcast.client.RingcastClient publisher = io.ringcast.client.RingcastClient.builder()
                    .addresses(wsUrl).build()) {
                publisher.connect().get(10, TimeUnit.SECONDS);
                List<java.util.concurrent.CompletableFuture<Long>> acks = new ArrayList<>();
                for (int i = 0; i < updates; i++) {
                    acks.add(publisher.publish("bulk/" + (i % 100), value));
                }
                for (java.util.concurrent.CompletableFuture<Long> ack : acks) {
                    ack.get(30, TimeUnit.SECONDS);
                }
            }
            // sub and the sockets hold a few MB at most: the node holds the rest for it
            Await.until(() -> outboundQueuedBytes(port) > 8_000_000L, java.time.Duration.ofSeconds(30),
                    () -> "the node queues what sub does not read: " + outboundQueuedBytes(port) + " bytes queued");
            assertThat(sub.isAlive()).isTrue();
        } finally {
            if (sub != null) {
                sub.destroyForcibly();
            }
            server.toHandle().destroy();
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static long outboundQueuedBytes(String port) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"outboundQueuedBytes\":(\\d+)").matcher(health(port));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static String health(String port) {
        try {
            return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + port + "/health")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        } catch (java.io.IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Runs the jar with {@code args}, {@code stdin} (or nothing) as its standard input. */
    private static Run cli(String stdin, String... args) throws Exception {
        Process p = new ProcessBuilder(ServerProcesses.jarCommand(List.of(), args)).directory(dir.toFile()).start();
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        return new Run(p, OutputLines.read(p.getInputStream()), OutputLines.read(p.getErrorStream()));
    }
}
