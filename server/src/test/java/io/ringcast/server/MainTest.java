package io.ringcast.server;

import static org.assertj.core.api.Assertions.assertThat;

import at.favre.lib.crypto.bcrypt.BCrypt;
import io.ringcast.server.config.ConfigLoader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The command line ({@link Main#run}) up to the point where a node would start: what an operator
 * sees for help, a typo, a bad config, and {@code hash-password}. No test here starts a node.
 */
@Timeout(60)
class MainTest {
    private static final String PASSWORD = "correct horse battery staple";

    @TempDir
    Path dir;

    /** What a run of the command line gave: its exit status, standard output and standard error. */
    record Outcome(int status, String out, String err) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "-h"})
    void helpPrintsTheUsageAndExitsZero(String option) {
        Outcome o = run("", option);

        assertThat(o.status).isZero();
        assertThat(o.out).startsWith("Usage: ringcast-server").contains("--config=PATH", "hash-password", "sub", "pub",
                "remove");
        assertThat(o.err).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"--version", "-V"})
    void versionPrintsTheVersionAndExitsZero(String option) {
        Outcome o = run("", option);

        assertThat(o.status).isZero();
        assertThat(o.out.strip()).isEqualTo("Ringcast 0.1.0");
    }

    @Test
    void anUnknownOptionExitsTwoNamingIt() {
        Outcome o = run("", "--bogus");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).contains("Unknown option: '--bogus'");
        assertThat(o.out).isEmpty();
    }

    @Test
    void aMisspeltOptionExitsTwoSuggestingTheRightOne() {
        Outcome o = run("", "--confg", "server.yaml");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).contains("Unknown options: '--confg', 'server.yaml'").contains("Possible solutions: --config");
    }

    @Test
    void configWithoutAPathExitsTwo() {
        Outcome o = run("", "--config");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).contains("Missing required parameter for option '--config'");
    }

    @Test
    void aMissingConfigFileExitsTwoNamingTheFile() {
        Path missing = dir.resolve("server.yaml");

        Outcome o = run("", "--config", missing.toString());

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: bad config: " + missing + ": file not found");
    }

    @Test
    void aBadConfigFileExitsTwoNamingTheFileAndTheKey() throws IOException {
        Path file = Files.writeString(dir.resolve("server.yaml"), "server:\n  port: 70000\n");

        Outcome o = run("", "--config", file.toString());

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: bad config: " + file
                + ": key 'server.port' must be between 0 and 65535, got 70000");
    }

    @Test
    void aConfigFileThatIsNotYamlExitsTwoSayingWhere() throws IOException {
        Path file = Files.writeString(dir.resolve("server.yaml"), "server:\n port: 1\n  host: x\n");

        Outcome o = run("", "--config", file.toString());

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).startsWith("ringcast: bad config: " + file + ": YAML syntax error at line 3, column 7");
    }

    // --- hash-password ----------------------------------------------------------------------------

    @Test
    void hashPasswordPrintsAHashThatVerifiesAndNeverThePassword() {
        Outcome o = run(PASSWORD + "\n", "hash-password", "--cost", "10");

        assertThat(o.status).isZero();
        String hash = o.out.strip();
        assertThat(hash).startsWith("$2a$10$").hasSize(60);
        assertThat(BCrypt.verifyer().verify(PASSWORD.toCharArray(), hash).verified).isTrue();
        assertThat(o.out + o.err).doesNotContain(PASSWORD).doesNotContain("horse");
    }

    @Test
    void theHashIsAcceptedAsAPrincipalsPasswordHash() {
        String hash = run(PASSWORD + "\n", "hash-password", "--cost", "10").out.strip();

        assertThat(ConfigLoader.fromYaml("security:\n  principals: [{name: alice, passwordHash: \"" + hash
                + "\", roles: [demo]}]\n").security().principals().get(0).passwordHash()).isEqualTo(hash);
    }

    @Test
    void hashPasswordTakesTheFirstLineOnlyAndCost12ByDefault() {
        Outcome o = run(PASSWORD + "\nsecond line\n", "hash-password");

        assertThat(o.status).isZero();
        String hash = o.out.strip();
        assertThat(hash).startsWith("$2a$12$");
        assertThat(BCrypt.verifyer().verify(PASSWORD.toCharArray(), hash).verified).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"9", "15", "0", "-1"})
    void hashPasswordWithACostOutside10To14ExitsTwo(String cost) {
        Outcome o = run(PASSWORD + "\n", "hash-password", "--cost", cost);

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: --cost must be between 10 and 14, got " + cost);
        assertThat(o.out).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\n"})
    void hashPasswordWithNoPasswordExitsTwo(String stdin) {
        Outcome o = run(stdin, "hash-password", "--cost", "10");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: no password on standard input");
        assertThat(o.out).isEmpty();
    }

    // --- sub, pub and remove, up to the point where they would connect (CliProcessTest runs them for real) ---

    @ParameterizedTest
    @ValueSource(strings = {"sub", "pub"})
    void subAndPubHelpShowTheLoginOptionsAndTheExitStatuses(String command) {
        Outcome o = run("", command, "--help");

        assertThat(o.status).isZero();
        assertThat(o.out).contains("Usage: ringcast-server " + command + " ", "URL[,URL...]", "--user=NAME",
                "--password-file=PATH", "--token-file=PATH", "--trust=PEM", "--value-encoding=ENCODING",
                "Exit status:", "  4   the server refused");
    }

    @Test
    void removeHelpShowsTheLoginOptionsTheAckTimeoutAndTheExitStatuses() {
        Outcome o = run("", "remove", "--help");

        assertThat(o.status).isZero();
        assertThat(o.out).contains("Usage: ringcast-server remove ", "URL[,URL...]", "SELECTOR", "--user=NAME",
                "--password-file=PATH", "--token-file=PATH", "--trust=PEM", "--connect-timeout-ms=MS",
                "--ack-timeout-ms=MS", "Exit status:", "  1   could not connect", "  4   the server refused");
    }

    @Test
    void aRemovalSelectorThatBreaksARuleExitsTwoNamingTheRule() {
        Outcome o = run("", "remove", "ws://localhost:8080/ws", "demo/#/bids");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: invalid selector 'demo/#/bids': '#' must be the last segment");
        assertThat(o.out).isEmpty();
    }

    @Test
    void aRemovalWithoutASelectorExitsTwo() {
        Outcome o = run("", "remove", "ws://localhost:8080/ws");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).contains("Missing required parameter: 'SELECTOR'");
    }

    @Test
    void aRemovalToAUrlThatIsNotWebSocketExitsTwoNamingIt() {
        Outcome o = run("", "remove", "http://localhost:8080/ws", "demo/#");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: addresses: 'http://localhost:8080/ws' must start with ws:// "
                + "or wss://");
    }

    @Test
    void theCommandNameInTheUsageIsTheOneTheLauncherGives() {
        System.setProperty("ringcast.command", "ringcast");
        try {
            assertThat(run("", "sub", "--help").out).contains("Usage: ringcast sub ");
        } finally {
            System.clearProperty("ringcast.command");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://localhost:8080/ws", "localhost:8080"})
    void aUrlThatIsNotWebSocketExitsTwoNamingIt(String url) {
        Outcome o = run("", "pub", url, "demo/t", "v");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: addresses: '" + url + "' must start with ws:// or wss://");
    }

    @Test
    void everyUrlOfAClusterListIsChecked() {
        Outcome o = run("", "sub", "ws://a:8080/ws,wss://b:8443/ws,ws://", "demo/#");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).startsWith("ringcast: addresses: 'ws://' is not a URL");
    }

    @Test
    void aSelectorThatBreaksARuleExitsTwoNamingTheRule() {
        Outcome o = run("", "sub", "ws://localhost:8080/ws", "demo/#/bids");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: invalid selector 'demo/#/bids': '#' must be the last segment");
    }

    @Test
    void aTopicWithAWildcardExitsTwo() {
        Outcome o = run("", "pub", "ws://localhost:8080/ws", "demo/+", "v");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).startsWith("ringcast: invalid path 'demo/+': '+' is a wildcard");
    }

    @Test
    void aValueThatIsNotInTheEncodingExitsTwoNamingIt() {
        Outcome o = run("", "pub", "ws://localhost:8080/ws", "demo/t", "--value-encoding", "HEX", "00ff", "0g");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).startsWith("ringcast: VALUE 2 is not hex: ");
    }

    @Test
    void aCountBelowOneExitsTwo() {
        Outcome o = run("", "sub", "ws://localhost:8080/ws", "demo/#", "--count", "0");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: --count must be at least 1, got 0");
    }

    @Test
    void anUnknownFormatExitsTwoListingTheKnownOnes() {
        Outcome o = run("", "sub", "ws://localhost:8080/ws", "demo/#", "--format", "xml");

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err).contains("--format", "xml", "text", "json");
    }

    @Test
    void aUserAndATokenTogetherExitTwo() throws IOException {
        Path token = Files.writeString(dir.resolve("token"), "eyJ.x.y\n");

        Outcome o = run("", "pub", "ws://localhost:8080/ws", "demo/t", "v", "--user", "alice",
                "--token-file", token.toString());

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: --user and --token-file are two ways to log in: give one");
    }

    @Test
    void aMissingPasswordFileExitsTwoNamingIt() {
        Path missing = dir.resolve("nowhere.pw");

        Outcome o = run("", "sub", "ws://localhost:8080/ws", "demo/#", "--user", "alice", "--password-file",
                missing.toString());

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: --password-file: " + missing
                + " does not exist or is not readable");
    }

    @Test
    void aPasswordFileWithoutAUserExitsTwo() throws IOException {
        Path pw = Files.writeString(dir.resolve("pw"), "secret\n");

        Outcome o = run("", "sub", "ws://localhost:8080/ws", "demo/#", "--password-file", pw.toString());

        assertThat(o.status).isEqualTo(2);
        assertThat(o.err.strip()).isEqualTo("ringcast: --password-file needs --user");
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Runs the command line with {@code stdin} as standard input, capturing standard output (where
     * picocli prints help and hash-password its hash) and standard error. The test JVM runs test
     * classes one at a time, so swapping System.in and System.out for the run is safe.
     */
    private static Outcome run(String stdin, String... args) {
        StringWriter err = new StringWriter();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream originalIn = System.in;
        PrintStream originalOut = System.out;
        int status;
        try (PrintWriter errWriter = new PrintWriter(err, true);
             PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
            System.setOut(outStream);
            status = Main.run(args, errWriter);
        } finally {
            System.setIn(originalIn);
            System.setOut(originalOut);
        }
        return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString());
    }
}
