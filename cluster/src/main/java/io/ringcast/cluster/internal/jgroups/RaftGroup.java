package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.ClusterStatus;
import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.View;
import org.jgroups.protocols.PingData;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.protocols.raft.ELECTION2;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.protocols.raft.Role;
import org.jgroups.raft.RaftHandle;
import org.jgroups.raft.StateMachine;
import org.jgroups.raft.util.CommitTable;
import org.jgroups.raft.util.Utils;
import org.jgroups.util.ExtendedUUID;
import org.jgroups.util.NameCache;
import org.jgroups.util.Responses;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
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
    /**
     * Submits not answered yet, in the order they were made, with the leader they went to (maybe
     * this node): see {@link #redirectSubmits} and {@link #abandonSubmitsTo}.
     */
    private final ConcurrentSkipListMap<Long, Forwarded> forwarded = new ConcurrentSkipListMap<>();
    /** Numbers the submits, for {@link #forwarded}'s order; under this object's lock. */
    private long submits;

    /**
     * One submit not answered yet. {@code answer} is what the caller holds; the engine's future of
     * the latest send completes it. Sent again ({@link #redirectSubmits}), the earlier send's
     * failure is ignored, and its success taken (a result is a result: the entry was applied).
     */
    /** {@link Forwarded#leader} of a submit whose send failed, to be sent again. */
    private static final String TO_SEND_AGAIN = "";

    private static final class Forwarded {
        final byte[] entry;
        final CompletableFuture<byte[]> answer;
        volatile String leader;
        /** The term this node knew when it last sent it: {@link #redirectSubmits} sends it again in a later one. */
        volatile long term;
        volatile long sinceNs;
        /** When it was submitted: {@link #sinceNs} restarts each time it is sent again. */
        final long madeNs;
        volatile CompletableFuture<byte[]> send;

        Forwarded(byte[] entry, CompletableFuture<byte[]> answer, String leader, long term) {
            this.entry = entry;
            this.answer = answer;
            this.leader = leader;
            this.term = term;
            this.sinceNs = System.nanoTime();
            this.madeNs = sinceNs;
        }
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
        join();
    }

    /** Builds a new stack and joins the group's members on it: {@link #start}'s loop. */
    private void join() throws Exception {
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

    /**
     * Whether this node is the only member of its JGroups view while another member answers its
     * discovery (waiting up to {@code timeoutMs} for answers): a view without it exists that it
     * can reach, and the merge that should take it back has not come. A node cut off from every
     * other hears no answer. Also true when a {@link #rejoin} failed and left this node in no view:
     * it is to join again. Blocks the calling thread up to {@code timeoutMs}; any thread.
     */
    public boolean aloneWhileAnotherViewAnswers(long timeoutMs) {
        JChannel ch = channel;
        if (ch == null || closed.get() || !started.get()) {
            return false;
        }
        View v = ch.getView();
        if (v == null) {
            return !ch.isConnected();
        }
        if (v.size() != 1) {
            return false;
        }
        // the event GMS sends to find the members to join (ClientGmsImpl): it asks every configured host
        Responses answers = (Responses) ch.down(new Event(Event.FIND_INITIAL_MBRS, timeoutMs));
        if (answers == null) {
            return false;
        }
        try {
            answers.waitFor(timeoutMs);
            for (PingData answer : answers) {
                if (answer.getAddress() != null && !answer.getAddress().equals(ch.getAddress())) {
                    return true;
                }
            }
            return false;
        } finally {
            answers.done();
        }
    }

    /**
     * Leaves this node's view and joins the group anew, on a new stack (a stopped one cannot start
     * again: its log is closed), which loads the snapshot and the log from the data directory into
     * the state machine taken back to empty ({@link ReloadableStateMachine#reset}): the server's
     * sequencer skips the updates it has. For a node left alone in a view of its own that no merge
     * takes back ({@link #aloneWhileAnotherViewAnswers}): JGroups merges views through {@code MERGE3}
     * and {@code GMS}'s merge rounds, and once in a few dozen of the fault suite's partitions a node
     * stayed alone after the heal, every round passing it by, its subscribers served nothing new
     * (CI, 2026-12-02); a join takes another path, the one every restarted node takes. Submits
     * waiting for an answer are sent again once a leader is known ({@link #redirectSubmits}), or
     * failed where they may not be applied twice. Blocks until joined; any thread but the engine's.
     *
     * @return false when this node is closed or its state machine cannot be taken back to empty
     */
    public boolean rejoin() throws Exception {
        if (!(stateMachine instanceof ReloadableStateMachine reloadable) || closed.get() || !started.get()) {
            return false;
        }
        JChannel old;
        synchronized (this) {
            old = channel;
            handle = null; // submits fail at once ("not running") until joined
        }
        if (old != null) {
            old.close(); // stops the engine's runner; the state machine is left to this thread
        }
        for (Forwarded f : forwarded.values()) {
            if (f.entry != null) {
                f.leader = TO_SEND_AGAIN;
            } else {
                f.answer.completeExceptionally(new TimeoutException("this node joined the group again before the "
                        + "leader answered"));
            }
        }
        reloadable.reset();
        try {
            join();
        } catch (Exception e) {
            channel.close(); // in no view: the next look finds it so and joins again
            throw e;
        }
        if (closed.get()) { // closed while joining: close() saw the old channel
            channel.close();
            return false;
        }
        return true;
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

    /** {@link #submit(byte[], boolean)}, not sent again when the leader changes. */
    public CompletableFuture<byte[]> submit(byte[] entry) {
        return submit(entry, false);
    }

    /**
     * Submits {@code entry} to the group's log. The future completes with the state machine's answer
     * once the entry is committed on a majority and applied here or on the leader; it fails at once
     * when no leader is known, with {@link java.util.concurrent.TimeoutException} after
     * {@code submitTimeoutMs} (a submit forwarded to a leader that died meanwhile is never answered
     * by the engine), or with the engine's exception (this node lost the leadership, its queue is full).
     * A failed submit may still have been committed: only a retry the state machine recognises is safe.
     *
     * <p>With {@code resendable}, the state machine recognises the entry if it is applied twice
     * (every publish in it has a publisher id): when the leader changes before it is answered, it
     * is sent again to the new one ({@link #redirectSubmits}), before any later submit, instead of
     * failing; its caller then waits for the election, not for another connection of its client.
     * Any thread; submits are sent in the order of the calls.
     */
    public synchronized CompletableFuture<byte[]> submit(byte[] entry, boolean resendable) {
        Objects.requireNonNull(entry, "entry");
        RaftHandle h = handle;
        if (h == null || closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("raft group " + group + " is not running"));
        }
        String leaderNow = leader();
        long termNow = h.currentTerm();
        redirectSubmits(); // those the former leader left go first, in their order
        CompletableFuture<byte[]> send;
        try {
            // REDIRECT: applied here when this node leads, else sent to the leader
            send = h.setAsync(entry, 0, entry.length);
        } catch (Exception | Error e) { // no leader known, or the engine refused the call
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<byte[]> answer = new CompletableFuture<byte[]>()
                .orTimeout(settings.submitTimeoutMs(), TimeUnit.MILLISECONDS);
        Forwarded f = new Forwarded(resendable ? entry : null, answer, leaderNow, termNow);
        long number = ++submits;
        if (leaderNow != null) {
            forwarded.put(number, f);
            answer.whenComplete((r, t) -> forwarded.remove(number));
        }
        sendVia(f, send);
        return answer;
    }

    /**
     * Completes the submit's answer with {@code send}'s, unless the submit was sent again meanwhile
     * and that send failed. A resendable submit whose latest send fails (a leader that leaves fails
     * what it holds: "I'm not the leader"; the entry may yet be committed by the next) is marked to
     * be sent again by the next {@link #redirectSubmits}, not here: this is an engine thread.
     */
    private static void sendVia(Forwarded f, CompletableFuture<byte[]> send) {
        f.send = send;
        send.whenComplete((r, t) -> {
            if (t == null) {
                f.answer.complete(r);
            } else if (f.send == send) {
                if (f.entry != null) {
                    f.leader = TO_SEND_AGAIN;
                } else {
                    f.answer.completeExceptionally(t);
                }
            }
        });
    }

    /**
     * The leader changed: sends the submits made through the former one again (and those whose
     * send failed, {@link #sendVia}), to the leader known now, in the order they were first made,
     * those that may be ({@code resendable}); fails the others at once ({@link TimeoutException}: the engine never answers a submit forwarded to a
     * leader that died, and each would hold its place until {@code submitTimeoutMs}). While no
     * leader is known, they wait for one.
     *
     * <p>The same leader in a later term gets the resendable submits sent in an earlier one again
     * too: jgroups-raft 1.1.4's runner reads the request table once per batch of requests
     * ({@code RAFT.process}), so a batch that straddles a vote which keeps its leader (the leader
     * steps down, its table is failed and replaced on the vote's thread, it is elected again)
     * registers its later submits in the dropped table, in the old term, and they may never be
     * answered (docs/upstream/jgroups-raft.md, report 11; the fault suite's rolling restart: every
     * publisher of two nodes stalled 5 s, until {@code REPLICATION_TIMEOUT}, when the restarted
     * first member of the view ran a vote that kept the leader). The others are left to be
     * answered, or to time out. Any thread; cheap when nothing waits, so that {@code LeaderWatch}
     * calls it at each check.
     *
     * @return how many were sent again and how many failed, as {@code {sent, failed}}
     */
    public synchronized int[] redirectSubmits() {
        int[] counts = new int[2];
        String leaderNow = leader();
        RaftHandle h = handle;
        if (leaderNow == null || h == null) {
            return counts;
        }
        long termNow = h.currentTerm();
        for (Forwarded f : forwarded.values()) {
            String former = f.leader;
            if (f.answer.isDone()
                    || former.equals(leaderNow) && (f.entry == null || f.term >= termNow)) {
                continue;
            }
            if (f.entry == null) {
                if (f.answer.completeExceptionally(new TimeoutException("the leader it was forwarded to, " + former
                        + ", is no longer the leader"))) {
                    counts[1]++;
                }
                continue;
            }
            long formerTerm = f.term;
            f.leader = leaderNow;
            f.term = termNow;
            f.sinceNs = System.nanoTime();
            try {
                sendVia(f, h.setAsync(f.entry, 0, f.entry.length));
                counts[0]++;
            } catch (Exception | Error e) { // the leader went again: the next change sends it once more
                f.leader = former;
                f.term = formerTerm;
            }
        }
        return counts;
    }

    /**
     * Fails, at once, the submits this node made through {@code leader}, which does not answer it
     * (see {@code LeaderWatch}): sending them again to the same leader would not help. Like a
     * timeout, the failure says nothing of whether the entry was committed. Any thread.
     *
     * @return how many were failed
     */
    public int abandonSubmitsTo(String leader) {
        int n = 0;
        for (Forwarded f : forwarded.values()) {
            if (leader.equals(f.leader) && f.answer.completeExceptionally(new TimeoutException(
                    "the leader it was forwarded to, " + leader + ", does not answer this node"))) {
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
            if (leader.equals(f.leader)) {
                oldest = Math.max(oldest, now - f.sinceNs);
            }
        }
        return oldest / 1_000_000;
    }

    /**
     * How long the oldest submit this node made through a leader and has no answer to yet has
     * waited, in ms, whatever leader it went to and however often it was sent again; 0 for none.
     * Any thread.
     */
    public long oldestUnansweredMs() {
        long now = System.nanoTime();
        long oldest = 0;
        for (Forwarded f : forwarded.values()) {
            oldest = Math.max(oldest, now - f.madeNs);
        }
        return oldest / 1_000_000;
    }

    /**
     * Asks the engine for an election, when this node coordinates a JGroups view that holds a
     * majority of the members: through {@code ELECTION2}'s own operation for it
     * ({@code BaseElection.runVotingThread}, a managed operation, which does nothing where a vote
     * is already under way). The engine starts a vote by itself only when a view change says the
     * leader left or a majority came; after a heal that merged overlapping views (the fault suite's
     * bridge), the coordinator may still name a member as leader that stepped down meanwhile, and
     * no view change follows: every node then waits for that leader for good. Any thread.
     *
     * @return whether a vote was asked for (this node coordinates a view of a majority)
     */
    public boolean startElection() {
        JChannel ch = channel;
        View v = ch == null ? null : ch.getView();
        if (v == null || v.size() < cluster.majority() || !Objects.equals(v.getCoord(), ch.getAddress())) {
            return false;
        }
        ELECTION2 election = ch.getProtocolStack().findProtocol(ELECTION2.class);
        return election != null && election.runVotingThread();
    }

    /**
     * Removes {@code member} from this node's JGroups view, when this node coordinates it: through
     * the event {@code GMS} takes from the failure detectors, as if they had suspected it. For a member that lives in another view: after overlapping views merged, the merge can
     * leave a coordinator in its old view with members that joined the other side (the fault suite's
     * bridge), which it never suspects, since it still hears them (every message counts as a
     * heartbeat) and {@code VERIFY_SUSPECT2} finds them alive; while they stay in its view, no
     * merge takes it back. Alone in its view, it merges like any node cut off and healed. Any thread.
     *
     * @return whether this node coordinates its view and {@code member} was in it
     */
    public boolean removeFromView(String member) {
        JChannel ch = channel;
        View v = ch == null ? null : ch.getView();
        if (v == null || !Objects.equals(v.getCoord(), ch.getAddress()) || member.equals(cluster.nodeName())) {
            return false;
        }
        for (Address a : v.getMembersRaw()) {
            if (member.equals(nameOf(a))) {
                return suspect(ch, List.of(a));
            }
        }
        return false;
    }

    /**
     * Hands {@code GMS} the event the failure detectors send it, all the members in one: suspected
     * one by one, a participant becomes the coordinator after the first few and the rest, heard
     * again meanwhile (they answer {@code VERIFY_SUSPECT2}), stay in its view.
     */
    private static boolean suspect(JChannel ch, List<Address> members) {
        GMS gms = ch.getProtocolStack().findProtocol(GMS.class);
        if (gms == null) {
            return false;
        }
        gms.up(new Event(Event.SUSPECT, members));
        return true;
    }

    /**
     * Takes out of this node's JGroups view the members that count this node out of theirs: heard
     * within {@code heardWithinMs} (they answer it) but with no multicast to it for {@code quietMs}
     * (a member multicasts to its own view's members only, {@link RaftStack.HeardFrom}). Heard
     * within much less than the quiet: a member cut off a moment ago was last heard a moment after
     * its last multicast, not since. Overlapping views leave such members behind: a merge can
     * leave a node in its old view with members that went over to the other side (the fault
     * suite's bridge, its partition when a node was in both sides' views). The node never suspects them, since they still answer it ({@code
     * VERIFY_SUSPECT2} finds them alive), and no merge takes it back while they are in its view
     * (the merge asks that view's coordinator, which answers with its new view). Through the event
     * the failure detectors send {@code GMS}, all of them in one, as if they had suspected them:
     * where this node coordinates its view they leave it; where not, only when every other member
     * counts it out, so that it is left alone in a view of its own (a participant's suspicion of
     * some does nothing, or, when they are all the members ahead of it, makes it the coordinator of
     * the others: a node woken from SIGSTOP did that with members whose heartbeats were still in
     * its socket buffers, coordinated a majority's view whose members lived elsewhere, and asked
     * for an election that moved the real leader's term). Alone, it merges back like any side of a
     * healed cut. Any thread.
     *
     * @return the members suspected; empty when none counts this node out, or when this node
     *         could not take them out of its view
     */
    public List<String> leaveMembersCountingThisNodeOut(long heardWithinMs, long quietMs) {
        JChannel ch = channel;
        View v = ch == null ? null : ch.getView();
        RaftStack.HeardFrom fd = ch == null ? null : ch.getProtocolStack().findProtocol(RaftStack.HeardFrom.class);
        if (v == null || fd == null) {
            return List.of();
        }
        List<Address> countingOut = new ArrayList<>();
        for (Address a : v.getMembersRaw()) {
            if (!a.equals(ch.getAddress()) && fd.msSinceHeardFrom(a) <= heardWithinMs
                    && fd.msSinceMulticastFrom(a) > quietMs) {
                countingOut.add(a);
            }
        }
        boolean coordinates = Objects.equals(v.getCoord(), ch.getAddress());
        if (countingOut.isEmpty() || (!coordinates && countingOut.size() < v.size() - 1)
                || !suspect(ch, countingOut)) {
            return List.of();
        }
        List<String> names = new ArrayList<>(countingOut.size());
        countingOut.forEach(a -> names.add(nameOf(a)));
        return names;
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

    /** How many of the configured members, this node included, make a majority. */
    public int majority() {
        return cluster.majority();
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

    /**
     * On the leader, each other member's progress in the log (the engine's commit table); empty on a
     * follower. Any thread.
     */
    public List<ClusterStatus.Follower> followers() {
        RaftHandle h = handle;
        if (h == null || !h.isLeader()) {
            return List.of();
        }
        RAFT raft = h.raft();
        CommitTable table = raft.commitTable();
        if (table == null) {
            return List.of();
        }
        long last = raft.lastAppended();
        List<ClusterStatus.Follower> followers = new ArrayList<>();
        table.forEach((address, entry) -> followers.add(new ClusterStatus.Follower(nameOf(address),
                entry.matchIndex(), Math.max(0, last - entry.matchIndex()))));
        followers.sort(Comparator.comparing(ClusterStatus.Follower::member));
        return followers;
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
