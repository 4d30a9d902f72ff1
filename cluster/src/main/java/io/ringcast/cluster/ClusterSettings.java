package io.ringcast.cluster;

import java.util.List;
import java.util.Objects;

/**
 * What a node needs to know to take part in a cluster: its own name, the static list of members
 * (every node's config lists all of them, itself included; they are the Raft group's voting
 * members), and the bounds of the replicated state, which must be the same on every node since
 * they decide whether a publish is applied. The server builds it from its {@code cluster} and
 * {@code limits} config sections, which validate it; this record only checks that it is whole.
 * How the node keeps and replicates the log is {@link ReplicationSettings}.
 *
 * <p>Thread safety: immutable; share freely.
 *
 * @param nodeName      this node's name; one of {@code members}
 * @param members       every configured member; a majority of them is needed to commit
 * @param maxTopics     topics at most ({@code limits.maxTopics}); a publish creating one more gets TOO_MANY_TOPICS
 * @param maxPublishers publishers' duplicate ledgers kept at most ({@code limits.publisherLedgers})
 * @param maxPublishersPerPrincipal of which one principal's ({@code limits.publisherLedgersPerPrincipal})
 */
public record ClusterSettings(String nodeName, List<Member> members, int maxTopics, int maxPublishers,
                              int maxPublishersPerPrincipal) {

    /** With no bound per principal but the total. */
    public ClusterSettings(String nodeName, List<Member> members, int maxTopics, int maxPublishers) {
        this(nodeName, members, maxTopics, maxPublishers, maxPublishers);
    }

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

    /** Members that must hold an entry before it is committed: more than half of those configured. */
    public int majority() {
        return members.size() / 2 + 1;
    }

    /**
     * One configured node.
     *
     * @param name           unique name; also its JGroups logical name and Raft id
     * @param host           address it binds and peers reach it on
     * @param membershipPort JGroups TCP port (failure detection listens on it plus
     *                       {@link io.ringcast.cluster.internal.jgroups.RaftStack#FD_SOCK_PORT_OFFSET})
     */
    public record Member(String name, String host, int membershipPort) {
        public Member {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(host, "host");
        }
    }
}
