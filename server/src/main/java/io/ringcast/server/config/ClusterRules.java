package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigRules.between;
import static io.ringcast.server.config.ConfigRules.hostName;

import io.ringcast.server.config.ServerConfig.Cluster;
import io.ringcast.server.config.ServerConfig.Cluster.Member;
import java.util.HashSet;
import java.util.Set;

/**
 * The checks on section {@code cluster}, made only when it is enabled: ranges, and a member list
 * with unique names and ports that includes this node. Each throws a {@link ConfigException}
 * naming the first bad key.
 */
final class ClusterRules {

    private ClusterRules() {
    }

    /** Checks {@code cluster}; throws {@link ConfigException} naming the first bad key. */
    static void validate(Cluster cluster) {
        if (!cluster.enabled()) {
            return;
        }
        between("cluster.partitions", cluster.partitions(), 1, 65536);
        between("cluster.logLength", cluster.logLength(), 16, 1 << 20);
        between("cluster.replicationTimeoutMs", cluster.replicationTimeoutMs(), 100, 600_000);
        if (cluster.members().isEmpty()) {
            throw new ConfigException("cluster.members", "key 'cluster.members' must list every node of the "
                    + "cluster (name, host, membershipPort, peerPort), this one included");
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
            between(key + ".membershipPort", m.membershipPort(), 1, 65535);
            between(key + ".peerPort", m.peerPort(), 1, 65535);
            if (!names.add(m.name())) {
                throw new ConfigException(key + ".name", "key '" + key + ".name': node name '" + m.name()
                        + "' is listed twice");
            }
            if (!endpoints.add(m.host() + ":" + m.membershipPort()) || !endpoints.add(m.host() + ":" + m.peerPort())) {
                throw new ConfigException(key, "key '" + key + "': a port of " + m.host()
                        + " is used twice among the members");
            }
        }
        if (!names.contains(cluster.nodeName())) {
            throw new ConfigException("cluster.nodeName", "key 'cluster.nodeName' must name one of cluster.members "
                    + names + ", got " + ConfigText.quote(cluster.nodeName()));
        }
    }

}
