package io.ringcast.cluster.internal;

import io.ringcast.cluster.ClusterSettings;
import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.View;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.protocols.raft.Role;
import org.jgroups.raft.RaftHandle;
import org.jgroups.raft.StateMachine;
import org.jgroups.util.ExtendedUUID;
import org.jgroups.util.NameCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jgroups.raft.util.Utils;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One Raft group on this node, started: jgroups-raft over the stack {@link RaftStack} builds, with
 * the caller's {@link StateMachine}. Entries are submitted on any member (a follower forwards them to
 * the leader); each member's state machine applies every committed entry, in log order.
 *
 * <p>Thread contract: {@link StateMachine#apply}, {@link StateMachine#writeContentTo} (snapshots) and
 * {@link StateMachine#readContentFrom} (a snapshot from the leader, or the one on disk at start) all
 * run on the engine's one {@code runner} thread, which also drives replication: they must not block.
 * The futures {@link #submit} returns complete on that thread, on a JGroups receiver thread
 * (forwarded submits) or on the JDK's timeout thread: hand their results to your own thread.
 * Role listeners run on the runner thread too. Every other method may be called from any thread.
 */
public final class RaftGroup implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RaftGroup.class);
    /** Between two joins refused because this node's previous run is still in the view. */
    static final long REJOIN_PAUSE_MS = 250;

    /** Told when this node becomes leader, follower or learner; on the engine's runner thread. */
    @FunctionalInterface
    public interface RoleListener {
        void onRole(Role role);
    }

    private final ClusterSettings cluster;
    private final RaftSettings settings;
    private final String group;
    private final StateMachine stateMachine;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile JChannel channel;
    private volatile RaftHandle handle;
    private volatile int refusedJoins;
    /** Submits not answered yet, with the leader they went to (maybe this node): see {@link #abandonSubmitsTo}. */
    private final Map<CompletableFuture<byte[]>, Forwarded> forwarded = new ConcurrentHashMap<>();

    private record Forwarded(String leader, long sinceNs) {
    }

    public RaftGroup(ClusterSettings cluster, RaftSettings settings, String group, StateMachine stateMachine) {
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.group = Objects.requireNonNull(group, "group");
        this.stateMachine = Objects.requireNonNull(stateMachine, "stateMachine");
    }

    /**
     * Builds the stack, loads the snapshot and the committed log from the data directory into the
     * state machine, and joins the group's members. Returns once connected, not once a leader is known.
     *
     * <p>A node killed and started again at once may find its previous incarnation still in the
     * group's view (until the others suspect it), and jgroups-raft's {@code NO_DUPES} refuses the
     * join of a second member of the same name: the join is tried again, every
     * {@link #REJOIN_PAUSE_MS}, for up to twice the failure detection and verification timeouts
     * plus the vote timeout, each time on a new stack (a stopped one cannot start again: its log
     * is closed), which loads the snapshot and log anew, into the state machine taken back to empty
     * ({@link ReloadableStateMachine#reset}; a state machine that cannot be is not tried again).
     */
    public void start() throws Exception {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("group " + group + " was started already");
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
                2 * (settings.failureDetectionTimeoutMs() + settings.verifySuspectMs()) + settings.voteTimeoutMs());
        while (true) {
            JChannel ch = RaftStack.newChannel(cluster, settings, group);
            channel = ch;
            handle = new RaftHandle(ch, stateMachine);
            try {
                ch.connect(group);
                return;
            } catch (SecurityException e) {
                ch.close();
                if (!isDuplicateOfThisNode(e) || !(stateMachine instanceof ReloadableStateMachine reloadable)
                        || System.nanoTime() - deadline > 0 || closed.get()) {
                    throw e;
                }
                refusedJoins++;
                log.info("{}: {}; trying again until the group sees this node's previous run gone", group,
                        e.getMessage());
                reloadable.reset();
                Thread.sleep(REJOIN_PAUSE_MS); // backing off between joins: nothing to wait on here
            }
        }
    }

    /** Whether a refused join was refused by {@code NO_DUPES}: a member of this node's name is in the view. */
    private static boolean isDuplicateOfThisNode(SecurityException e) {
        return e.getMessage() != null && e.getMessage().contains("duplicate members");
    }

    /** Joins refused at {@link #start} because this node's previous run was still in the view. */
    int refusedJoins() {
        return refusedJoins;
    }

    /** The channel, for tests that stop it as a killed process would (without leaving). */
    JChannel channel() {
        return channel;
    }

    /** Adds a listener of this node's role; add it before {@link #start()} to hear the first change. */
    public void addRoleListener(RoleListener listener) {
        Objects.requireNonNull(listener, "listener");
        requireStarted().raft().addRoleListener(listener::onRole);
    }

    /**
     * Submits {@code entry} to the group's log. The future completes with the state machine's answer
     * once the entry is committed on a majority and applied here or on the leader; it fails at once
     * when no leader is known, with {@link java.util.concurrent.TimeoutException} after
     * {@code submitTimeoutMs} (a submit forwarded to a leader that died meanwhile is never answered
     * by the engine), or with the engine's exception (this node lost the leadership, its queue is full).
     * A failed submit may still have been committed: only a retry the state machine recognises is safe.
     */
    public CompletableFuture<byte[]> submit(byte[] entry) {
        Objects.requireNonNull(entry, "entry");
        RaftHandle h = handle;
        if (h == null || closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("raft group " + group + " is not running"));
        }
        String leaderNow = leader();
        CompletableFuture<byte[]> result;
        try {
            // REDIRECT: applied here when this node leads, else sent to the leader
            result = h.setAsync(entry, 0, entry.length);
        } catch (Exception | Error e) { // no leader known, or the engine refused the call
            return CompletableFuture.failedFuture(e);
        }
        result = result.orTimeout(settings.submitTimeoutMs(), TimeUnit.MILLISECONDS);
        if (leaderNow != null && !result.isDone()) {
            CompletableFuture<byte[]> f = result;
            forwarded.put(f, new Forwarded(leaderNow, System.nanoTime()));
            f.whenComplete((r, t) -> forwarded.remove(f));
        }
        return result;
    }

    /**
     * Fails, at once, the submits this node made through {@code formerLeader}, which is no longer
     * the leader it knows or does not answer: the engine never answers a submit forwarded to a
     * leader that died or was cut off, and each would otherwise hold its place until
     * {@code submitTimeoutMs}. Like a
     * timeout, the failure says nothing of whether the entry was committed. Any thread.
     *
     * @return how many were failed
     */
    public int abandonSubmitsTo(String formerLeader) {
        int n = 0;
        for (Map.Entry<CompletableFuture<byte[]>, Forwarded> e : forwarded.entrySet()) {
            if (e.getValue().leader().equals(formerLeader) && e.getKey().completeExceptionally(new TimeoutException(
                    "the leader it was forwarded to, " + formerLeader + ", is no longer the leader, or not reachable"))) {
                n++;
            }
        }
        return n;
    }

    /** How long the oldest submit forwarded to {@code leader} and not answered yet has waited, in ms; 0 for none. Any thread. */
    public long oldestForwardedMs(String leader) {
        long now = System.nanoTime();
        long oldest = 0;
        for (Forwarded f : forwarded.values()) {
            if (f.leader().equals(leader)) {
                oldest = Math.max(oldest, now - f.sinceNs());
            }
        }
        return oldest / 1_000_000;
    }

    /** The leader's node name, or null while none is known to this node. */
    public String leader() {
        RaftHandle h = handle;
        return h == null ? null : nameOf(h.leader());
    }

    public boolean isLeader() {
        RaftHandle h = handle;
        return h != null && h.isLeader();
    }

    /** The current term as this node knows it; 0 before the first election. */
    public long term() {
        RaftHandle h = handle;
        return h == null ? 0 : h.currentTerm();
    }

    /** The index of the last entry this node knows committed (and has applied). */
    public long commitIndex() {
        RaftHandle h = handle;
        return h == null ? 0 : h.commitIndex();
    }

    /** The index of the last entry in this node's log. */
    public long lastAppended() {
        RaftHandle h = handle;
        return h == null ? 0 : h.lastApplied(); // RaftHandle's name for RAFT.lastAppended()
    }

    /**
     * Milliseconds since this node last received anything from {@code member} (a message or a
     * heartbeat); {@link Long#MAX_VALUE} when it never did or is not in the view. This node itself
     * is always heard. Any thread.
     */
    public long msSinceHeardFrom(String member) {
        if (member.equals(cluster.nodeName())) {
            return 0;
        }
        JChannel ch = channel;
        View v = ch == null ? null : ch.getView();
        RaftStack.HeardFrom fd = ch == null ? null : ch.getProtocolStack().findProtocol(RaftStack.HeardFrom.class);
        if (v == null || fd == null) {
            return Long.MAX_VALUE;
        }
        for (Address a : v.getMembersRaw()) {
            if (member.equals(nameOf(a))) {
                return fd.msSinceHeardFrom(a);
            }
        }
        return Long.MAX_VALUE;
    }

    /** Whether this node heard from a majority of the configured members, itself included, within {@code ms}. Any thread. */
    public boolean heardFromMajorityWithin(long ms) {
        int heard = 0;
        for (ClusterSettings.Member m : cluster.members()) {
            if (msSinceHeardFrom(m.name()) <= ms) {
                heard++;
            }
        }
        return heard >= cluster.majority();
    }

    /** The names of the members this node is connected with now (its JGroups view), coordinator first. */
    public List<String> view() {
        JChannel ch = channel;
        View v = ch == null ? null : ch.getView();
        if (v == null) {
            return List.of();
        }
        List<String> names = new ArrayList<>(v.size());
        for (Address a : v.getMembersRaw()) {
            names.add(nameOf(a));
        }
        return names;
    }

    /** Snapshots this node has taken since it started. */
    public int snapshots() {
        RaftHandle h = handle;
        return h == null ? 0 : h.raft().numSnapshots();
    }

    public String nodeName() {
        return cluster.nodeName();
    }

    public String group() {
        return group;
    }

    /** The engine's protocol, for metrics and tests; null before {@link #start()}. */
    public RAFT raft() {
        RaftHandle h = handle;
        return h == null ? null : h.raft();
    }

    /** Leaves the group and closes the log (a peer sees this node gone at once). Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        JChannel ch = channel;
        if (ch != null) {
            ch.close();
        }
    }

    private RaftHandle requireStarted() {
        RaftHandle h = handle;
        if (h == null) {
            throw new IllegalStateException("raft group " + group + " is not started");
        }
        return h;
    }

    private static String nameOf(Address address) {
        if (address == null) {
            return null;
        }
        if (address instanceof ExtendedUUID) {
            String raftId = Utils.extractRaftId(address);
            if (raftId != null) {
                return raftId;
            }
        }
        String name = NameCache.get(address);
        return name != null ? name : address.toString();
    }
}
