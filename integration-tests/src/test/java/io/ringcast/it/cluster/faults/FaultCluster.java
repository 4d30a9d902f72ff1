package io.ringcast.it.cluster.faults;

import com.fasterxml.jackson.databind.JsonNode;
import io.ringcast.it.cluster.ClusterProcesses;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Five real node processes, each on its own loopback address {@code 127.0.0.1N}, and the faults a
 * test does to them: cut groups of nodes apart and heal, kill -9, SIGSTOP and SIGCONT, graceful stop,
 * restart with the node's config (and whatever data its config keeps). In the spirit of Aeron's
 * {@code TestCluster}; engine-agnostic but for {@link #busiestLeader}. Used from one thread only.
 */
final class FaultCluster implements AutoCloseable {
    static final int NODES = 5;
    private static final String NODE_CONFIG = "history:\n  length: 4096\n";
    private static final Pattern NO_MAJORITY = Pattern.compile("ringcast_errors_total\\{code=\"NO_MAJORITY\"} ([0-9.E]+)");

    private final ClusterProcesses processes;
    private final NetworkFaults network;

    private FaultCluster(ClusterProcesses processes, NetworkFaults network) {
        this.processes = processes;
        this.network = network;
    }

    /** Starts five nodes and waits until each serves clients with a view of all five. */
    static FaultCluster start(String name) throws Exception {
        NetworkFaults network = NetworkFaults.inPrivateNamespace();
        for (int node = 1; node <= NODES; node++) {
            network.sourceAddressOfUser(uid(node), host(node));
        }
        // each node as its own user, so that its unbound sockets get its address (see NetworkFaults)
        return new FaultCluster(ClusterProcesses.start(name, NODES, NODE_CONFIG, FaultCluster::host,
                node -> List.of("setpriv", "--reuid=" + uid(node), "--regid=" + uid(node), "--clear-groups")), network);
    }

    /** The user node n runs as: only the nodes' packets are told apart by it. */
    static int uid(int node) {
        return 10_010 + node;
    }

    /** Node n's loopback address: its client port's and its cluster member host. */
    static String host(int node) {
        return "127.0.0." + (10 + node);
    }

    ClusterProcesses processes() {
        return processes;
    }

    /** Every packet between a node of {@code a} and a node of {@code b} is dropped, both ways, until {@link #heal}. */
    void cut(Collection<Integer> a, Collection<Integer> b) throws IOException, InterruptedException {
        for (int x : a) {
            for (int y : b) {
                network.cut(host(x), host(y));
            }
        }
    }

    /** Drops what each node of {@code from} sends to each node of {@code to}, not the other way. */
    void cutOneWay(Collection<Integer> from, Collection<Integer> to) throws IOException, InterruptedException {
        for (int x : from) {
            for (int y : to) {
                network.cutOneWay(host(x), host(y));
            }
        }
    }

    void heal() throws IOException, InterruptedException {
        network.healAll();
    }

    void kill9(int node) throws InterruptedException {
        processes.kill9(node);
    }

    void stop(int node) throws InterruptedException {
        processes.stop(node);
    }

    void pause(int node) throws Exception {
        processes.pause(node);
    }

    void resume(int node) throws Exception {
        processes.resume(node);
    }

    void restart(int node) throws IOException {
        processes.restart(node);
    }

    /** Waits until every node serves clients with a view of all five. */
    void awaitAllReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int node = 1; node <= NODES; node++) {
            processes.awaitView(node, NODES, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        }
    }

    /**
     * The node that sequences the most of {@code topics}: where a kill or a freeze hurts most. The one
     * place that knows how the engine spreads topics: one Raft group holds them all, so it is the
     * group's leader, as the running nodes' {@code /health} name it (the one most of them name).
     * With several groups it becomes the leader of the group holding the most topics.
     */
    int busiestLeader(List<String> topics) {
        Map<String, Integer> named = new HashMap<>();
        for (int node = 1; node <= NODES; node++) {
            JsonNode h = processes.isRunning(node) ? processes.health(node) : null;
            String leader = h == null ? "" : h.path("cluster").path("leader").asText("");
            if (!leader.isEmpty() && !leader.equals("null")) {
                named.merge(leader, 1, Integer::sum);
            }
        }
        if (named.isEmpty()) {
            throw new AssertionError("no node answers /health naming a leader (" + topics.size() + " topics):"
                    + processes.describe());
        }
        String leader = named.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        return Integer.parseInt(leader.substring("node-".length()));
    }

    /** How many publishes the node has refused with {@code NO_MAJORITY}, from its metrics; -1 when it does not answer. */
    long noMajorityRefusals(int node) {
        String metrics = processes.isRunning(node) ? processes.metrics(node) : null;
        if (metrics == null) {
            return -1;
        }
        Matcher m = NO_MAJORITY.matcher(metrics);
        return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
    }

    String describe() {
        return processes.describe();
    }

    @Override
    public void close() throws IOException {
        try {
            network.close();
        } finally {
            processes.close();
        }
    }
}
