package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.ClusterSettings;
import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * n members of one Raft group in this JVM, on real TCP over loopback, each bound to its own address
 * (127.0.0.11, .12, ...) as in the fault suite: start, close, restart with or without its data,
 * await a leader. Member i's state machine is {@link #machine(int)}; a restart gives it a new one.
 */
final class RaftTestMembers implements AutoCloseable {
    static final String GROUP = "g0";

    private final List<ClusterSettings.Member> members = new ArrayList<>();
    private final RaftSettings settings;
    private final RaftGroup[] groups;
    private final CountingStateMachine[] machines;

    RaftTestMembers(int n, RaftSettings base) throws IOException {
        for (int i = 0; i < n; i++) {
            members.add(new ClusterSettings.Member("node-" + (i + 1), host(i), FreePorts.pick()));
        }
        this.settings = base;
        this.groups = new RaftGroup[n];
        this.machines = new CountingStateMachine[n];
    }

    static String host(int i) {
        return "127.0.0." + (11 + i);
    }

    int size() {
        return groups.length;
    }

    ClusterSettings.Member member(int i) {
        return members.get(i);
    }

    RaftSettings settingsOf(int i) {
        return settings.withDataDir(settings.dataDir().resolve("node-" + (i + 1)));
    }

    RaftTestMembers startAll() throws Exception {
        for (int i = 0; i < groups.length; i++) {
            start(i);
        }
        return this;
    }

    void start(int i) throws Exception {
        start(i, settingsOf(i));
    }

    /** Starts member i with settings of its own (another cluster key, say), in its own data directory. */
    void start(int i, RaftSettings own) throws Exception {
        ClusterSettings cluster = new ClusterSettings(members.get(i).name(), members, 1, 1);
        machines[i] = new CountingStateMachine();
        groups[i] = new RaftGroup(cluster, own.withDataDir(settingsOf(i).dataDir()), GROUP, machines[i]);
        groups[i].start();
    }

    /** Stops member i as a killed process: it sends no LEAVE, and stays in the others' view until suspected. */
    void crash(int i) throws Exception {
        org.jgroups.util.Util.shutdown(groups[i].channel());
        groups[i].close();
        groups[i] = null;
    }

    void close(int i) {
        groups[i].close();
        groups[i] = null;
    }

    /** Deletes member i's log and snapshot; it must be closed. */
    void wipe(int i) throws IOException {
        Path dir = settingsOf(i).dataDir();
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    RaftGroup group(int i) {
        return groups[i];
    }

    CountingStateMachine machine(int i) {
        return machines[i];
    }

    List<Integer> running() {
        List<Integer> r = new ArrayList<>();
        for (int i = 0; i < groups.length; i++) {
            if (groups[i] != null) {
                r.add(i);
            }
        }
        return r;
    }

    /** The index of the running member that leads and that every running member names; -1 if none. */
    int agreedLeader() {
        String leader = null;
        for (int i : running()) {
            String l = groups[i].leader();
            if (l == null || (leader != null && !leader.equals(l))) {
                return -1;
            }
            leader = l;
        }
        for (int i : running()) {
            if (groups[i].nodeName().equals(leader) && groups[i].isLeader()) {
                return i;
            }
        }
        return -1;
    }

    int awaitLeader(Duration timeout) {
        Await.until(() -> agreedLeader() >= 0, timeout, Duration.ofMillis(5), this::describe);
        return agreedLeader();
    }

    /** Awaits every running member having applied {@code count} entries with the same chain hash. */
    void awaitApplied(long count, Duration timeout) {
        Await.until(() -> appliedAlike(count, count), timeout, Duration.ofMillis(5),
                () -> count + " entries applied alike everywhere: " + describe());
    }

    /**
     * Awaits every running member having applied the same number of entries, at least {@code atLeast},
     * with the same chain hash: for a group whose leader may still commit an entry after the count was
     * read (the commit index a caller reads can trail the one the last ack was answered from).
     */
    void awaitAppliedAlike(long atLeast, Duration timeout) {
        Await.until(() -> appliedAlike(atLeast, Long.MAX_VALUE), timeout, Duration.ofMillis(5),
                () -> "at least " + atLeast + " entries applied alike everywhere: " + describe());
    }

    private boolean appliedAlike(long atLeast, long atMost) {
        Long applied = null;
        Long chain = null;
        for (int i : running()) {
            long count = machines[i].applied();
            if (count < atLeast || count > atMost || (applied != null && (applied != count || chain != machines[i].chain()))) {
                return false;
            }
            applied = count;
            chain = machines[i].chain();
        }
        return true;
    }

    String describe() {
        StringBuilder sb = new StringBuilder();
        for (int i : running()) {
            RaftGroup g = groups[i];
            sb.append(String.format("%n  %s: leader=%s term=%d commit=%d last=%d applied=%d chain=%x snapshots=%d view=%s",
                    g.nodeName(), g.leader(), g.term(), g.commitIndex(), g.lastAppended(), machines[i].applied(),
                    machines[i].chain(), g.snapshots(), g.view()));
            if (Boolean.getBoolean("ringcast.raft.debugLog") && g.raft().log() instanceof org.jgroups.raft.util.LogCache c) {
                sb.append("\n    ").append(c.toStringDetails()).append(" / ").append(c.log());
            }
        }
        return sb.toString();
    }

    @Override
    public void close() {
        for (int i = 0; i < groups.length; i++) {
            if (groups[i] != null) {
                close(i);
            }
        }
    }
}
