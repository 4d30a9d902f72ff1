package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigRules.between;
import static io.ringcast.server.config.ConfigRules.hostName;

import io.ringcast.server.config.ServerConfig.Cluster;
import io.ringcast.server.config.ServerConfig.Cluster.Member;
import java.util.HashSet;
import java.util.Set;

/**
 * The checks on section {@code cluster}, made only when it is enabled: ranges, and a member list
 * with unique names and ports (failure detection's included) that includes this node. Each throws a {@link ConfigException}
 * naming the first bad key.
 */
final class ClusterRules {
    /** {@code RaftStack.FD_SOCK_PORT_OFFSET}: failure detection's ports start this far above the membership port. */
    static final int FD_PORT_OFFSET = 1000;

    private ClusterRules() {
    }

    /** Checks {@code cluster}; throws {@link ConfigException} naming the first bad key. */
    static void validate(Cluster cluster) {
        if (!cluster.enabled()) {
            return;
        }
        between("cluster.replicationTimeoutMs", cluster.replicationTimeoutMs(), 100, 600_000);
        between("cluster.failureDetectionMs", cluster.failureDetectionMs(), 200, 60_000);
        between("cluster.voteTimeoutMs", cluster.voteTimeoutMs(), 100, 60_000);
        between("cluster.snapshotLogBytes", cluster.snapshotLogBytes(), 64 * 1024, 1L << 30);
        if (!cluster.engine().equals("jgroups") && !cluster.engine().equals("ratis")) {
            throw new ConfigException("cluster.engine", "key 'cluster.engine' must be 'jgroups' or 'ratis', got "
                    + ConfigText.quote(cluster.engine()));
        }
        between("cluster.groups", cluster.groups(), 0, 256); // jgroups runs one group whatever it says (logged)
        if (!cluster.secretFile().isEmpty() && !cluster.engine().equals("jgroups")) {
            throw new ConfigException("cluster.secretFile", "key 'cluster.secretFile': encryption between nodes is "
                    + "built for cluster.engine 'jgroups' only so far, not " + ConfigText.quote(cluster.engine()));
        }
        if (!cluster.dataDir().isEmpty() && cluster.dataDir().isBlank()) {
            throw new ConfigException("cluster.dataDir", "key 'cluster.dataDir' must be a directory path, or empty "
                    + "for data/<nodeName>, got " + ConfigText.quote(cluster.dataDir()));
        }
        if (cluster.members().isEmpty()) {
            throw new ConfigException("cluster.members", "key 'cluster.members' must list every node of the "
                    + "cluster (name, host, membershipPort), this one included");
        }
        Set<String> names = new HashSet<>();
        Set<String> endpoints = new HashSet<>();
        for (int i = 0; i < cluster.members().size(); i++) {
            Member m = cluster.members().get(i);
            String key = "cluster.members[" + i + "]";
            if (m.name() == null || m.name().isBlank()) {
                throw new ConfigException(key + ".name", "key '" + key + ".name' must be a node name, got "
                        + ConfigText.quote(String.valueOf(m.name())));
            }
            hostName(key + ".host", m.host() == null ? "" : m.host());
            // failure detection needs the ten ports from membershipPort + FD_PORT_OFFSET
            between(key + ".membershipPort", m.membershipPort(), 1, 65535 - FD_PORT_OFFSET - 10);
            if (!names.add(m.name())) {
                throw new ConfigException(key + ".name", "key '" + key + ".name': node name '" + m.name()
                        + "' is listed twice");
            }
            if (!endpoints.add(m.host() + ":" + m.membershipPort())) {
                throw new ConfigException(key, "key '" + key + "': a port of " + m.host()
                        + " is used twice among the members");
            }
        }
        checkFailureDetectionPorts(cluster);
        if (!names.contains(cluster.nodeName())) {
            throw new ConfigException("cluster.nodeName", "key 'cluster.nodeName' must name one of cluster.members "
                    + names + ", got " + ConfigText.quote(cluster.nodeName()));
        }
    }

    /**
     * Failure detection listens on one of the ten ports from {@code membershipPort + FD_PORT_OFFSET}:
     * none of those may be another member's membership port on the same host.
     */
    private static void checkFailureDetectionPorts(Cluster cluster) {
        for (int i = 0; i < cluster.members().size(); i++) {
            Member m = cluster.members().get(i);
            for (Member other : cluster.members()) {
                int fd = other.membershipPort() + FD_PORT_OFFSET;
                if (other.host().equals(m.host()) && m.membershipPort() >= fd && m.membershipPort() < fd + 10) {
                    String key = "cluster.members[" + i + "].membershipPort";
                    throw new ConfigException(key, "key '" + key + "': port " + m.membershipPort() + " of " + m.host()
                            + " is among the failure detection ports of '" + other.name() + "' (" + fd + " to "
                            + (fd + 9) + ")");
                }
            }
        }
    }
}
