package io.ringcast.server.internal;

import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterSettings;
import io.ringcast.cluster.ReplicationSettings;
import io.ringcast.cluster.UpdateSink;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.TopicPath;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * This node's link to the cluster ({@code cluster.enabled}): joins the Raft group, waits until the
 * node has caught up, and feeds the updates every node applies into the inbound ring, in log order,
 * with the sequence the log gave them; its snapshots carry the topics' values and history
 * ({@link TopicSnapshotContent}). (A session's publishes take the other direction, {@link ClusterRoute}.)
 *
 * <p>Thread contract: {@link #join} on the thread that starts the node; {@link #apply} on the Raft
 * engine's runner thread (never an event loop), which it holds while the inbound ring is full, so
 * that the engine stops applying until the sequencer catches up.
 */
final class ClusterLink implements UpdateSink {
    private static final Logger log = LoggerFactory.getLogger(ClusterLink.class);

    private final PathLimits pathLimits;
    private final SequencerProxy inbound;

    private ClusterLink(PathLimits pathLimits, SequencerProxy inbound) {
        this.pathLimits = pathLimits;
        this.inbound = inbound;
    }

    /**
     * Joins the cluster and waits until this node has applied every entry committed before it joined:
     * only then may it bind its port, so that no client sees a node that is still filling up.
     *
     * @return the joined node; on failure it is closed and an {@link IllegalStateException} says why
     */
    static ClusterNode join(ServerConfig.Cluster c, ServerConfig.Limits limits, SequencerProxy inbound)
            throws InterruptedException {
        List<ClusterSettings.Member> members = new ArrayList<>();
        for (ServerConfig.Cluster.Member m : c.members()) {
            members.add(new ClusterSettings.Member(m.name(), m.host(), m.membershipPort()));
        }
        // the log's bounds decide whether a publish is applied: the same on every node (docs/clustering.md)
        ClusterSettings settings = new ClusterSettings(c.nodeName(), members, limits.maxTopics(),
                limits.publisherLedgers(), limits.publisherLedgersPerPrincipal());
        if (c.engine().equals("jgroups") && c.groups() > 1) {
            log.warn("cluster: cluster.groups {} is not used: cluster.engine 'jgroups' runs one Raft group ('ratis' runs "
                    + "several)", c.groups());
        }
        ReplicationSettings replication = new ReplicationSettings(Path.of(c.dataDirOrDefault()), c.commitFsync(),
                c.failureDetectionMs(), c.voteTimeoutMs(), c.replicationTimeoutMs(), c.snapshotLogBytes(),
                c.engine().equals("ratis") ? ReplicationSettings.Engine.RATIS : ReplicationSettings.Engine.JGROUPS,
                c.groupsOrDefault(), c.secretFile().isEmpty() ? null : Path.of(c.secretFile()));
        ClusterNode cluster;
        try {
            cluster = new ClusterNode(settings, replication, new ClusterLink(limits.pathLimits(), inbound),
                    new TopicSnapshotContent(inbound, limits.pathLimits()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read cluster.secretFile " + c.secretFile() + ": " + e, e);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        if (!c.secretFile().isEmpty()) {
            log.info("cluster: messages between nodes encrypted with the key of cluster.secretFile {}", c.secretFile());
        } else {
            log.warn("cluster: messages between nodes travel in the clear, and any process that reaches the membership "
                    + "ports can join: set cluster.secretFile (docs/clustering.md)");
        }
        try {
            cluster.start();
        } catch (InterruptedException e) {
            cluster.close();
            throw e;
        } catch (Exception e) {
            cluster.close();
            throw new IllegalStateException("cannot join the cluster as '" + c.nodeName() + "' (membership port "
                    + settings.self().membershipPort() + ", cluster.dataDir '" + c.dataDirOrDefault() + "'): "
                    + e.getMessage(), e);
        }
        log.info("cluster: joined as '{}' (data in {}), catching up before accepting clients", c.nodeName(),
                c.dataDirOrDefault());
        try {
            awaitCaughtUp(cluster);
        } catch (InterruptedException | IllegalStateException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private static void awaitCaughtUp(ClusterNode cluster) throws InterruptedException {
        while (true) {
            try {
                cluster.ready().get(10, TimeUnit.SECONDS);
                return;
            } catch (TimeoutException e) {
                log.info("cluster: still catching up: {}", cluster.status());
            } catch (ExecutionException e) {
                throw new IllegalStateException("cluster: could not catch up", e.getCause());
            }
        }
    }

    /** An update the log applies: into the inbound ring like a publish. Waits for room. Engine runner thread. */
    @Override
    public void apply(String path, long topicSequence, int incarnation, byte[] value) {
        String[] segments;
        try {
            segments = TopicPath.validate(path, pathLimits);
        } catch (ProtocolException e) {
            log.error("cluster: update of '{}' not applied here ({}): are limits.maxPathBytes and maxPathDepth the "
                    + "same on every node?", path, e.reason());
            return;
        }
        inbound.applyFromCluster(path, segments, topicSequence, incarnation, value);
    }

    /** A removal the log applies: into the inbound ring, in order with the updates. Waits for room. Engine runner thread. */
    @Override
    public void removed(String path, long lastSequence, int incarnation) {
        inbound.removeFromCluster(path, incarnation);
    }
}
