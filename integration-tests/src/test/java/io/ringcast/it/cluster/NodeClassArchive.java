package io.ringcast.it.cluster;

import io.ringcast.cluster.internal.jgroups.RaftStack;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A class-data-sharing archive of a cluster node's classes (JDK 13+'s dynamic archive: what a node
 * of this jar loaded, parsed and verified once), which the node processes of the tests map instead
 * of loading the jar's classes anew: the cluster nodes ({@link ClusterProcesses}, the fault suite's
 * through it), single nodes and the command-line client ({@code ServerProcesses}). A cluster node's
 * start took 1.7 s of CPU without it, 1.1 s with it; a single node's (C2, the shipped defaults)
 * 2.4-2.6 s against 1.5-1.6 s (2026-12-03); the suite starts a few hundred on two cores. The archive
 * holds classes only, no compiled code or heap: any -Xmx, collector or compiler maps it. Made once
 * per server jar, by a one-member cluster node started with {@code -XX:ArchiveClassesAtExit} and stopped, in {@code target/}; named after the jar's size and
 * time, and the JDK, so that a rebuilt jar gets its own (the JVM would refuse a stale one with a
 * warning, and run without it). Readable by every user: the fault suite runs nodes as other users.
 * Without an archive (its making failed: said on standard error) nodes start as before.
 */
public final class NodeClassArchive {
    private static final Path TARGET = Path.of("target").toAbsolutePath();
    /** The options of every cluster node, the archive's making included. */
    static final List<String> NODE_JVM_OPTIONS = List.of("-ea", "-Xmx256m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1");
    private static List<String> options;

    private NodeClassArchive() {
    }

    /**
     * The options that map the archive, made first if this jar has none yet; none if it cannot be
     * made. {@code jar} as the command will name it: the JVM checks the archive against that path.
     */
    public static synchronized List<String> options(Path jar, String java) {
        if (options == null) {
            Path archive = archiveOf(jar, java);
            if (!Files.exists(archive)) {
                make(jar, java, archive);
            }
            options = Files.exists(archive) ? List.of("-XX:SharedArchiveFile=" + archive) : List.of();
        }
        return options;
    }

    private static Path archiveOf(Path jar, String java) {
        try {
            String key = Files.size(jar) + "-" + Files.getLastModifiedTime(jar).toMillis() + "-"
                    + Integer.toHexString(java.hashCode());
            return TARGET.resolve("node-classes-" + key + ".jsa");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the server jar " + jar, e);
        }
    }

    private static void make(Path jar, String java, Path archive) {
        Path work = TARGET.resolve("node-classes-making");
        Path written = work.resolve("node-classes.jsa");
        try {
            deleteTree(work);
            Files.createDirectories(work);
            int clientPort = FreePorts.pick();
            int membershipPort = FreePorts.pickApart(1, RaftStack.FD_SOCK_PORT_OFFSET, 10)[0];
            Path config = work.resolve("node.yaml");
            Files.writeString(config, "server:\n  host: 127.0.0.1\n  port: " + clientPort + "\n  ioThreads: 1\n"
                    + "cluster:\n  enabled: true\n  nodeName: archive\n  dataDir: \"" + work.resolve("data") + "\"\n"
                    + "  members:\n    - {name: archive, host: 127.0.0.1, membershipPort: " + membershipPort + "}\n");
            List<String> cmd = new ArrayList<>(List.of(java));
            cmd.addAll(NODE_JVM_OPTIONS);
            cmd.addAll(List.of("-XX:ArchiveClassesAtExit=" + written, "-jar", jar.toString(), "--config",
                    config.toString()));
            Path log = work.resolve("node.log");
            Process node = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean listening;
            try {
                Await.until(() -> !node.isAlive() || output(log).contains("Ringcast listening on"),
                        Duration.ofSeconds(60), Duration.ofMillis(20), () -> "the archiving node to listen");
                listening = node.isAlive();
            } finally {
                node.destroy(); // SIGTERM: the JVM writes the archive as it exits
                if (!node.waitFor(60, TimeUnit.SECONDS)) {
                    node.destroyForcibly();
                }
            }
            if (!listening || !Files.exists(written)) {
                System.err.println("NodeClassArchive: no archive made (nodes start without one); the node's output:\n"
                        + output(log));
                return;
            }
            Files.setPosixFilePermissions(written, PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(written, archive, StandardCopyOption.ATOMIC_MOVE);
            try (Stream<Path> old = Files.list(TARGET)) { // those of jars built before: 30 MB each
                for (Path p : old.filter(f -> f.getFileName().toString().matches("node-classes-.*\\.jsa")
                        && !f.equals(archive)).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            System.err.println("NodeClassArchive: no archive made (nodes start without one): " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                deleteTree(work);
            } catch (IOException ignored) {
                // target/ is cleaned by the next build
            }
        }
    }

    private static String output(Path log) {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(its output cannot be read: " + e + ")";
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
