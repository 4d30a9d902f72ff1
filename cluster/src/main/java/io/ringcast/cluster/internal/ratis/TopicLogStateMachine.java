package io.ringcast.cluster.internal.ratis;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.internal.TopicLog;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One Raft group's state machine under Apache Ratis: the group's {@link TopicLog} (which decides
 * every publish from the log alone), with Ratis's snapshot files around it. Ratis applies committed
 * entries, takes snapshots and installs them on its state machine updater thread, one per group:
 * {@link TopicLog}'s single thread. A snapshot holds that thread only while the state is captured
 * in memory ({@link #takeSnapshot}); the node's snapshot writer writes it to disk meanwhile, so
 * neither this group's applies nor its commits, nor any other group's, wait for the disk.
 *
 * <p>A snapshot is one file, {@code snapshot.TERM_INDEX} in the group's state machine directory
 * ({@link SimpleStateMachineStorage}), with its MD5 beside it: the {@link TopicLog}'s own part then
 * the node's ({@code SnapshotContent}, this group's topics only). Ratis sends it whole to a follower
 * that is behind the leader's purged log; the follower's {@link #reinitialize} loads it.
 *
 * <p>Thread contract: {@link #applyTransaction}, {@link #takeSnapshot}, {@link #initialize} and
 * {@link #reinitialize} on the group's updater thread (Ratis calls {@code initialize} on a starting
 * thread before the updater runs); the snapshot files written on the writer's thread; {@link #query}
 * on any thread, reading only {@link #applied}.
 */
public final class TopicLogStateMachine extends BaseStateMachine {
    private static final Logger log = LoggerFactory.getLogger(TopicLogStateMachine.class);

    private final TopicLog topicLog;
    private final String name;
    private final SnapshotFiles storage = new SnapshotFiles();
    /** {@link TopicLog#appliedEntries()} after the last apply or load, for {@link #query} on other threads. */
    private volatile long applied;
    private volatile int snapshots;
    /** After a failed snapshot write, the next waits this long: a full disk is not retried at every entry. */
    static final long RETRY_AFTER_FAILURE_MS = 5_000;
    /** Writes this node's snapshots, of every group, one after another, off the groups' updater threads. */
    private final Executor writer;
    /** The snapshot being written, or the one written and not yet told to Ratis; the updater thread only. */
    private CompletableFuture<Long> writing;
    /** No new snapshot before this {@link System#nanoTime}, after a failed write; the updater thread only. */
    private long retryAfterNs = System.nanoTime();

    /**
     * @param writer where snapshots are written: one thread for the node's groups, so they do not
     *               write at once
     */
    public TopicLogStateMachine(TopicLog topicLog, String name, Executor writer) {
        this.topicLog = topicLog;
        this.name = name;
        this.writer = writer;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        load(storage.loadLatestSnapshot());
    }

    @Override
    public void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot());
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    /** Applies one committed entry: the {@link TopicLog}'s response is the reply to whoever submitted it. */
    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        ByteString data = entry.getStateMachineLogEntry().getLogData();
        byte[] bytes = data.toByteArray();
        byte[] response = topicLog.apply(bytes, 0, bytes.length, true);
        applied = topicLog.appliedEntries();
        updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(response)));
    }

    /**
     * Answers a read: the count of entries this node's log has applied (8 bytes), what a node that
     * joins waits for on its own log before it serves clients. Ratis sends reads to the leader.
     */
    @Override
    public CompletableFuture<Message> query(Message request) {
        byte[] answer = ByteBuffer.allocate(Long.BYTES).putLong(applied).array();
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(answer)));
    }

    /** The count a {@link #query} answered with. */
    static long appliedFrom(Message reply) {
        return reply.getContent().asReadOnlyByteBuffer().getLong();
    }

    /** Entries this node's log applied so far ({@link TopicLog#appliedEntries()}). Any thread. */
    public long applied() {
        return applied;
    }

    public int snapshots() {
        return snapshots;
    }

    /**
     * Ratis asks for a snapshot once {@code autoTriggerThreshold} entries were applied since the last
     * one, on the group's updater thread, which applies nothing meanwhile. So this only captures
     * the state as of the last entry applied ({@link TopicLog#capture}: the topic log's part copied,
     * the sequencer asked for the node's part) and hands the write to the node's snapshot writer,
     * answering {@code -1} (no new snapshot yet). Ratis asks again after each entry applied while
     * the threshold stays passed; once the write has finished, the answer is its index, which Ratis
     * records, purging its log up to it. One write per group at a time; after a failed write, none
     * for {@link #RETRY_AFTER_FAILURE_MS}.
     */
    @Override
    public long takeSnapshot() throws IOException {
        CompletableFuture<Long> w = writing;
        if (w != null) {
            if (!w.isDone()) {
                return RaftLog.INVALID_LOG_INDEX;
            }
            writing = null;
            long index = w.exceptionally(e -> RaftLog.INVALID_LOG_INDEX).join();
            SingleFileSnapshotInfo latest = storage.getLatestSnapshot();
            if (index >= 0 && latest != null && index >= latest.getIndex()) {
                storage.written = true;
                return index;
            }
            if (index >= 0) { // a newer snapshot was installed from the leader meanwhile: Ratis knows that one
                return RaftLog.INVALID_LOG_INDEX;
            }
            retryAfterNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_AFTER_FAILURE_MS);
        }
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() < 0 || System.nanoTime() - retryAfterNs < 0) {
            return RaftLog.INVALID_LOG_INDEX;
        }
        long start = System.nanoTime();
        SnapshotContent.Captured captured = topicLog.capture();
        long captureUs = (System.nanoTime() - start) / 1000;
        writing = CompletableFuture.supplyAsync(() -> write(captured, last, captureUs), writer);
        return RaftLog.INVALID_LOG_INDEX;
    }

    /**
     * Writes a captured state into a new snapshot file (through a temporary file, so a crash leaves
     * no half snapshot under the real name) and makes it the latest: the one Ratis sends to a
     * member behind the leader's purged log. The snapshot writer's thread.
     */
    private long write(SnapshotContent.Captured captured, TermIndex last, long captureUs) {
        long start = System.nanoTime();
        File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        File tmp = new File(file.getParentFile(), file.getName() + ".tmp");
        try {
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
                    Files.newOutputStream(tmp.toPath()), 1 << 16))) {
                captured.writeTo(out);
            }
            // the digest first, so that no snapshot file is ever seen without it (a crash between
            // the two leaves a digest alone, which Ratis's clean-up deletes)
            MD5Hash digest = MD5FileUtil.computeMd5ForFile(tmp);
            MD5FileUtil.saveMD5File(file, digest);
            Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE);
            storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), digest), last));
        } catch (IOException | RuntimeException e) {
            log.warn("cluster {}: writing the snapshot at index {} failed, trying again in {} ms: {}", name,
                    last.getIndex(), RETRY_AFTER_FAILURE_MS, e.toString());
            try {
                Files.deleteIfExists(tmp.toPath());
                if (!file.exists()) { // the digest written for a file that did not come
                    Files.deleteIfExists(MD5FileUtil.getDigestFileForFile(file).toPath());
                }
            } catch (IOException ignored) {
                // the next write replaces it
            }
            throw new CompletionException(e);
        }
        snapshots++;
        log.info("cluster {}: snapshot of {} bytes at index {} captured in {} us, written in {} ms", name,
                file.length(), last.getIndex(), captureUs, (System.nanoTime() - start) / 1_000_000);
        return last.getIndex();
    }

    /** Loads a snapshot file (checked against its MD5) into the {@link TopicLog}; none: nothing to do. */
    private void load(SingleFileSnapshotInfo snapshot) throws IOException {
        if (snapshot == null) {
            return;
        }
        File file = snapshot.getFile().getPath().toFile();
        if (!file.exists()) {
            log.warn("cluster {}: snapshot file {} is missing", name, file);
            return;
        }
        if (snapshot.getFile().getFileDigest() != null) {
            MD5FileUtil.verifySavedMD5(file, snapshot.getFile().getFileDigest());
        }
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file.toPath()),
                1 << 16))) {
            topicLog.readContentFrom(in);
        }
        applied = topicLog.appliedEntries();
        updateLastAppliedTermIndex(snapshot.getTerm(), snapshot.getIndex());
        log.info("cluster {}: loaded snapshot {} ({} entries applied)", name, file.getName(), applied);
    }

    /**
     * Ratis's snapshot files, with old ones deleted only after a new one was written. Ratis calls
     * {@link #cleanupOldSnapshots} after every {@link #takeSnapshot}, and asks for one after every
     * entry applied while a write is under way: each call listed the directory and read every
     * digest, hundreds of times per write, and could delete the digest of the snapshot being
     * written. The updater thread only.
     */
    private static final class SnapshotFiles extends SimpleStateMachineStorage {
        /** A snapshot was told to Ratis since the last clean-up. */
        boolean written;

        @Override
        public void cleanupOldSnapshots(SnapshotRetentionPolicy retention) throws IOException {
            if (written) {
                written = false;
                super.cleanupOldSnapshots(retention);
            }
        }
    }
}
