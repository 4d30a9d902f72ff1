package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.ClusterSettings;
import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.blocks.cs.NioServer;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.FD_ALL3;
import org.jgroups.protocols.FD_SOCK2;
import org.jgroups.protocols.FRAG4;
import org.jgroups.protocols.MERGE3;
import org.jgroups.protocols.MFC;
import org.jgroups.protocols.SERIALIZE;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.TCP_NIO2;
import org.jgroups.protocols.UFC;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.VERIFY_SUSPECT2;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.protocols.pbcast.STABLE;
import org.jgroups.protocols.raft.ELECTION2;
import org.jgroups.protocols.raft.NO_DUPES;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.protocols.raft.REDIRECT;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.SecretKey;

/**
 * The JGroups protocol stack of one Raft group on this node, built in code, bottom to top, in one
 * place:
 * <ol>
 *   <li>{@code TCP_NIO2} (non-blocking: a member behind a cut never holds up messages to the others)
 *       on the member's host and membership port, its outgoing connections bound to the
 *       same host ({@code client_bind_addr}), so every packet a node sends carries its own address:
 *       a network cut by source and destination address (the fault suite's, on 127.0.0.11..15)
 *       cuts exactly the configured pairs;</li>
 *   <li>{@code TCPPING} with every member's address, {@code MERGE3} (1 to 3 s) so that the sides of a
 *       healed cut become one view again;</li>
 *   <li>failure detection: {@code FD_SOCK2} (a killed process is suspected at once; its client
 *       sockets bound to the host as well), {@code FD_ALL3} heartbeats, {@code VERIFY_SUSPECT2};</li>
 *   <li>with a cluster key ({@code cluster.secretFile}): {@link OtherKeyLog}, {@code SYM_ENCRYPT} and
 *       {@code SERIALIZE}, so that everything above travels encrypted, headers included
 *       ({@link #encryption});</li>
 *   <li>{@code NAKACK2}, {@code UNICAST3}, {@code STABLE}, {@code NO_DUPES} (refuses a second node
 *       with a name already in the view), {@code GMS}, flow control ({@code UFC}, {@code MFC}),
 *       {@code FRAG4};</li>
 *   <li>jgroups-raft: {@code ELECTION2} (elections with a pre-vote, which survives partial
 *       connectivity where {@code ELECTION} can stay leaderless), {@code RAFT} ({@link ResendingRaft}: the
 *       engine's, with our mends to its resending and its follower) with the static member
 *       list (the configured names) and a {@link SegmentedLog} (the log in segment files, truncated off
 *       the engine's thread) under
 *       {@code dataDir/<group>/<node>.log/}, and {@code REDIRECT}, which forwards a submit made on a
 *       follower to the leader. The engine's {@code CLIENT} (a socket for outside clients) is not used.</li>
 * </ol>
 * How followers learn the commit index: with the next AppendEntries (under load, the next batch,
 * milliseconds later) and, once the leader's queue has been idle for {@code resend_interval}, in the
 * commit message its resend pass sends to every follower behind; hence a short
 * {@code resendIntervalMs} (100 ms shipped), which costs nothing while every follower is caught up
 * and is never reached under load (the pass runs only when the queue stays empty that long). The
 * engine's own answer, {@code send_commits_immediately}, stays off: in 1.1.4 the leader sends a
 * commit message to every follower on every acknowledgement, each answered with another
 * acknowledgement; with 5 members and 16 submits in flight this storm filled the runner's queue
 * within a second, every submit failed with "processing queue is full" and commits stopped for good
 * ({@code RaftGroupTest#engineLockUpWithTheIssuesConfiguration} with
 * {@code -Dringcast.raft.reproduce=true -Dringcast.raft.sendCommitsImmediately=true} reproduces it).
 */
public final class RaftStack {

    /** {@code FD_SOCK2} listens on the group's port plus this (or one of the next 10 ports). */
    public static final int FD_SOCK_PORT_OFFSET = 1000;

    private RaftStack() {
    }

    /** The directory under which {@code group} keeps this node's log and snapshot. */
    public static Path groupDir(RaftSettings raft, String group) {
        return raft.dataDir().resolve(group);
    }

    /**
     * A channel for {@code group} on this node, not connected yet; its logical name is the node's name
     * and its cluster name should be {@code group}.
     */
    public static JChannel newChannel(ClusterSettings cluster, RaftSettings raft, String group) throws Exception {
        JGroupsLogFactory.install();
        ClusterSettings.Member self = cluster.self();
        InetAddress bind = address(self.host());
        List<InetSocketAddress> initialHosts = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (ClusterSettings.Member m : cluster.members()) {
            initialHosts.add(new InetSocketAddress(address(m.host()), m.membershipPort()));
            names.add(m.name());
        }
        // non-blocking: with TCP, one thread sends every message, and a connect to, or a full socket
        // of, a member behind a network cut (packets dropped) held it for seconds, so heartbeats
        // to the reachable members stopped and the majority side of a cut fell apart into
        // singletons (the fault suite's partition); TCP_NIO2 connects and writes without blocking
        // and keeps at most max_send_buffers messages per unreachable peer (UNICAST3 resends them)
        TCP_NIO2 tcp = new TCP_NIO2();
        tcp.setValue("bind_addr", bind);
        tcp.setValue("bind_port", self.membershipPort());
        tcp.setValue("port_range", 0);
        tcp.setClientBindAddr(bind);
        // JGroups leaves Nagle on: at a few hundred publishes a second, an AppendEntries or its ack
        // written behind an unacknowledged one waited for the peer's delayed ACK (up to 40 ms)
        tcp.tcpNodelay(true);
        RAFT consensus = new ResendingRaft()
                .raftId(self.name())
                .members(names)
                .logDir(groupDir(raft, group).toString())
                .logUseFsync(raft.logUseFsync())
                .maxLogSize(raft.maxLogSizeBytes())
                .resendInterval(raft.resendIntervalMs())
                // off: in 1.1.4 it livelocks the leader under load (see the class javadoc)
                .sendCommitsImmediately(false);
        consensus.logClass(SegmentedLog.class.getName());
        List<Protocol> stack = new ArrayList<>(List.of(
                tcp,
                new TCPPING().setInitialHosts(initialHosts).setPortRange(0),
                new MERGE3().setMinInterval(1000).setMaxInterval(3000),
                new BoundFdSock().setBindAddress(bind).setOffset(FD_SOCK_PORT_OFFSET).setPortRange(10),
                new HeardFrom().setTimeout(raft.failureDetectionTimeoutMs()).setInterval(raft.heartbeatIntervalMs()),
                new VERIFY_SUSPECT2().setTimeout(raft.verifySuspectMs())));
        if (raft.clusterKey() != null) {
            SYM_ENCRYPT encrypt = encryption(raft.clusterKey());
            stack.add(new OtherKeyLog(encrypt, self.name()));
            stack.add(encrypt);
            stack.add(new SERIALIZE()); // the headers above into the encrypted payload
        }
        stack.addAll(List.of(
                new NAKACK2(),
                new UNICAST3(),
                new STABLE(),
                new NO_DUPES(),
                new GMS().setJoinTimeout(1000).printLocalAddress(false),
                new UFC(),
                new MFC(),
                new FRAG4(),
                new ELECTION2().voteTimeout(raft.voteTimeoutMs()),
                consensus,
                new REDIRECT()));
        JChannel channel = new JChannel(stack);
        channel.name(self.name());
        return channel;
    }

    /**
     * {@code SYM_ENCRYPT} with the cluster's key, below {@code NAKACK2} as JGroups wants it, with
     * {@code SERIALIZE} above it: every message of the protocols above the failure detectors
     * (membership, Raft, publishes) is encrypted whole, its headers inside, with AES in CBC mode and
     * a fresh IV each; one that does not decrypt with the key (a
     * node with another key, or none) is dropped, and logged ({@link OtherKeyLog}). The failure detectors' heartbeats
     * below it carry no data.
     */
    private static SYM_ENCRYPT encryption(SecretKey key) {
        SYM_ENCRYPT encrypt = new SYM_ENCRYPT();
        encrypt.symAlgorithm("AES/CBC/PKCS5Padding");
        encrypt.symIvLength(16);
        encrypt.setSecretKey(key);
        return encrypt;
    }

    private static InetAddress address(String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cluster member host '" + host + "' does not resolve", e);
        }
    }

    /**
     * {@code FD_ALL3} that also keeps when this node last received anything (a message, a batch or
     * a heartbeat) from each member, for {@link RaftGroup#msSinceHeardFrom}: heartbeats are sent
     * by JGroups' timer, so a member whose engine thread is busy (a snapshot) is still heard, while
     * one behind a network cut is not.
     *
     * <p>It also keeps when each member of this node's view last <em>multicast</em> to it, for
     * {@link RaftGroup#leaveMembersCountingThisNodeOut}: a member multicasts to the members of its own
     * view only, at least once per heartbeat interval ({@code FD_ALL3} sends a heartbeat when
     * nothing else went), so a member of this node's view that answers it (its unicasts come) but
     * multicasts nothing lives in a view without this node. Each member counts from the latest
     * view's installation at the earliest.
     */
    static final class HeardFrom extends FD_ALL3 {
        /** Per member, when last heard and last multicast to this node: a clock each, set per message without allocating. */
        private final Map<Address, AtomicLong> lastHeardNs = new ConcurrentHashMap<>();
        private final Map<Address, AtomicLong> lastMulticastNs = new ConcurrentHashMap<>();
        /** How long a non-member stays in {@link #lastHeardNs} after it was last heard: far beyond any watch's silence. */
        private static final long FORGOTTEN_AFTER_MS = 60_000;

        HeardFrom() {
            setId(ClassConfigurator.getProtocolId(FD_ALL3.class)); // as BoundFdSock: FD_ALL3's header id
        }

        @Override
        protected void update(Address sender, boolean heartbeat, boolean ignoreIfAbsent) {
            super.update(sender, heartbeat, ignoreIfAbsent);
            if (sender != null) {
                touch(lastHeardNs, sender, System.nanoTime());
            }
        }

        @Override
        public Object up(Message msg) {
            if (msg.getDest() == null && msg.getSrc() != null) {
                touch(lastMulticastNs, msg.getSrc(), System.nanoTime());
            }
            return super.up(msg);
        }

        @Override
        public void up(MessageBatch batch) {
            if (batch.multicast() && batch.sender() != null) {
                touch(lastMulticastNs, batch.sender(), System.nanoTime());
            }
            super.up(batch);
        }

        @Override
        public Object down(Event evt) {
            if (evt.getType() == Event.VIEW_CHANGE) {
                // every member of a view just installed counts from now: it installed the view too
                View view = evt.getArg();
                long now = System.nanoTime();
                lastMulticastNs.keySet().retainAll(view.getMembers());
                forgetSilentNonMembers(view.getMembers(), FORGOTTEN_AFTER_MS);
                for (Address member : view.getMembersRaw()) {
                    touch(lastMulticastNs, member, now);
                }
            }
            return super.down(evt);
        }

        /**
         * Forgets when each non-member of {@code members} was last heard, if over {@code silentMs}
         * ago: a member restarted comes back under a new address, and its old one would stay
         * (one entry per restart) where no watch asks about it any more.
         */
        void forgetSilentNonMembers(List<Address> members, long silentMs) {
            lastHeardNs.entrySet().removeIf(heard -> !members.contains(heard.getKey()) && msSince(heard.getValue()) > silentMs);
        }

        /** Milliseconds since anything came from {@code member}; {@link Long#MAX_VALUE} if nothing ever did. */
        long msSinceHeardFrom(Address member) {
            return msSince(lastHeardNs.get(member));
        }

        /**
         * Milliseconds since {@code member} last multicast to this node, or since this node's view
         * was installed if later; {@link Long#MAX_VALUE} for one outside the view.
         */
        long msSinceMulticastFrom(Address member) {
            return msSince(lastMulticastNs.get(member));
        }

        private static void touch(Map<Address, AtomicLong> clocks, Address member, long now) {
            AtomicLong clock = clocks.get(member);
            if (clock == null) {
                clock = clocks.computeIfAbsent(member, m -> new AtomicLong());
            }
            clock.set(now);
        }

        private static long msSince(AtomicLong ns) {
            return ns == null ? Long.MAX_VALUE : (System.nanoTime() - ns.get()) / 1_000_000;
        }
    }

    /**
     * {@code FD_SOCK2} whose connections to peers leave from the node's own address: JGroups binds
     * only its server socket to {@code bind_addr} and lets the OS choose the source of the client
     * sockets (127.0.0.1 on loopback, whatever the node's address).
     */
    static final class BoundFdSock extends FD_SOCK2 {
        BoundFdSock() {
            // the header id JGroups registers for FD_SOCK2 (a subclass has none of its own)
            setId(ClassConfigurator.getProtocolId(FD_SOCK2.class));
        }

        @Override
        protected NioServer createServer(int[] bindPorts) {
            NioServer server = super.createServer(bindPorts);
            server.clientBindAddress(bind_addr);
            return server;
        }
    }
}
