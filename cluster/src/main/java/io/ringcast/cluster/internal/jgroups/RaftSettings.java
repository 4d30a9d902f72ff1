package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.internal.ClusterKey;

import java.nio.file.Path;
import java.util.Objects;
import javax.crypto.SecretKey;

/**
 * The consensus engine's settings for one node (jgroups-raft on the membership stack), beside
 * {@link io.ringcast.cluster.ClusterSettings}. The server's {@code cluster} config section maps to
 * it through {@link #of}; tests build it with {@link #defaults(Path)} and the {@code with*} copies.
 *
 * <p>jgroups-raft elects through JGroups views: a leader that dies is noticed by failure detection
 * (a killed process at once, by its closed socket; a frozen or cut-off one after
 * {@code failureDetectionTimeoutMs} plus {@code verifySuspectMs}), the view coordinator then asks
 * for votes and waits up to {@code voteTimeoutMs} for them. Those three are the election timeout.
 *
 * <p>Thread safety: immutable; share freely.
 *
 * @param dataDir                   where each group keeps its log and snapshot ({@code cluster.dataDir})
 * @param logUseFsync               whether an entry is forced to disk before this node counts it as
 *                                  appended, so that commit means fsync on a majority
 * @param maxLogSizeBytes           log bytes after which the state machine is snapshotted and the log
 *                                  truncated at the commit index
 * @param heartbeatIntervalMs       how often each node sends a heartbeat ({@code FD_ALL3.interval})
 * @param failureDetectionTimeoutMs a member not heard from for this long is suspected ({@code FD_ALL3.timeout})
 * @param verifySuspectMs           how long a suspicion is verified before the member is removed
 * @param voteTimeoutMs             how long an election round waits for votes
 * @param resendIntervalMs          how often the leader resends entries a follower has not acknowledged
 *                                  (and, when idle, the commit index)
 * @param submitTimeoutMs           how long {@link RaftGroup#submit(byte[])} waits for a commit before
 *                                  its future fails with a {@link java.util.concurrent.TimeoutException}
 * @param clusterKey                the key every message between members is encrypted with, which only
 *                                  members holding it can read or send ({@link ClusterKey}); null: none
 */
public record RaftSettings(Path dataDir, boolean logUseFsync, long maxLogSizeBytes, long heartbeatIntervalMs,
                           long failureDetectionTimeoutMs, long verifySuspectMs, long voteTimeoutMs,
                           long resendIntervalMs, long submitTimeoutMs, SecretKey clusterKey) {

    /**
     * Snapshot every 16 MB of log rather than the engine's 1 MB, unless {@code cluster.snapshotLogBytes}
     * says otherwise: a snapshot holds every topic's history and last value, easily several MB, which
     * should not be written more often than the log it replaces. Not a workaround: {@code RaftGroupTest}
     * shows the shipped stack surviving snapshots every 64 KB under load.
     */
    public static final long DEFAULT_MAX_LOG_SIZE_BYTES = 16L * 1024 * 1024;

    public RaftSettings {
        Objects.requireNonNull(dataDir, "dataDir");
        positive("maxLogSizeBytes", maxLogSizeBytes);
        positive("heartbeatIntervalMs", heartbeatIntervalMs);
        positive("voteTimeoutMs", voteTimeoutMs);
        positive("resendIntervalMs", resendIntervalMs);
        positive("submitTimeoutMs", submitTimeoutMs);
        positive("verifySuspectMs", verifySuspectMs);
        if (failureDetectionTimeoutMs <= heartbeatIntervalMs) {
            throw new IllegalArgumentException("failureDetectionTimeoutMs (" + failureDetectionTimeoutMs
                    + ") must exceed heartbeatIntervalMs (" + heartbeatIntervalMs + ")");
        }
    }

    /**
     * The shipped settings: commit means fsync; a frozen or cut-off leader is replaced 1 to 1.8 s
     * after it stops (0.75 to 1.25 s until suspected, 0.25 to 0.5 s verifying, a vote round), a killed one at once; an
     * idle leader tells followers behind the commit index (and resends what they lack) after 100 ms;
     * a submit gives up after 5 s.
     */
    public static RaftSettings defaults(Path dataDir) {
        return of(dataDir, true, 1000, 600, 5000, DEFAULT_MAX_LOG_SIZE_BYTES);
    }

    /**
     * The settings the server's {@code cluster} section gives ({@code dataDir}, {@code commitFsync},
     * {@code failureDetectionMs}, {@code voteTimeoutMs}, {@code replicationTimeoutMs},
     * {@code snapshotLogBytes}); the rest derived: heartbeats every quarter of the failure detection
     * timeout (three missed before a suspicion, one to spare), a suspicion verified for a quarter of
     * it, commits resent every 100 ms. The verification is short because {@code VERIFY_SUSPECT2}
     * checks its suspects at a fixed rate of its timeout, so a suspect waits between one and two
     * timeouts: with half, a cut-off leader was replaced 1.7 to 2.4 s after the cut, over issue 28's
     * 2 s; a member not heard for a whole {@code failureDetectionMs} that does not answer within a
     * quarter more is gone for the cluster's purposes.
     */
    public static RaftSettings of(Path dataDir, boolean fsync, long failureDetectionMs, long voteTimeoutMs,
                                  long submitTimeoutMs, long maxLogSizeBytes) {
        return new RaftSettings(dataDir, fsync, maxLogSizeBytes, Math.max(1, failureDetectionMs / 4),
                failureDetectionMs, Math.max(1, failureDetectionMs / 4), voteTimeoutMs, 100, submitTimeoutMs, null);
    }

    public RaftSettings withDataDir(Path dir) {
        return new RaftSettings(dir, logUseFsync, maxLogSizeBytes, heartbeatIntervalMs, failureDetectionTimeoutMs,
                verifySuspectMs, voteTimeoutMs, resendIntervalMs, submitTimeoutMs, clusterKey);
    }

    public RaftSettings withLogUseFsync(boolean fsync) {
        return new RaftSettings(dataDir, fsync, maxLogSizeBytes, heartbeatIntervalMs, failureDetectionTimeoutMs,
                verifySuspectMs, voteTimeoutMs, resendIntervalMs, submitTimeoutMs, clusterKey);
    }

    public RaftSettings withMaxLogSizeBytes(long bytes) {
        return new RaftSettings(dataDir, logUseFsync, bytes, heartbeatIntervalMs, failureDetectionTimeoutMs,
                verifySuspectMs, voteTimeoutMs, resendIntervalMs, submitTimeoutMs, clusterKey);
    }

    /** These settings with messages between members encrypted with {@code key} (null: not). */
    public RaftSettings withClusterKey(SecretKey key) {
        return new RaftSettings(dataDir, logUseFsync, maxLogSizeBytes, heartbeatIntervalMs, failureDetectionTimeoutMs,
                verifySuspectMs, voteTimeoutMs, resendIntervalMs, submitTimeoutMs, key);
    }

    public RaftSettings withSubmitTimeoutMs(long ms) {
        return new RaftSettings(dataDir, logUseFsync, maxLogSizeBytes, heartbeatIntervalMs, failureDetectionTimeoutMs,
                verifySuspectMs, voteTimeoutMs, resendIntervalMs, ms, clusterKey);
    }

    private static void positive(String key, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(key + " must be positive, was " + value);
        }
    }
}
