package io.ringcast.cluster;

import java.util.List;
import java.util.Objects;

/**
 * What a node needs to know to take part in a cluster: its own name, the static list of members
 * (every node's config lists all of them, itself included), the partition count, and the bounds of
 * what it keeps for peers that fall behind. The server builds it from its {@code cluster} config
 * section, which validates it; this record only checks that it is whole.
 *
 * <p>Thread safety: immutable; share freely.
 *
 * @param nodeName             this node's name; one of {@code members}
 * @param members              every configured member; a majority of them is needed to sequence
 * @param partitions           fixed partition count; every node of a cluster must use the same
 * @param logLength            updates kept per partition so peers can fill gaps without a snapshot
 * @param replicationTimeoutMs how long a publish may wait for its partition's owner and backup
 */
public record ClusterSettings(String nodeName, List<Member> members, int partitions, int logLength,
                              long replicationTimeoutMs) {

    public ClusterSettings {
        Objects.requireNonNull(nodeName, "nodeName");
        members = List.copyOf(members);
        if (members.stream().noneMatch(m -> m.name().equals(nodeName))) {
            throw new IllegalArgumentException("nodeName '" + nodeName + "' is not among the members " + members);
        }
    }

    /** This node's entry of {@link #members}. */
    public Member self() {
        return member(nodeName);
    }

    /** The member called {@code name}, or null when the config lists none. */
    public Member member(String name) {
        for (Member m : members) {
            if (m.name().equals(name)) {
                return m;
            }
        }
        return null;
    }

    /** Members a view needs before its nodes may sequence: more than half of those configured. */
    public int majority() {
        return members.size() / 2 + 1;
    }

    /**
     * One configured node.
     *
     * @param name           unique name; also its JGroups logical name
     * @param host           address it binds and peers reach it on
     * @param membershipPort JGroups TCP port
     * @param peerPort       the Netty peer link port (forwarded publishes, replication, gap fills)
     */
    public record Member(String name, String host, int membershipPort, int peerPort) {
        public Member {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(host, "host");
        }
    }
}
