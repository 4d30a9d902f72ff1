package io.ringcast.it;

import io.ringcast.it.cluster.NodeClassArchive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runnable jar started as a real process, as an operator starts it, and its output read as it
 * comes. Needs {@code server/target/ringcast-server.jar}, which the reactor builds before this module.
 */
final class ServerProcesses {
    static final Path JAR = Path.of("..", "server", "target", "ringcast-server.jar");
    static final Pattern LISTENING = Pattern.compile("Ringcast listening on ws://[^/]+:(\\d+)/ws");

    private ServerProcesses() {
    }

    /** The {@code java} of the JVM running the tests. */
    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static Process launch(Path workDir, String... args) throws IOException {
        return launch(workDir, List.of(), args);
    }

    /**
     * A node on {@code 127.0.0.1} and a port of its own ({@link #awaitPort} tells it), where anonymous
     * clients may publish and subscribe everywhere: for the tests of what clients can make a node hold.
     * Its config is {@code node.yaml} in {@code workDir}.
     */
    static Process launchOpen(Path workDir, List<String> jvmArgs) throws IOException {
        return launchOpen(workDir, jvmArgs, "");
    }

    /** The same, with {@code moreConfig} (whole sections of YAML) added to the node's config. */
    static Process launchOpen(Path workDir, List<String> jvmArgs, String moreConfig) throws IOException {
        Files.writeString(workDir.resolve("node.yaml"), """
                server:
                  host: 127.0.0.1
                  port: 0
                security:
                  anonymousRoles: ["everything"]
                  roles:
                    - name: "everything"
                      subscribe: ["#"]
                      publish: ["#"]
                """ + moreConfig);
        return launch(workDir, jvmArgs, "--config", "node.yaml");
    }

    /**
     * The jar with {@code jvmArgs} in front of {@code -jar}, as the README's command gives them, and
     * the class archive of the test's nodes ({@link NodeClassArchive}), which saves each start about
     * a second of CPU. (It was taken out once for a witness over its bound in {@code
     * UnreadWholeTreeTest}, read as a colder start; the cause found later was the kernel's send
     * buffers, see that test.)
     */
    static Process launch(Path workDir, List<String> jvmArgs, String... args) throws IOException {
        return start(jarCommand(jvmArgs, args), workDir, Map.of());
    }

    /** {@code java <jvmArgs> <the class archive> -jar <the server jar> <args>}: a node or the command-line client. */
    static List<String> jarCommand(List<String> jvmArgs, String... args) {
        String java = java();
        Path jar = JAR.toAbsolutePath().normalize();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(jvmArgs);
        cmd.addAll(NodeClassArchive.options(jar, java));
        cmd.addAll(List.of("-jar", jar.toString()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * {@code command} in {@code workDir}, with {@code environment} added to this process's own and
     * its standard error merged into its output.
     */
    static Process start(List<String> command, Path workDir, Map<String, String> environment) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        pb.environment().putAll(environment);
        return pb.start();
    }

    /**
     * The port of the node's "listening" line, once it has printed it; fails at once, with its
     * output, when the node exits first (a bad option or config), instead of at the timeout.
     */
    static String awaitPort(Process node, List<String> out) {
        return Await.value(() -> {
            String port = out.stream().map(LISTENING::matcher).filter(Matcher::find).map(m -> m.group(1)).findFirst()
                    .orElse(null);
            if (port == null && !node.isAlive()) {
                throw new AssertionError("the node exited with status " + node.exitValue()
                        + " before it listened; its output:\n" + String.join("\n", out));
            }
            return port;
        }, () -> "the listening line: " + out);
    }

    /** The lines {@code p} prints, gathered as they come by a daemon thread ({@link OutputLines}). */
    static List<String> collect(Process p) {
        return OutputLines.read(p.getInputStream()).lines;
    }
}
