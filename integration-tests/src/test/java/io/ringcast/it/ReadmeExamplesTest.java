package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigLoader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's examples run as written: its Java program, compiled and run in a JVM of its own,
 * and its browser snippet, put into a page of the server's origin in a real headless Chromium;
 * each against a real server on the shipped {@code config/server.yaml} and on the embedded
 * defaults, as the README's "Run it" starts one. The one change made to an example, and to the
 * shipped config, is the address: {@value #README_ADDRESS} becomes the test server's, on a free
 * loopback port. An example that stops compiling, connecting, or being allowed what it does (the
 * roles anonymous sessions get) fails here.
 */
@Timeout(120)
class ReadmeExamplesTest {
    private static final Path README = Path.of("..", "README.md");
    private static final Path SHIPPED_CONFIG = Path.of("..", "config", "server.yaml");
    /** Where the README's examples connect: a server started as its "Run it" says. */
    static final String README_ADDRESS = "ws://localhost:8080/ws";

    static Chromium chromium;

    /** A server to run the examples against; {@code demoPublishes}: its demo publisher is on. */
    record Setup(String name, String yaml, boolean demoPublishes) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Setup> setups() throws IOException {
        String shipped = Files.readString(SHIPPED_CONFIG, StandardCharsets.UTF_8);
        String onLoopback = replaceOnce(shipped, "(?m)^  host: \"0\\.0\\.0\\.0\"", "  host: \"127.0.0.1\"");
        String onFreePort = replaceOnce(onLoopback, "(?m)^  port: 8080\\b", "  port: 0");
        return Stream.of(new Setup("the shipped config/server.yaml", onFreePort, true),
                new Setup("the embedded defaults", "server:\n  host: 127.0.0.1\n  port: 0\n", false));
    }

    @BeforeAll
    static void startBrowser() {
        chromium = new Chromium();
    }

    @AfterAll
    static void stopBrowser() {
        if (chromium != null) {
            chromium.close();
        }
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("setups")
    void javaExampleCompilesRunsAndPrintsItsOwnUpdateThenItsSequence(Setup setup, @TempDir Path dir) throws Exception {
        String example = onlyBlock("java");
        Matcher publicClass = Pattern.compile("public class (\\w+)").matcher(example);
        assertThat(publicClass.find()).as("a public class in the README's java block").isTrue();
        String className = publicClass.group(1);
        String classPath = System.getProperty("java.class.path");

        try (RingcastServer server = RingcastServer.start(ConfigLoader.fromYaml(setup.yaml()))) {
            Path source = dir.resolve(className + ".java");
            Files.writeString(source, atAddress(example, server));
            compile(source, dir, classPath);

            Path output = dir.resolve("output.txt");
            Process run = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-ea",
                    "-cp", dir + File.pathSeparator + classPath, className)
                    .redirectErrorStream(true).redirectOutput(output.toFile()).start();
            boolean exited = run.waitFor(60, TimeUnit.SECONDS);
            if (!exited) {
                run.destroyForcibly().waitFor();
            }
            List<String> lines = Files.readAllLines(output);
            assertThat(exited).as("the example ended within 60 s; it printed %s", lines).isTrue();
            assertThat(run.exitValue()).as("the example's exit code; it printed %s", lines).isZero();
            // its subscription sees its publish (a new topic, so sequence 1) before the ack completes the future
            assertThat(lines).as("what the example printed")
                    .containsSubsequence("demo/fx/EURUSD/bid #1 = 1.0842", "published as #1");
        }
    }

    @ParameterizedTest(name = "on {0}")
    @MethodSource("setups")
    void browserExamplePublishesAndLogsTheUpdatesItSubscribedTo(Setup setup) throws Exception {
        String example = onlyBlock("html");
        Queue<String> published = new ConcurrentLinkedQueue<>();
        try (RingcastServer server = RingcastServer.start(ConfigLoader.fromYaml(setup.yaml()));
             RingcastClient watcher = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
            watcher.connect().get(10, TimeUnit.SECONDS);
            watcher.subscribe("demo/chat/hello", u -> published.add(u.text())).confirmed().get(10, TimeUnit.SECONDS);

            // a page of the server's origin (its 404 page), so that the example's '/js/ringcast.js' resolves
            chromium.open("http://127.0.0.1:" + server.port() + "/readme-example");
            chromium.run("""
                    window.readmeLog = [];
                    window.readmeErrors = [];
                    const log = console.log;
                    console.log = (...parts) => {
                      window.readmeLog.push(parts.map(p => typeof p === 'object' ? JSON.stringify(p) : String(p)).join(' '));
                      log(...parts);
                    };
                    window.addEventListener('error', e => window.readmeErrors.push(String(e.error ?? e.message)));
                    window.addEventListener('unhandledrejection', e => window.readmeErrors.push(String(e.reason)));
                    // a contextual fragment runs its scripts when inserted, as a page's own markup would
                    document.body.append(document.createRange().createContextualFragment(args[0]));
                    """, atAddress(example, server));

            Await.until(() -> published.contains("hi") || !errors().isEmpty(),
                    "the example's publish of 'hi' to demo/chat/hello");
            assertThat(errors()).as("errors in the page").isEmpty();
            if (setup.demoPublishes()) {
                chromium.waitFor("window.readmeLog.some(l => /^demo\\/fx\\/[A-Z]{6} \\d+ \\{\"bid\":/.test(l))"
                        + " || window.readmeErrors.length > 0", "the example logging a demo quote");
                assertThat(errors()).as("errors in the page").isEmpty();
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> errors() {
        return (List<String>) chromium.eval("window.readmeErrors");
    }

    /** The one fenced block of {@code language} in the README: a second one would go untested. */
    private static String onlyBlock(String language) throws IOException {
        String readme = Files.readString(README, StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("(?ms)^```" + language + "\\n(.*?)^```").matcher(readme);
        assertThat(block.find()).as("a ```%s block in %s", language, README).isTrue();
        String text = block.group(1);
        assertThat(block.find()).as("a second ```%s block in %s, which this test does not run", language, README)
                .isFalse();
        return text;
    }

    /** The example with the test server's address for the README's; the README must give that address. */
    private static String atAddress(String example, RingcastServer server) {
        assertThat(example).as("the example connects to %s", README_ADDRESS).contains(README_ADDRESS);
        return example.replace(README_ADDRESS, server.webSocketUrl());
    }

    private static void compile(Path source, Path classes, String classPath) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler").isNotNull();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int code = javac.run(null, diagnostics, diagnostics, "-d", classes.toString(), "-cp", classPath,
                source.toString());
        assertThat(code).as("javac of the README's java block:%n%s",
                diagnostics.toString(StandardCharsets.UTF_8)).isZero();
    }

    private static String replaceOnce(String text, String regex, String replacement) {
        Pattern pattern = Pattern.compile(regex);
        assertThat(pattern.matcher(text).results().count()).as("lines %s in %s", regex, SHIPPED_CONFIG).isEqualTo(1);
        return pattern.matcher(text).replaceFirst(replacement);
    }
}
