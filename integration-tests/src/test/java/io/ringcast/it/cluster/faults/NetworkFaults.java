package io.ringcast.it.cluster.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Cuts and heals the network between loopback addresses with iptables rules on {@code INPUT}
 * ({@code -s a -d b -j DROP}, both directions), in a private network namespace only: it refuses to
 * start in the namespace the script was started in (it must differ from this JVM's), whose firewall is not ours to change
 * ({@code scripts/cluster-faults.sh} runs the suite under {@code unshare -n}). A cut matches the
 * packets' addresses; a client socket a node does not bind leaves from 127.0.0.1 on loopback, so
 * {@link #sourceAddressOfUser} gives it its node's address. Used from one thread only.
 */
final class NetworkFaults implements AutoCloseable {
    private final List<List<String>> rules = new ArrayList<>();

    private NetworkFaults() {
    }

    /**
     * Checks that this process runs as root in a network namespace of its own, with iptables.
     *
     * @throws IllegalStateException naming what is missing and how to run the suite instead
     */
    static NetworkFaults inPrivateNamespace() throws IOException, InterruptedException {
        String how = " (run the suite through scripts/cluster-faults.sh, as root)";
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new IllegalStateException("the fault suite needs root for iptables" + how);
        }
        // the script notes the namespace it was started in before it unshares (pid 1's may be unreadable)
        String outer = System.getenv("RINGCAST_FAULTS_OUTER_NETNS");
        String own = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        if (outer == null || outer.isBlank() || own.equals(outer)) {
            throw new IllegalStateException("refusing to change the machine's own firewall: this JVM is not in a "
                    + "private network namespace (unshare -n)" + how);
        }
        NetworkFaults n = new NetworkFaults();
        n.iptables(List.of("-L", "INPUT", "-n"));
        return n;
    }

    /**
     * Gives the unbound sockets of the processes of user {@code uid} the source address {@code host}
     * (SNAT on loopback, new connections from 127.0.0.1 only): with each node running as its own
     * user, a connection a node opens without binding its socket carries the node's address as any
     * bound one does, so the cuts by address see it. Call before the node starts.
     */
    void sourceAddressOfUser(int uid, String host) throws IOException, InterruptedException {
        iptables(List.of("-t", "nat", "-A", "POSTROUTING", "-m", "owner", "--uid-owner", Integer.toString(uid),
                "-s", "127.0.0.1", "-d", "127.0.0.0/8", "-j", "SNAT", "--to-source", host));
    }

    /** Drops every packet from {@code a} to {@code b} and from {@code b} to {@code a}. */
    void cut(String a, String b) throws IOException, InterruptedException {
        for (List<String> rule : List.of(List.of("-s", a, "-d", b, "-j", "DROP"), List.of("-s", b, "-d", a, "-j", "DROP"))) {
            List<String> add = new ArrayList<>(List.of("-A", "INPUT"));
            add.addAll(rule);
            iptables(add);
            rules.add(rule);
        }
    }

    /**
     * Drops every packet from {@code from} to {@code to}, the other way left open: a one-way cut. On
     * TCP it stalls the connections between the two both ways (the acknowledgements are lost), but
     * a message sent on a new connection from {@code to} still arrives, and a datagram from
     * {@code to} would.
     */
    void cutOneWay(String from, String to) throws IOException, InterruptedException {
        List<String> rule = List.of("-s", from, "-d", to, "-j", "DROP");
        List<String> add = new ArrayList<>(List.of("-A", "INPUT"));
        add.addAll(rule);
        iptables(add);
        rules.add(rule);
    }

    /** Removes every rule {@link #cut} and {@link #cutOneWay} added. */
    void healAll() throws IOException, InterruptedException {
        for (List<String> rule : rules) {
            List<String> delete = new ArrayList<>(List.of("-D", "INPUT"));
            delete.addAll(rule);
            iptables(delete);
        }
        rules.clear();
    }

    boolean isCut() {
        return !rules.isEmpty();
    }

    private void iptables(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("iptables", "-w"));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            healAll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while healing", e);
        }
    }
}
