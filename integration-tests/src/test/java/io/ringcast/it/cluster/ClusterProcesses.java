package io.ringcast.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.cluster.internal.jgroups.RaftStack;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A cluster of real node processes on loopback: the server jar, one JVM per node, each with its
 * own generated config, free ports, and its output in
 * {@code integration-tests/target/cluster-logs/<test>/node-N.log}. Nodes can be killed
 * ({@code SIGKILL}), stopped ({@code SIGTERM}), frozen ({@code SIGSTOP}), thawed and restarted.
 * Each node may have its own loopback address (its {@code server.host} and its cluster member host),
 * so that a fault harness can cut the network between nodes by address. Nodes run with {@code -ea},
 * so that the thread contracts our code asserts, and the engine's own invariants, are checked under
 * kills, pauses and cuts too (an assertion that fails shows in the node's log). Used from one thread only.
 */
public final class ClusterProcesses implements AutoCloseable {
    private static final Path JAR = Path.of("..", "server", "target", "ringcast-server.jar");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Anonymous test clients may read and publish everything. */
    private static final String SECURITY = "security:\n  anonymousRoles: [\"everything\"]\n  roles:\n"
            + "    - name: \"everything\"\n      subscribe: [\"#\"]\n      publish: [\"#\"]\n";

    private final int size;
    private final Path logDir;
    private final String[] hosts;
    private final int[] clientPorts;
    private final Path[] configs;
    private final Process[] processes;
    private IntFunction<List<String>> commandPrefix = node -> List.of();
    /** JVM options of every node after {@link NodeClassArchive#NODE_JVM_OPTIONS} (a later {@code -Xmx} wins). */
    private List<String> jvmOptions = List.of();
    /** The {@code cluster.members} lines every node's config has. */
    private final String members;
    /** A process with another cluster key ({@link #startStranger}), or null. */
    private Process stranger;
    /** The stranger's membership and client ports, picked apart with the members' ({@link #startStranger}). */
    private final int strangerMembershipPort;
    private final int strangerClientPort;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private ClusterProcesses(String testName, int size, String extraYaml, String clusterKeys,
                             IntFunction<String> hostOfNode) throws IOException {
        this.size = size;
        this.logDir = Path.of("target", "cluster-logs", testName);
        Files.createDirectories(logDir);
        this.hosts = new String[size];
        for (int i = 0; i < size; i++) {
            hosts[i] = hostOfNode.apply(i + 1);
        }
        this.clientPorts = new int[size];
        this.configs = new Path[size];
        this.processes = new Process[size];
        StringBuilder members = new StringBuilder("  members:\n");
        // apart: a port among another member's failure detection ports fails the config on one host,
        // and a client port there could be taken by the failure detector first
        // the stranger's two too: its failure detection ports once took one of a member's (CI, 2026-11-30)
        int[] ports = FreePorts.pickApart(2 * size + 2, RaftStack.FD_SOCK_PORT_OFFSET, 10);
        strangerMembershipPort = ports[2 * size];
        strangerClientPort = ports[2 * size + 1];
        int[] membershipPorts = Arrays.copyOf(ports, size);
        for (int i = 0; i < size; i++) {
            clientPorts[i] = ports[size + i];
            members.append("    - {name: node-").append(i + 1).append(", host: ").append(hosts[i])
                    .append(", membershipPort: ").append(membershipPorts[i]).append("}\n");
        }
        this.members = members.toString();
        // encrypted between nodes, as scripts/cluster.sh and the compose file run them
        Path secret = logDir.resolve("cluster.secret");
        byte[] random = new byte[48];
        new SecureRandom().nextBytes(random);
        Files.writeString(secret, Base64.getEncoder().encodeToString(random) + "\n");
        // Ratis (cluster.engine: ratis, under way) has no encryption between nodes yet: it refuses the key
        String secretKey = clusterKeys.contains("engine: ratis") ? ""
                : "  secretFile: \"" + secret.toAbsolutePath() + "\"\n";
        for (int i = 0; i < size; i++) {
            Path data = freshDataDir(i + 1);
            String yaml = "server:\n  host: " + hosts[i] + "\n  port: " + clientPorts[i] + "\n  ioThreads: 1\n"
                    + "cluster:\n  enabled: true\n  nodeName: node-" + (i + 1) + "\n  dataDir: \""
                    + data.toAbsolutePath() + "\"\n" + secretKey + clusterKeys + members
                    + extraYaml + (extraYaml.isEmpty() || extraYaml.endsWith("\n") ? "" : "\n")
                    + (extraYaml.contains("security:") ? "" : SECURITY);
            configs[i] = logDir.resolve("node-" + (i + 1) + ".yaml");
            Files.writeString(configs[i], yaml);
        }
    }

    /**
     * An empty data directory for node n's Raft log (a new cluster starts from nothing; a restart
     * keeps it), writable by any user: the fault suite runs each node as its own.
     */
    private Path freshDataDir(int node) throws IOException {
        Path dir = logDir.resolve("node-" + node + "-data");
        if (Files.exists(dir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        return dir;
    }

    /** Node n's data directory ({@code cluster.dataDir}). */
    public Path dataDir(int node) {
        return logDir.resolve("node-" + node + "-data");
    }

    /** Empties node n's data directory, which must not be in use: restarted, it has nothing of its own. */
    public void wipeDataDir(int node) throws IOException {
        if (isRunning(node)) {
            throw new IllegalStateException("node-" + node + " is still running");
        }
        freshDataDir(node);
    }

    /**
     * Starts {@code size} nodes and waits until each serves clients with a view of all of them.
     *
     * @param extraYaml more top-level config sections for every node (not {@code server} or {@code cluster})
     */
    static ClusterProcesses start(String testName, int size, String extraYaml) throws Exception {
        return start(testName, size, extraYaml, node -> "127.0.0.1");
    }

    /**
     * As {@link #start(String, int, String)}, with more keys of the {@code cluster} section for
     * every node.
     *
     * @param clusterKeys lines of {@code cluster} keys, each indented by two spaces and ending in a
     *                    newline, such as {@code "  snapshotLogBytes: 65536\n"}
     */
    static ClusterProcesses start(String testName, int size, String extraYaml, String clusterKeys) throws Exception {
        return new ClusterProcesses(testName, size, extraYaml, clusterKeys, node -> "127.0.0.1")
                .startAll(node -> List.of());
    }

    /**
     * As {@link #start(String, int, String, String)}, with more JVM options for every node, after the
     * usual ones (so {@code -Xmx64m} there wins).
     */
    public static ClusterProcesses start(String testName, int size, String extraYaml, String clusterKeys,
                                         List<String> jvmOptions) throws Exception {
        ClusterProcesses cluster = new ClusterProcesses(testName, size, extraYaml, clusterKeys, node -> "127.0.0.1");
        cluster.jvmOptions = List.copyOf(jvmOptions);
        return cluster.startAll(node -> List.of());
    }

    /**
     * As {@link #start(String, int, String)}, each node on its own address.
     *
     * @param hostOfNode the address of node n (1-based): its client port's and its cluster member host
     */
    public static ClusterProcesses start(String testName, int size, String extraYaml, IntFunction<String> hostOfNode)
            throws Exception {
        return start(testName, size, extraYaml, hostOfNode, node -> List.of());
    }

    /**
     * As {@link #start(String, int, String, IntFunction)}, each node's command after a prefix
     * (e.g. {@code setpriv --reuid=...}: a harness that tells nodes' packets apart by their user).
     */
    public static ClusterProcesses start(String testName, int size, String extraYaml, IntFunction<String> hostOfNode,
                                         IntFunction<List<String>> commandPrefix) throws Exception {
        return new ClusterProcesses(testName, size, extraYaml, "", hostOfNode).startAll(commandPrefix);
    }

    /** Launches every node and waits until each serves clients with a view of all; closes them all on failure. */
    private ClusterProcesses startAll(IntFunction<List<String>> commandPrefix) throws Exception {
        this.commandPrefix = commandPrefix;
        try {
            // the first node first, as an operator would: the others then join its view at once,
            // instead of five JVMs starting on two cores each waiting for a coordinator (JGroups
            // joins them all the same, by merging singletons, but that took over a minute in CI).
            // It serves clients only once a majority has elected a leader: wait until it has joined
            launch(1);
            awaitLog(1, "cluster: joined as", Duration.ofSeconds(60));
            for (int node = 2; node <= size; node++) {
                launch(node);
            }
            for (int node = 1; node <= size; node++) {
                awaitView(node, size, Duration.ofSeconds(90));
            }
        } catch (Exception | AssertionError e) {
            close();
            throw e;
        }
        return this;
    }

    private void launch(int node) throws IOException {
        List<String> cmd = new ArrayList<>(commandPrefix.apply(node));
        cmd.addAll(nodeCommand(configs[node - 1], jvmOptions));
        Path log = logDir.resolve("node-" + node + ".log");
        // a restart appends to the node's log; a new cluster starts it afresh
        ProcessBuilder.Redirect output = processes[node - 1] == null ? ProcessBuilder.Redirect.to(log.toFile())
                : ProcessBuilder.Redirect.appendTo(log.toFile());
        processes[node - 1] = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output).start();
    }

    /** A node process's command with {@code config}: the jar on the test's JDK, with {@link NodeClassArchive}. */
    private static List<String> nodeCommand(Path config, List<String> jvmOptions) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path jar = JAR.toAbsolutePath().normalize();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(NodeClassArchive.NODE_JVM_OPTIONS);
        cmd.addAll(jvmOptions);
        cmd.addAll(NodeClassArchive.options(jar, java));
        cmd.addAll(List.of("-jar", jar.toString(), "--config", config.toAbsolutePath().toString()));
        return cmd;
    }

    /** The WebSocket URL of node {@code node} (1-based). */
    public String webSocketUrl(int node) {
        return "ws://" + hosts[node - 1] + ":" + clientPorts[node - 1] + "/ws";
    }

    /** The HTTP base URL of node {@code node} (1-based): {@code /health}, {@code /api/publish}. */
    public String httpUrl(int node) {
        return "http://" + hosts[node - 1] + ":" + clientPorts[node - 1];
    }

    public List<String> webSocketUrls() {
        List<String> urls = new ArrayList<>();
        for (int node = 1; node <= size; node++) {
            urls.add(webSocketUrl(node));
        }
        return urls;
    }

    /** The node's {@code /health}, or null when it does not answer. */
    public JsonNode health(int node) {
        String body = get(node, "/health");
        try {
            return body == null ? null : JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    /** The node's {@code /metrics} (Prometheus text), or null when it does not answer. */
    public String metrics(int node) {
        return get(node, "/metrics");
    }

    private String get(int node, String path) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                    URI.create("http://" + hosts[node - 1] + ":" + clientPorts[node - 1] + path))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Waits until the node serves clients and its view has {@code members} members. */
    public void awaitView(int node, int members, Duration timeout) {
        await(node, h -> h.path("cluster").path("ready").asBoolean()
                && h.path("cluster").path("view").size() == members, timeout, "ready with a view of " + members);
    }

    /** Waits until the node's log has a line containing {@code text}. */
    public void awaitLog(int node, String text, Duration timeout) {
        awaitLog(node, text, 0, timeout);
    }

    /** Awaits node's log holding {@code text} more often than the {@code seenBefore} times it did (a restart appends). */
    public void awaitLog(int node, String text, int seenBefore, Duration timeout) {
        Await.until(() -> {
            Process p = processes[node - 1];
            if (p == null || !p.isAlive()) {
                throw new AssertionError("node-" + node + " is not running (waiting for '" + text + "')\n"
                        + logTail(node, 40));
            }
            return logOccurrences(node, text) > seenBefore;
        }, timeout, Duration.ofMillis(100), () -> "node-" + node + " logs '" + text + "'\n" + logTail(node, 40));
    }

    /** How many times node's log holds {@code text} so far (0 before it exists). */
    public int logOccurrences(int node, String text) {
        try {
            if (!Files.exists(log(node))) {
                return 0;
            }
            String all = Files.readString(log(node), StandardCharsets.UTF_8);
            int n = 0;
            for (int i = all.indexOf(text); i >= 0; i = all.indexOf(text, i + text.length())) {
                n++;
            }
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the node's {@code /health} satisfies {@code condition}. */
    public void await(int node, Predicate<JsonNode> condition, Duration timeout, String what) {
        JsonNode[] last = {null};
        Await.until(() -> {
            Process p = processes[node - 1];
            if (p == null || !p.isAlive()) {
                throw new AssertionError("node-" + node + " is not running (waiting until " + what + ")\n"
                        + logTail(node, 40));
            }
            last[0] = health(node);
            return last[0] != null && condition.test(last[0]);
        }, timeout, Duration.ofMillis(100), () -> "node-" + node + " " + what + "; last /health: "
                + (last[0] == null ? "no answer" : last[0].path("cluster")) + "\nall nodes:" + describe() + "\n"
                + logTail(node, 40));
    }

    /** Each node's {@code /health} cluster object, for failure messages. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (int node = 1; node <= size; node++) {
            JsonNode h = processes[node - 1] != null && processes[node - 1].isAlive() ? health(node) : null;
            b.append("\n  node-").append(node).append(": ").append(h == null ? "down or silent"
                    : "sessions " + h.path("sessions") + ", publishes " + h.path("publishes") + ", received bytes "
                    + h.path("receivedBytes") + ", " + h.path("cluster"));
        }
        return b.toString();
    }

    /** The Raft leader a running node names in its {@code /health}, once one does. */
    public int awaitLeader(Duration timeout) {
        String[] named = {""};
        Await.until(() -> {
            for (int node = 1; node <= size; node++) {
                JsonNode h = isRunning(node) ? health(node) : null;
                String leader = h == null ? "" : h.path("cluster").path("leader").asText("");
                if (!leader.isEmpty() && !leader.equals("null")) {
                    named[0] = leader;
                    return true;
                }
            }
            return false;
        }, timeout, Duration.ofMillis(100), () -> "a node names the leader; nodes: " + describe());
        return Integer.parseInt(named[0].substring("node-".length()));
    }

    /** SIGKILL: the process dies at once, its sockets reset. */
    public void kill9(int node) throws InterruptedException {
        Process p = processes[node - 1];
        p.destroyForcibly();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("node-" + node + " still runs 30 s after SIGKILL");
        }
    }

    /** SIGTERM: a graceful stop. */
    public void stop(int node) throws InterruptedException {
        Process p = processes[node - 1];
        p.destroy();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("node-" + node + " did not stop within 30 s of SIGTERM\n" + logTail(node, 40));
        }
    }

    /** SIGSTOP: the process freezes, its sockets stay open. */
    public void pause(int node) throws Exception {
        signal(node, "STOP");
    }

    /** SIGCONT after {@link #pause}. */
    public void resume(int node) throws Exception {
        signal(node, "CONT");
    }

    private void signal(int node, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(processes[node - 1].pid()))
                .redirectErrorStream(true).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("kill -" + signal + " node-" + node + " failed: "
                    + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** Starts a node again with its config and ports; it rejoins and catches up. */
    public void restart(int node) throws IOException {
        if (processes[node - 1] != null && processes[node - 1].isAlive()) {
            throw new IllegalStateException("node-" + node + " is still running");
        }
        launch(node);
    }

    /** The node's address: its client port's and its cluster member host. */
    public String host(int node) {
        return hosts[node - 1];
    }

    /** Whether the node's process runs (a frozen one does). */
    /** The highest commit index a running node's {@code /health} names: the leader's, or more recent. */
    public long highestCommitIndex() {
        long highest = 0;
        for (int node = 1; node <= processes.length; node++) {
            JsonNode h = isRunning(node) ? health(node) : null;
            if (h != null) {
                highest = Math.max(highest, h.path("cluster").path("commitIndex").asLong());
            }
        }
        return highest;
    }

    /** Awaits node's {@code /health} naming a commit index (applied there) of at least {@code index}. */
    public void awaitApplied(int node, long index, Duration timeout) {
        Await.until(() -> {
            JsonNode h = health(node);
            return h != null && h.path("cluster").path("commitIndex").asLong() >= index;
        }, timeout, Duration.ofMillis(5), () -> "node-" + node + " applies the log up to " + index + ": " + describe());
    }

    public boolean isRunning(int node) {
        return processes[node - 1] != null && processes[node - 1].isAlive();
    }

    /** The node's log file. */
    public Path log(int node) {
        return logDir.resolve("node-" + node + ".log");
    }

    /** The last lines of the node's log, for failure messages. */
    public String logTail(int node, int lines) {
        try {
            List<String> all = Files.readAllLines(log(node), StandardCharsets.UTF_8);
            return "--- node-" + node + ".log (last " + lines + " lines)\n"
                    + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log for node-" + node + ": " + e + ")";
        }
    }

    /**
     * Starts a process that is no member, node-(size+1), with a cluster secret of its own: its
     * config names every member and itself, as a node someone tries to add would. The members must
     * refuse it. Its output goes to {@code stranger.log} ({@link #strangerLog}); it is killed with
     * the cluster.
     */
    public void startStranger() throws IOException {
        String name = "node-" + (size + 1);
        Path secret = logDir.resolve("stranger.secret");
        byte[] random = new byte[48];
        new SecureRandom().nextBytes(random);
        Files.writeString(secret, Base64.getEncoder().encodeToString(random) + "\n");
        String yaml = "server:\n  host: 127.0.0.1\n  port: " + strangerClientPort + "\n  ioThreads: 1\n"
                + "cluster:\n  enabled: true\n  nodeName: " + name + "\n  dataDir: \""
                + Files.createDirectories(logDir.resolve("stranger-data")).toAbsolutePath() + "\"\n"
                + "  secretFile: \"" + secret.toAbsolutePath() + "\"\n" + members
                + "    - {name: " + name + ", host: 127.0.0.1, membershipPort: " + strangerMembershipPort + "}\n" + SECURITY;
        Path config = logDir.resolve("stranger.yaml");
        Files.writeString(config, yaml);
        stranger = new ProcessBuilder(nodeCommand(config, List.of())).redirectErrorStream(true).redirectOutput(strangerLog().toFile()).start();
    }

    /** Kills {@link #startStranger}'s process and waits for it to end. */
    public void stopStranger() throws InterruptedException {
        if (stranger != null) {
            stranger.destroyForcibly();
            if (!stranger.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError("the stranger did not end within 30 s of SIGKILL");
            }
            stranger = null;
        }
    }

    /** The output of {@link #startStranger}'s process. */
    public Path strangerLog() {
        return logDir.resolve("stranger.log");
    }

    /** Kills every node still running (SIGCONT first for frozen ones). */
    @Override
    public void close() {
        if (stranger != null) {
            stranger.destroyForcibly();
        }
        for (int i = 0; i < size; i++) {
            Process p = processes[i];
            if (p != null && p.isAlive()) {
                try {
                    signal(i + 1, "CONT");
                } catch (Exception | AssertionError ignored) {
                    // it is killed next anyway
                }
                p.destroyForcibly();
            }
        }
        for (Process p : processes) {
            if (p != null) {
                try {
                    p.waitFor(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
