package io.ringcast.cluster;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How this node keeps and replicates the group's log: the settings of the server's {@code cluster}
 * section that reach the consensus engine (docs/clustering.md says what each does and why its
 * default). The engine's other settings (heartbeat interval, how long a suspicion is verified, how
 * often the leader resends) are derived from these. The server's config validates the ranges; this
 * record only checks that they can be used at all.
 *
 * <p>Thread safety: immutable; share freely.
 *
 * @param dataDir              where this node keeps its log and snapshots ({@code cluster.dataDir})
 * @param commitFsync          whether an entry is forced to disk before a member counts it as
 *                             appended, so that commit means fsync on a majority ({@code cluster.commitFsync})
 * @param failureDetectionMs   a member not heard from for this long is suspected ({@code cluster.failureDetectionMs})
 * @param voteTimeoutMs        how long an election round waits for votes ({@code cluster.voteTimeoutMs})
 * @param replicationTimeoutMs how long a publish waits for its entry to be committed, and applied
 *                             here, before it is answered as timed out ({@code cluster.replicationTimeoutMs})
 * @param snapshotLogBytes     log bytes after which a node snapshots its state and truncates its log
 *                             ({@code cluster.snapshotLogBytes})
 * @param engine               the consensus engine ({@code cluster.engine})
 * @param groups               Raft groups the topics are spread over ({@code cluster.groups}); 1 on jgroups
 * @param secretFile           the shared secret the members' messages to each other are encrypted
 *                             with ({@code cluster.secretFile}, {@link io.ringcast.cluster.internal.ClusterKey});
 *                             null: in the clear. jgroups only
 */
public record ReplicationSettings(Path dataDir, boolean commitFsync, long failureDetectionMs, long voteTimeoutMs,
                                  long replicationTimeoutMs, long snapshotLogBytes, Engine engine, int groups,
                                  Path secretFile) {

    /** The consensus engines a cluster can run on. */
    public enum Engine {
        /** jgroups-raft 1.1.4: one group, with the workarounds of docs/upstream/jgroups-raft.md. */
        JGROUPS,
        /** Apache Ratis: {@code groups} groups, leaders spread by priority. */
        RATIS
    }

    /** Messages between members in the clear. */
    public ReplicationSettings(Path dataDir, boolean commitFsync, long failureDetectionMs, long voteTimeoutMs,
                               long replicationTimeoutMs, long snapshotLogBytes, Engine engine, int groups) {
        this(dataDir, commitFsync, failureDetectionMs, voteTimeoutMs, replicationTimeoutMs, snapshotLogBytes, engine,
                groups, null);
    }

    /** On jgroups-raft, one group. */
    public ReplicationSettings(Path dataDir, boolean commitFsync, long failureDetectionMs, long voteTimeoutMs,
                               long replicationTimeoutMs, long snapshotLogBytes) {
        this(dataDir, commitFsync, failureDetectionMs, voteTimeoutMs, replicationTimeoutMs, snapshotLogBytes,
                Engine.JGROUPS, 1);
    }

    /**
     * The log bytes after which member {@code memberIndex} (its place in {@code cluster.members})
     * snapshots: {@code snapshotLogBytes} and a tenth more for each member after the first, so that
     * the members, which apply the same log, do not all write a snapshot at the same entry.
     */
    public long snapshotLogBytesOf(int memberIndex) {
        return snapshotLogBytes * (10 + memberIndex) / 10;
    }

    public ReplicationSettings {
        Objects.requireNonNull(engine, "engine");
        if (groups < 1 || (engine == Engine.JGROUPS && groups != 1)) {
            throw new IllegalArgumentException("groups " + groups + ": 1 at least, and 1 on jgroups");
        }
        Objects.requireNonNull(dataDir, "dataDir");
        if (failureDetectionMs < 4 || voteTimeoutMs < 1 || replicationTimeoutMs < 1 || snapshotLogBytes < 1) {
            throw new IllegalArgumentException("failureDetectionMs " + failureDetectionMs + " (4 at least), voteTimeoutMs "
                    + voteTimeoutMs + ", replicationTimeoutMs " + replicationTimeoutMs + " and snapshotLogBytes "
                    + snapshotLogBytes + " must be positive");
        }
    }
}
