package io.ringcast.cluster.internal.ratis;

import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.ReplicationSettings;
import io.ringcast.cluster.internal.TopicLog;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This node's part in the cluster's Raft groups under Apache Ratis: one Ratis server (one gRPC
 * port, the member's {@code membershipPort}) hosting {@code groups} Raft groups, each spanning every
 * configured member, each with its own log, state machine ({@link TopicLogStateMachine} around a
 * {@link TopicLog}) and leader. Ratis elects, replicates, commits, snapshots and catches members up;
 * nothing of it is patched here, only configured.
 *
 * <p><b>Leaders spread.</b> Group {@code g}'s preferred leader is member {@code g mod members}
 * ({@link #preferredLeader}). Elections pick whichever member they can; then a leader that is not
 * its group's preferred one hands the leadership over to it with Ratis's own leadership transfer
 * ({@link #placeLeaders}), once the preferred member answers it: at start, and after a failure
 * heals, the leaders move back. Not through Ratis's peer priorities: with them, each leader yields
 * on its own, and two groups led by one node yielding to one member at once collided in Ratis
 * 3.3.0's Netty transport, which this engine used first (both {@code StartLeaderElection} requests
 * carry call id 0, and the second fails with "previous is expected to be null":
 * docs/upstream/ratis.md, report 1); one transfer at a time per node avoids that.
 *
 * <p><b>Submits.</b> An entry goes to its group's leader: straight into the local server when this
 * node leads the group, else through this node's Ratis client of that group (gRPC), which finds
 * the leader and sends again on a leader change within {@code replicationTimeoutMs}. Either way the
 * reply is the state machine's response, computed on the leader once it applied the entry.
 *
 * <p>Thread contract: {@link #start} and {@link #close} on one thread; {@link #submit},
 * {@link #leader}, the status getters and {@link #leaderApplied} from any thread.
 */
public final class RatisGroups implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RatisGroups.class);
    /** Between a client's sends of one request to the members, looking for the group's leader. */
    private static final long CLIENT_RETRY_MS = 100;

    private final ClusterSettings cluster;
    private final ReplicationSettings replication;
    private final List<RaftGroup> groups;
    private final List<TopicLogStateMachine> stateMachines;
    private final RaftPeerId self;
    private final RaftProperties properties;
    /** One client per group, replaced when it fails ({@link #viaClient}); written under this object's lock. */
    private final List<RaftClient> clients = new ArrayList<>();
    /** Names this node's submits to its own server (Ratis's retry cache keys on client id and call id). */
    private final ClientId localClient = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private volatile RaftServer server;

    /**
     * @param stateMachines one per group, in group order: group {@code g}'s applies its log
     */
    public RatisGroups(ClusterSettings cluster, ReplicationSettings replication,
                       List<TopicLogStateMachine> stateMachines) {
        this.cluster = cluster;
        this.replication = replication;
        this.stateMachines = List.copyOf(stateMachines);
        this.self = RaftPeerId.valueOf(cluster.nodeName());
        List<RaftGroup> gs = new ArrayList<>();
        for (int g = 0; g < stateMachines.size(); g++) {
            gs.add(RaftGroup.valueOf(groupId(g), peers(cluster)));
        }
        this.groups = List.copyOf(gs);
        this.properties = properties(cluster, replication);
    }

    /** A group's id: the same on every node, from its number alone. */
    static RaftGroupId groupId(int group) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("ringcast-g" + group).getBytes(StandardCharsets.UTF_8)));
    }

    /** The member that should lead group {@code g}: {@code g mod members}, so each leads about {@code groups / members}. */
    String preferredLeader(int g) {
        return cluster.members().get(Math.floorMod(g, cluster.members().size())).name();
    }

    /** A leadership transfer of this node's under way, or null; at most one at a time (see the class comment). */
    private volatile CompletableFuture<RaftClientReply> transfer;
    /** When each group may be tried again after a transfer that failed; the caller's thread only. */
    private long[] retryAfterNs;

    /**
     * Hands the leadership of one group this node leads, and should not, to its preferred leader,
     * when that member answered this node within {@code failureDetectionMs / 2}; at most one
     * transfer at a time, and a group whose transfer failed is left for a few seconds. One thread
     * (the engine's watch thread).
     */
    public void placeLeaders() {
        RaftServer s = server;
        CompletableFuture<RaftClientReply> t = transfer;
        if (s == null || (t != null && !t.isDone())) {
            return;
        }
        if (retryAfterNs == null) {
            retryAfterNs = new long[groups.size()];
        }
        long now = System.nanoTime();
        for (int g = 0; g < groups.size(); g++) {
            DivisionInfo info = info(g);
            String preferred = preferredLeader(g);
            if (info == null || !info.isLeader() || !info.isLeaderReady() || preferred.equals(self.toString())
                    || now - retryAfterNs[g] < 0 || !recentlyHeard(info, preferred)) {
                continue;
            }
            int group = g;
            long timeoutMs = Math.max(200, replication.failureDetectionMs());
            log.info("cluster g{}: handing the leadership to {}, its preferred leader", g, preferred);
            CompletableFuture<RaftClientReply> sent;
            try {
                sent = s.transferLeadershipAsync(new TransferLeadershipRequest(localClient, self,
                        groups.get(g).getGroupId(), callIds.incrementAndGet(), RaftPeerId.valueOf(preferred), timeoutMs));
            } catch (IOException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            transfer = sent.whenComplete((reply, e) -> {
                        if (e != null || !reply.isSuccess()) {
                            retryAfterNs[group] = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                            log.info("cluster g{}: the leadership stays here for now: {}", group,
                                    e != null ? e.toString() : String.valueOf(reply.getException()));
                        }
                    });
            return;
        }
    }

    /** Whether this leader heard from {@code member} within half the failure detection time. */
    private boolean recentlyHeard(DivisionInfo info, String member) {
        for (RaftProtos.ServerRpcProto f : info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList()) {
            if (nameOf(f).equals(member)) {
                return f.getLastRpcElapsedTimeMs() <= replication.failureDetectionMs() / 2;
            }
        }
        return false;
    }

    /**
     * The members this node heard from within {@code ms} in its groups' traffic, itself included:
     * as a leader, its followers that answered; as a follower, its leader. With fewer groups than
     * members, a node that leads none sees only its leaders. Any thread.
     */
    public Set<String> heardWithin(long ms) {
        Set<String> heard = new HashSet<>();
        heard.add(self.toString());
        for (int g = 0; g < groups.size(); g++) {
            DivisionInfo info = info(g);
            if (info == null) {
                continue;
            }
            RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
            if (role.hasLeaderInfo()) {
                for (RaftProtos.ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
                    if (f.getLastRpcElapsedTimeMs() <= ms) {
                        heard.add(nameOf(f));
                    }
                }
            } else if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()) {
                RaftProtos.ServerRpcProto leader = role.getFollowerInfo().getLeaderInfo();
                if (leader.getLastRpcElapsedTimeMs() <= ms) {
                    heard.add(nameOf(leader));
                }
            }
        }
        return heard;
    }

    /** A member's name as Ratis's role info gives it. */
    private static String nameOf(RaftProtos.ServerRpcProto member) {
        return member.getId().getId().toStringUtf8();
    }

    private static List<RaftPeer> peers(ClusterSettings cluster) {
        List<RaftPeer> peers = new ArrayList<>();
        List<ClusterSettings.Member> members = cluster.members();
        for (int i = 0; i < members.size(); i++) {
            ClusterSettings.Member m = members.get(i);
            peers.add(RaftPeer.newBuilder().setId(m.name()).setAddress(m.host() + ":" + m.membershipPort()).build());
        }
        return peers;
    }

    /**
     * The engine's settings from {@link ReplicationSettings} (docs/clustering.md says why each):
     * elections after {@code failureDetectionMs} to twice that without a leader's heartbeat (half
     * of that lost heartbeats between JVMs starved of CPU: five nodes on two cores, starting), with
     * a pre-vote (a member that still hears its leader does not vote for another, and a member cut
     * off cannot disrupt the others when it comes back); a leader that has not heard from a
     * majority for twice {@code failureDetectionMs} steps down (check-quorum), so a node cut
     * off from the majority refuses publishes instead of holding them; commit waits for fsync on a
     * majority unless {@code commitFsync} is off; snapshots every {@link #snapshotEntries} entries of
     * this member's {@link ReplicationSettings#snapshotLogBytesOf}, so that the nodes do not all write one at once.
     */
    static RaftProperties properties(ClusterSettings cluster, ReplicationSettings replication) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        ClusterSettings.Member me = cluster.self();
        // one port for members, clients and admin requests alike (they fall back to the server's)
        GrpcConfigKeys.Server.setHost(p, me.host());
        GrpcConfigKeys.Server.setPort(p, me.membershipPort());
        RaftServerConfigKeys.setStorageDir(p, List.of(replication.dataDir().resolve("ratis").toFile()));
        long fd = replication.failureDetectionMs();
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(fd, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * fd, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(Math.max(1000, 3 * fd),
                TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.LeaderElection.setPreVote(p, true);
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p, TimeDuration.valueOf(2 * fd,
                TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, !replication.commitFsync());
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(p, appenderRetryPolicy(fd));
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("8MB"));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf("1MB"));
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
        // a member that is down must not hold every other member's log: past a snapshot it gets the snapshot
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        int index = cluster.members().indexOf(me);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, snapshotEntries(replication.snapshotLogBytesOf(index)));
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        // a reply slower than this closes the client's connection, failing every request on it: as
        // long as a publish may wait
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(replication.replicationTimeoutMs(),
                TimeUnit.MILLISECONDS));
        return p;
    }

    /**
     * How long a leader waits before it tries a member that failed again: 1 ms for the first 10
     * failures, {@code failureDetectionMs / 10} for the next 20, then {@code failureDetectionMs / 2}
     * (Ratis randomises each wait by half either way). Ratis's default waits 5 s after 30 failures,
     * which a member down or cut off for some 20 s reaches: when it came back, each leader heard it
     * only at its next try, and a node restarted while the others snapshotted was caught up 7 s
     * after it started (RatisClusterNodeTest, 09:10:51 to 09:10:58 in one run), a heal of a
     * partition would be as slow. A try costs a connection attempt; every half failure detection
     * time is nothing beside the heartbeats.
     */
    static String appenderRetryPolicy(long failureDetectionMs) {
        return "1ms,10, " + Math.max(1, failureDetectionMs / 10) + "ms,20, " + Math.max(1, failureDetectionMs / 2)
                + "ms," + Integer.MAX_VALUE;
    }

    /**
     * Entries between two snapshots: Ratis counts entries, the config bytes; an entry is a batch of
     * publishes, a few hundred bytes idle, tens of kB under load. One per 4 kB of
     * {@code snapshotLogBytes}, 256 at least (the smallest config, 64 kB, would give 16: a snapshot,
     * which holds every topic's newest value, after as few idle publishes).
     */
    static long snapshotEntries(long snapshotLogBytes) {
        return Math.max(256, snapshotLogBytes / 4096);
    }

    /**
     * Starts the server: groups found in the data directory are recovered (their logs and
     * snapshots loaded into the state machines), the others made anew. Returns once the server
     * runs, not once leaders are known.
     */
    public void start() throws IOException {
        RaftServer s = RaftServer.newBuilder()
                .setServerId(self)
                .setProperties(properties)
                .setStateMachineRegistry(id -> stateMachines.get(indexOf(id)))
                .build();
        server = s;
        s.start();
        Set<RaftGroupId> existing = new HashSet<>();
        s.getGroupIds().forEach(existing::add);
        for (RaftGroup g : groups) {
            if (!existing.contains(g.getGroupId())) {
                RaftClientReply reply = s.groupManagement(GroupManagementRequest.newAdd(localClient, self,
                        callIds.incrementAndGet(), g, true));
                if (!reply.isSuccess()) {
                    throw new IOException("cannot make group " + g.getGroupId() + ": " + reply.getException());
                }
            }
        }
        synchronized (this) {
            for (int g = 0; g < groups.size(); g++) {
                clients.add(newClient(g));
            }
        }
        log.info("cluster: Ratis server {} on {}:{} with {} groups", self, cluster.self().host(),
                cluster.self().membershipPort(), groups.size());
    }

    /** A group's client: it finds the leader, and sends again on a leader change, within {@code replicationTimeoutMs}. */
    private RaftClient newClient(int g) {
        RaftClient.Builder b = RaftClient.newBuilder()
                .setProperties(properties)
                .setRaftGroup(groups.get(g));
        String leader = leader(g);
        if (leader != null) {
            // the leader this node knows: a client that guesses sends to another member first, whose
            // NotLeaderException makes the client close its connection to that member, failing every
            // other request it has on it
            b.setLeaderId(RaftPeerId.valueOf(leader));
        }
        return b
                .setClientId(ClientId.randomId())
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                        (int) Math.max(1, replication.replicationTimeoutMs() / CLIENT_RETRY_MS),
                        TimeDuration.valueOf(CLIENT_RETRY_MS, TimeUnit.MILLISECONDS)))
                .build();
    }

    private synchronized RaftClient client(int g) {
        return clients.get(g);
    }

    /**
     * Replaces group {@code g}'s client after one of its requests failed, unless that was done
     * already. A Ratis client's ordered requests share a sliding window that, once one request
     * has failed for good, fails every later request at once ({@code SlidingWindow.Client.fail}):
     * the client is of no more use.
     */
    private synchronized void replaceClient(int g, RaftClient failed) {
        if (clients.isEmpty() || clients.get(g) != failed) {
            return;
        }
        clients.set(g, newClient(g));
        try {
            failed.close();
        } catch (IOException e) {
            log.debug("closing a failed Ratis client", e);
        }
    }

    private int indexOf(RaftGroupId id) {
        for (int g = 0; g < groups.size(); g++) {
            if (groups.get(g).getGroupId().equals(id)) {
                return g;
            }
        }
        throw new IllegalArgumentException("group " + id + " is not one of this cluster's " + groups.size()
                + " groups (was cluster.groups changed? it must stay as the data was made)");
    }

    /**
     * Submits an entry to group {@code g}. The future completes with the state machine's response
     * once the leader applied it; it fails when the group has no leader for the client's tries, or
     * with the engine's exception. A failed submit may still have been committed. Any thread.
     */
    public CompletableFuture<byte[]> submit(int g, byte[] entry) {
        RaftServer s = server;
        if (s == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("the Ratis server is not running"));
        }
        Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(entry));
        DivisionInfo info = info(g);
        if (info != null && info.isLeader()) {
            RaftClientRequest request = RaftClientRequest.newBuilder()
                    .setClientId(localClient).setServerId(self).setGroupId(groups.get(g).getGroupId())
                    .setCallId(callIds.incrementAndGet()).setMessage(message)
                    .setType(RaftClientRequest.writeRequestType()).build();
            try {
                return s.submitClientRequestAsync(request).thenCompose(reply -> {
                    if (reply.isSuccess()) {
                        return CompletableFuture.completedFuture(reply.getMessage().getContent().toByteArray());
                    }
                    if (reply.getNotLeaderException() != null // lost the leadership meanwhile: not logged
                            || reply.getException() instanceof LeaderNotReadyException) { // elected, not ready yet
                        return viaClient(g, message); // the client waits for a leader that takes it
                    }
                    throw new CompletionException(reply.getException());
                });
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        return viaClient(g, message);
    }

    private CompletableFuture<byte[]> viaClient(int g, Message message) {
        RaftClient client = client(g);
        // bounded here too: requests of a client whose connection was closed under them were seen
        // never to complete (docs/clustering.md, "The next engine"), holding the batcher's entries
        return client.async().send(message).orTimeout(replication.replicationTimeoutMs(), TimeUnit.MILLISECONDS)
                .handle((reply, e) -> {
            if (e != null || !reply.isSuccess()) {
                replaceClient(g, client);
                throw new CompletionException(e != null ? e : reply.getException());
            }
            return reply.getMessage().getContent().toByteArray();
        });
    }

    /**
     * Asks group {@code g}'s leader how many entries its log has applied (a read the leader
     * answers): a joining node has caught up on the group once its own log applied as many.
     */
    public CompletableFuture<Long> leaderApplied(int g) {
        // ordered, as the submits: one that fails replaces the client
        RaftClient client = client(g);
        return client.async().sendReadOnly(Message.EMPTY).handle((reply, e) -> {
            if (e != null || !reply.isSuccess()) {
                replaceClient(g, client);
                throw new CompletionException(e != null ? e : reply.getException());
            }
            return TopicLogStateMachine.appliedFrom(reply.getMessage());
        });
    }

    private DivisionInfo info(int g) {
        RaftServer s = server;
        if (s == null) {
            return null;
        }
        try {
            return s.getDivision(groups.get(g).getGroupId()).getInfo();
        } catch (IOException e) { // not added yet, or closed
            return null;
        }
    }

    /** Group {@code g}'s leader as this node knows it, or null while none is known. Any thread. */
    public String leader(int g) {
        DivisionInfo info = info(g);
        RaftPeerId id = info == null ? null : info.getLeaderId();
        return id == null ? null : id.toString();
    }

    /** Whether this node is group {@code g}'s leader, as its Ratis division sees itself now. Any thread. */
    public boolean isLeader(int g) {
        DivisionInfo info = info(g);
        return info != null && info.isLeader();
    }

    public long term(int g) {
        DivisionInfo info = info(g);
        return info == null ? 0 : info.getCurrentTerm();
    }

    /** The index of the last entry group {@code g}'s log on this node knows committed. */
    public long commitIndex(int g) {
        RaftServer s = server;
        try {
            return s == null ? 0 : s.getDivision(groups.get(g).getGroupId()).getRaftLog().getLastCommittedIndex();
        } catch (IOException e) {
            return 0;
        }
    }

    /** The index of the last entry this node applied of group {@code g}. */
    public long appliedIndex(int g) {
        DivisionInfo info = info(g);
        return info == null ? 0 : info.getLastAppliedIndex();
    }

    /** The index of the last entry in group {@code g}'s log on this node. */
    public long lastAppended(int g) {
        RaftServer s = server;
        try {
            return s == null ? 0 : s.getDivision(groups.get(g).getGroupId()).getRaftLog().getNextIndex() - 1;
        } catch (IOException e) {
            return 0;
        }
    }

    /** Stops the server and the clients (peers see this node gone). Idempotent. */
    @Override
    public void close() {
        List<RaftClient> closing;
        synchronized (this) {
            closing = new ArrayList<>(clients);
            clients.clear();
        }
        for (RaftClient c : closing) {
            try {
                c.close();
            } catch (IOException e) {
                log.debug("closing a Ratis client", e);
            }
        }
        RaftServer s = server;
        server = null;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                log.warn("cluster: closing the Ratis server: {}", e.toString());
            }
        }
    }
}
