package io.ringcast.cluster.internal.jgroups;

import io.ringcast.cluster.SnapshotContent;
import org.jgroups.Address;
import org.jgroups.protocols.raft.FileBasedLog;
import org.jgroups.protocols.raft.Log;
import org.jgroups.protocols.raft.LogEntries;
import org.jgroups.protocols.raft.LogEntry;
import org.jgroups.util.ByteArrayDataInputStream;
import org.jgroups.util.ByteArrayDataOutputStream;
import org.jgroups.util.Util;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjLongConsumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * A Raft group's log on this node, in segment files: jgroups-raft's {@link Log} extension, named in
 * {@code RAFT.log_class}. It exists for one reason: dropping the entries a snapshot covers must not
 * hold up the engine. jgroups-raft 1.1.4's {@link FileBasedLog} keeps one file and truncates it by
 * copying what is left into a new file and replacing the old one ({@code FileStorage.truncateFrom}),
 * on the engine's runner thread right after each snapshot: 27 to 114 ms per snapshot in the cluster
 * bench on two cores, during which the node neither replicates nor applies, so every publisher of
 * that node (of every node, when it leads) waited. Here a truncation moves the log's first index
 * (one field of the metadata file) and hands the segments wholly before it to this log's worker
 * thread, which closes and deletes them; nothing is copied. The same thread writes the state
 * machine's part of a snapshot when the state machine leaves it to the log ({@link #deferContent}):
 * jgroups-raft 1.1.4 takes a snapshot on its runner thread, start to end, and so held the node for
 * the serialisation of the topics and ledgers as well (10 to 72 ms under load). (1.1.4's file log also lost every
 * entry's position when truncated at commit index 0, issue 18; nothing here depends on positions
 * kept across a truncation.)
 *
 * <p>Files, in the directory the engine names ({@code dataDir/<group>/<node>.log/}):
 * <ul>
 *   <li>{@code log.meta}: fixed fields, each rewritten in place: magic {@code "RCLM"}, version,
 *       generation, current term, commit index, first index, then the vote ({@code u16} length and
 *       {@link Util#writeAddress} bytes). Every field but the commit index is forced to disk when
 *       written (with {@code fsync}); the commit index rides on the next forced write.</li>
 *   <li>{@code <generation>-<first index>.segment}: entries in index order, each {@code u32} command
 *       length, {@code u64} term, {@code u8} flags (1: internal), the command, and a CRC32C of all of
 *       it; a segment is closed for appends once it passes {@link #SEGMENT_BYTES}.</li>
 *   <li>{@code snapshot.raft}: the last snapshot, written beside and moved into place.</li>
 * </ul>
 * A crash can leave a record half written (at the end of the last segment: cut off when the log
 * opens, as it was never acknowledged), segments before the first index (deleted when it opens),
 * or the segments of the previous generation: {@link #reinitializeTo} (a snapshot installed from the
 * leader) writes the new generation's first segment before the metadata names it, so the log opens
 * as either the old one or the new one. A record that fails its check anywhere else is damage the log
 * refuses to open with, naming the file and position.
 *
 * <p>Semantics follow {@link FileBasedLog} (the engine's own contract test is run against both,
 * {@code LogContractTest}): the first index is 0 until the first truncation, then the index
 * truncated at, whose entry is kept (the engine reads its term); a truncation past the last entry
 * moves the last one with it. One difference: the current term never goes down (1.1.4's logs lower
 * it to the last entry's term after deleting entries, and the engine reloads the persisted term on
 * restart, so a lower one could let the node vote twice in a term).
 *
 * <p>Thread contract: the engine calls every method on its runner thread, one at a time; the
 * first, last and commit indexes and the term are also read by other threads ({@code /health},
 * JMX), hence volatile. The worker thread touches only segments the runner has let go of, the
 * snapshot file while it writes a deferred snapshot (the runner waits for it before reading or
 * writing that file), and the metadata's first index for that snapshot's truncation, under
 * {@code snapshotLock}, which the runner's truncations take too.
 */
public class SegmentedLog implements Log {
    /** A segment takes no more appends once it holds this much: a 16 MiB log between snapshots spans four or five. */
    static final long SEGMENT_BYTES = 4L << 20;

    private static final Logger logger = LoggerFactory.getLogger(SegmentedLog.class);
    private static final String META_FILE = "log.meta";
    private static final String SNAPSHOT_FILE = "snapshot.raft";
    private static final String SEGMENT_SUFFIX = ".segment";
    private static final int META_MAGIC = 0x52434c4d; // "RCLM"
    private static final int META_VERSION = 1;
    private static final int META_GENERATION = 8;
    private static final int META_TERM = 16;
    private static final int META_COMMIT = 24;
    private static final int META_FIRST = 32;
    private static final int META_VOTE = 40;
    private static final int MAX_VOTE_BYTES = 1024;
    /** Length, term, flags before the command; the check after it. */
    private static final int RECORD_HEADER = Integer.BYTES + Long.BYTES + 1;
    private static final int RECORD_OVERHEAD = RECORD_HEADER + Integer.BYTES;
    private static final byte FLAG_INTERNAL = 1;
    /** Tasks waiting for the worker: a snapshot retires a few segments; more waiting means the disk stalls. */
    private static final int WORK_BOUND = 1024;
    /** Ends the placeholder a deferred snapshot's content leaves in the engine's snapshot: "RCDEFERS". */
    private static final long PLACEHOLDER_MAGIC = 0x5243444546455253L;
    private static final int PLACEHOLDER_BYTES = 2 * Long.BYTES;
    private static final long CLOSE_WAIT_MS = 10_000;

    private Path dir;
    private FileChannel meta;
    private boolean fsync = true;
    private long generation;
    private volatile long currentTerm;
    private Address votedFor;
    private volatile long commitIndex;
    private volatile long firstIndex;
    private volatile long lastAppended;
    /** In index order; the last one takes the appends. */
    private final List<Segment> segments = new ArrayList<>();
    private ByteBuffer writeBuffer = ByteBuffer.allocateDirect(64 << 10);
    private final CRC32C crc = new CRC32C();
    /** Deletions of segments and writes of deferred snapshots, for the worker thread, in order. */
    private final BlockingQueue<Runnable> work = new ArrayBlockingQueue<>(WORK_BOUND);
    private Thread worker;
    /** Runner: the content of the snapshot being taken, between {@link #deferContent} and {@link #setSnapshot}. */
    private DeferredSnapshot deferring;
    /** Runner: the deferred snapshot last set, until the {@link #truncate} the engine follows it with. */
    private DeferredSnapshot lastDeferred;
    private long lastToken;
    private final Object snapshotLock = new Object();
    /** Guarded by {@link #snapshotLock}: the snapshot the worker is writing, until it is on disk. */
    private DeferredSnapshot writing;

    public SegmentedLog() {
        // made by RAFT through reflection (RAFT.log_class)
    }

    @Override
    public void init(String logName, Map<String, String> args) throws Exception {
        dir = Path.of(logName);
        Files.createDirectories(dir);
        Path metaPath = dir.resolve(META_FILE);
        if (!Files.exists(metaPath) && Files.exists(dir.resolve("entries.raft"))) {
            migrateFromFileBasedLog();
        }
        boolean fresh = !Files.exists(metaPath);
        meta = FileChannel.open(metaPath, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (fresh) {
            writeMetaHeader(0, 0, 0);
        } else {
            readMeta(metaPath);
        }
        openSegments();
        worker = new Thread(this::work, "raft-log-" + dir.getFileName());
        worker.setDaemon(true);
        worker.start();
    }

    @Override
    public Log useFsync(boolean f) {
        fsync = f;
        return this;
    }

    @Override
    public boolean useFsync() {
        return fsync;
    }

    @Override
    public void close() {
        try {
            awaitSnapshotWritten(CLOSE_WAIT_MS);
            stopWorker(); // before the files close: it may still write the metadata or delete segments
            for (Segment segment : segments) {
                segment.channel.close();
            }
            segments.clear();
            if (meta != null) {
                meta.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void delete() throws Exception {
        close();
        if (dir != null && Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    @Override
    public long currentTerm() {
        return currentTerm;
    }

    @Override
    public Log currentTerm(long newTerm) {
        writeMetaLong(META_TERM, newTerm);
        currentTerm = newTerm;
        return this;
    }

    @Override
    public Address votedFor() {
        return votedFor;
    }

    @Override
    public Log votedFor(Address member) {
        try {
            ByteArrayDataOutputStream out = new ByteArrayDataOutputStream(64);
            Util.writeAddress(member, out);
            if (out.position() > MAX_VOTE_BYTES) {
                throw new IllegalArgumentException("an address of " + out.position() + " bytes: " + member);
            }
            ByteBuffer field = ByteBuffer.allocate(Short.BYTES + out.position());
            field.putShort((short) out.position()).put(out.buffer(), 0, out.position()).flip();
            writeFully(meta, field, META_VOTE);
            force(meta);
        } catch (IOException e) {
            throw new UncheckedIOException("writing the vote to " + dir.resolve(META_FILE), e);
        }
        votedFor = member;
        return this;
    }

    @Override
    public long commitIndex() {
        return commitIndex;
    }

    @Override
    public Log commitIndex(long newIndex) {
        // Written, not forced: the engine moves the commit index once per entry on every member, and
        // a second fsync per entry there halved what the shared disk could take. A commit index is
        // knowledge, not state (Raft keeps it in memory; etcd's raft syncs for entries, term and vote,
        // never for a commit alone): one that power loss sets back is learnt again from the leader,
        // and the entries it covered are on disk already. The next forced write of this file (the
        // first index at a truncation, a term, a vote) carries it, so it never falls behind a snapshot.
        writeMeta(META_COMMIT, newIndex);
        commitIndex = newIndex;
        return this;
    }

    @Override
    public long firstAppended() {
        return firstIndex;
    }

    @Override
    public long lastAppended() {
        return lastAppended;
    }

    /**
     * Leaves the writing of the state machine's part of the snapshot being taken to this log's worker
     * thread: the state machine captured it ({@link SnapshotContent#capture}, cheap, on the runner)
     * and writes the returned placeholder instead of it; {@link #setSnapshot} recognises it, hands the
     * snapshot to the worker and returns, and the {@link #truncate} after it takes effect on disk
     * only once the snapshot is there (a crash before leaves the previous snapshot and the whole log).
     * Meanwhile {@link #getSnapshot} waits for it. One at a time: a second waits for the first.
     * Runner thread.
     *
     * @param onWritten told on the worker thread once the snapshot is on disk (its bytes, the
     *                  milliseconds the write took), not told if it failed (logged)
     * @return the placeholder, to end the engine's snapshot with
     */
    public byte[] deferContent(SnapshotContent.Captured content, SnapshotWritten onWritten) {
        awaitSnapshotWritten(Long.MAX_VALUE);
        deferring = new DeferredSnapshot(++lastToken, content, onWritten);
        return ByteBuffer.allocate(PLACEHOLDER_BYTES).putLong(deferring.token).putLong(PLACEHOLDER_MAGIC).array();
    }

    /** Told once a deferred snapshot is on disk. */
    @FunctionalInterface
    public interface SnapshotWritten {
        void written(long bytes, long millis);
    }

    @Override
    public void setSnapshot(ByteBuffer snapshot) {
        awaitSnapshotWritten(Long.MAX_VALUE);
        DeferredSnapshot deferred = deferring;
        deferring = null;
        if (deferred != null && endsWithPlaceholder(snapshot, deferred.token)) {
            ByteBuffer engines = snapshot.duplicate();
            engines.limit(engines.limit() - PLACEHOLDER_BYTES);
            deferred.enginesPart = new byte[engines.remaining()];
            engines.get(deferred.enginesPart);
            synchronized (snapshotLock) {
                writing = deferred;
            }
            lastDeferred = deferred;
            try {
                work.put(() -> writeDeferred(deferred));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted handing a snapshot to " + worker.getName(), e);
            }
            return;
        }
        lastDeferred = null;
        writeSnapshot(snapshot);
    }

    private static boolean endsWithPlaceholder(ByteBuffer snapshot, long token) {
        int end = snapshot.limit();
        return end - snapshot.position() >= PLACEHOLDER_BYTES && snapshot.getLong(end - Long.BYTES) == PLACEHOLDER_MAGIC
                && snapshot.getLong(end - PLACEHOLDER_BYTES) == token;
    }

    private void writeSnapshot(ByteBuffer snapshot) {
        Path target = dir.resolve(SNAPSHOT_FILE);
        Path tmp = dir.resolve(SNAPSHOT_FILE + ".tmp");
        try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            writeFully(out, snapshot.duplicate(), 0);
            force(out);
        } catch (IOException e) {
            throw new UncheckedIOException("writing the snapshot " + tmp, e);
        }
        move(tmp, target);
    }

    @Override
    public ByteBuffer getSnapshot() {
        awaitSnapshotWritten(Long.MAX_VALUE);
        Path file = dir.resolve(SNAPSHOT_FILE);
        try {
            return Files.exists(file) ? ByteBuffer.wrap(Files.readAllBytes(file)) : null;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the snapshot " + file, e);
        }
    }

    @Override
    public long append(long index, LogEntries entries) {
        if (entries.size() == 0) {
            return lastAppended;
        }
        if (index <= lastAppended) {
            deleteAllEntriesStartingFrom(index); // the engine's contract: appending overwrites from index on
        }
        if (index != lastAppended + 1) {
            throw new IllegalStateException("an append at index " + index + " to a log whose last entry is "
                    + lastAppended);
        }
        Segment active = null;
        int countBefore = 0;
        try {
            active = segmentToAppendAt(index);
            countBefore = active.count;
            long maxTerm = 0;
            ByteBuffer buffer = writeBufferFor(entries);
            for (LogEntry entry : entries) {
                int start = buffer.position();
                buffer.putInt(entry.length()).putLong(entry.term()).put(entry.internal() ? FLAG_INTERNAL : 0);
                buffer.put(entry.command() == null ? new byte[0] : entry.command(), entry.offset(), entry.length());
                buffer.putInt(checksum(buffer, start, buffer.position() - start));
                active.add(active.bytes + start);
                maxTerm = Math.max(maxTerm, entry.term());
            }
            buffer.flip();
            writeFully(active.channel, buffer, active.bytes);
            if (fsync) {
                active.channel.force(false);
            }
            active.bytes += buffer.limit();
            lastAppended = index + entries.size() - 1;
            if (maxTerm > currentTerm) {
                currentTerm(maxTerm);
            }
            return lastAppended;
        } catch (IOException e) {
            if (active != null) { // as if never appended: the engine sees the exception, nothing half there
                active.count = countBefore;
                try {
                    active.channel.truncate(active.bytes);
                } catch (IOException alsoFailed) {
                    e.addSuppressed(alsoFailed);
                }
            }
            throw new UncheckedIOException("appending at index " + index + " in " + dir, e);
        }
    }

    @Override
    public LogEntry get(long index) {
        if (index < Math.max(1, firstIndex) || index > lastAppended) {
            return null;
        }
        Segment segment = segmentOf(index);
        if (segment == null) {
            return null; // a truncation past the last entry left nothing at index
        }
        try {
            return segment.read(index);
        } catch (IOException e) {
            throw new UncheckedIOException("reading index " + index + " from " + segment.path, e);
        }
    }

    @Override
    public void truncate(long indexExclusive) {
        long index = Math.min(indexExclusive, commitIndex);
        if (index <= firstIndex) {
            return;
        }
        DeferredSnapshot covering = lastDeferred; // the engine truncates right after it sets a snapshot
        lastDeferred = null;
        List<Segment> before = new ArrayList<>();
        synchronized (snapshotLock) { // the worker decides a deferred snapshot's outcome under it
            if (covering != null && covering.finished && !covering.succeeded) {
                return; // no snapshot covers what this would drop: keep it all (the failure was logged)
            }
            firstIndex = index;
            if (lastAppended < index) {
                lastAppended = index;
            }
            while (!segments.isEmpty() && segments.get(0).lastIndex() < index) {
                before.add(segments.remove(0)); // wholly before the first index; the one holding it stays
            }
            if (covering != null && !covering.finished) { // on disk once the snapshot covering them is
                covering.firstIndexOnceWritten = index;
                covering.segmentsOnceWritten.addAll(before);
                return;
            }
        }
        writeMetaLong(META_FIRST, index);
        before.forEach(this::retire);
    }

    @Override
    public void reinitializeTo(long index, LogEntry entry) throws Exception {
        awaitSnapshotWritten(Long.MAX_VALUE);
        long newGeneration = generation + 1;
        Segment first = Segment.create(dir, newGeneration, index);
        List<Segment> old = new ArrayList<>(segments);
        segments.clear();
        segments.add(first);
        lastAppended = index - 1;
        LogEntries one = new LogEntries();
        one.add(entry);
        append(index, one);
        first.channel.force(false); // the generation the metadata names next must be there
        forceDirectory();
        ByteBuffer fields = ByteBuffer.allocate(4 * Long.BYTES);
        fields.putLong(newGeneration).putLong(Math.max(currentTerm, entry.term())).putLong(index).putLong(index).flip();
        writeFully(meta, fields, META_GENERATION);
        force(meta);
        generation = newGeneration;
        currentTerm = Math.max(currentTerm, entry.term());
        commitIndex = index;
        firstIndex = index;
        old.forEach(this::retire);
    }

    @Override
    public void deleteAllEntriesStartingFrom(long startIndex) {
        if (startIndex > lastAppended) {
            return;
        }
        try {
            while (!segments.isEmpty() && segments.get(segments.size() - 1).firstIndex >= startIndex) {
                Segment dropped = segments.remove(segments.size() - 1);
                dropped.channel.close();
                Files.deleteIfExists(dropped.path);
            }
            if (!segments.isEmpty()) {
                segments.get(segments.size() - 1).cutFrom(startIndex);
            }
            lastAppended = startIndex - 1;
            if (commitIndex > lastAppended) {
                commitIndex(lastAppended);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("deleting entries from index " + startIndex + " in " + dir, e);
        }
    }

    @Override
    public void forEach(ObjLongConsumer<LogEntry> function, long startIndex, long endIndex) {
        long from = Math.max(Math.max(startIndex, firstIndex), 1);
        long to = Math.min(endIndex, lastAppended);
        for (long i = from; i <= to; i++) {
            LogEntry entry = get(i);
            if (entry != null) {
                function.accept(entry, i);
            }
        }
    }

    @Override
    public void forEach(ObjLongConsumer<LogEntry> function) {
        forEach(function, firstIndex, lastAppended);
    }

    @Override
    public long sizeInBytes() {
        long bytes = 0;
        for (Segment segment : segments) {
            bytes += segment.bytes;
        }
        return bytes;
    }

    @Override
    public String toString() {
        return "SegmentedLog " + dir + ": first=" + firstIndex + ", commit=" + commitIndex + ", last=" + lastAppended
                + ", term=" + currentTerm + ", segments=" + segments.size();
    }

    // ---- opening

    private void readMeta(Path metaPath) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(META_VOTE + Short.BYTES);
        meta.read(header, 0);
        header.flip();
        if (header.remaining() < META_VOTE + Short.BYTES || header.getInt(0) != META_MAGIC) {
            throw new IOException(metaPath + " is not a Ringcast Raft log's metadata (no \"RCLM\" header)");
        }
        if (header.getInt(4) != META_VERSION) {
            throw new IOException(metaPath + ": metadata version " + header.getInt(4) + ", this node reads "
                    + META_VERSION);
        }
        generation = header.getLong(META_GENERATION);
        currentTerm = header.getLong(META_TERM);
        commitIndex = header.getLong(META_COMMIT);
        firstIndex = header.getLong(META_FIRST);
        int voteBytes = header.getShort(META_VOTE) & 0xffff;
        if (voteBytes > 0) {
            ByteBuffer vote = ByteBuffer.allocate(voteBytes);
            meta.read(vote, META_VOTE + Short.BYTES);
            try {
                votedFor = Util.readAddress(new ByteArrayDataInputStream(vote.array()));
            } catch (ClassNotFoundException e) {
                throw new IOException(metaPath + ": the vote's address type is unknown", e);
            }
        }
    }

    /** Finds this generation's segments, checks every record, cuts a torn tail, drops what a crash left. */
    private void openSegments() throws IOException {
        List<Segment> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                if (!name.endsWith(SEGMENT_SUFFIX)) {
                    continue;
                }
                long[] key = Segment.parseName(name);
                if (key == null) {
                    throw new IOException(file + ": not a segment name (<generation>-<first index>.segment)");
                }
                if (key[0] != generation) {
                    Files.delete(file); // of the generation before a snapshot install, or a half-made next one
                    continue;
                }
                found.add(Segment.open(file, key[1]));
            }
        }
        found.sort((a, b) -> Long.compare(a.firstIndex, b.firstIndex));
        lastAppended = firstIndex;
        for (int i = 0; i < found.size(); i++) {
            Segment segment = found.get(i);
            boolean last = i == found.size() - 1;
            if (!segments.isEmpty() && segment.firstIndex != segments.get(segments.size() - 1).lastIndex() + 1) {
                // a gap: what follows was being deleted (a conflicting tail) when the node stopped
                logger.warn("cluster: {} does not follow the segment before it (next index {}); it and later "
                        + "segments are dropped", segment.path, segments.get(segments.size() - 1).lastIndex() + 1);
                dropFrom(found, i);
                break;
            }
            boolean cut = segment.scan(crc, last);
            if (segment.lastIndex() < firstIndex && !last) {
                segment.channel.close();
                Files.delete(segment.path); // wholly before the first index: a deletion the crash cut short
                continue;
            }
            segments.add(segment);
            if (cut) {
                dropFrom(found, i + 1);
                break;
            }
        }
        if (!segments.isEmpty()) {
            lastAppended = Math.max(firstIndex, segments.get(segments.size() - 1).lastIndex());
        }
        if (commitIndex > lastAppended) {
            logger.warn("cluster: the log in {} ends at index {} but its commit index is {} (entries lost without "
                    + "fsync?); the commit index goes back to {}, the leader sends the rest", dir, lastAppended,
                    commitIndex, lastAppended);
            commitIndex(lastAppended);
        }
    }

    private static void dropFrom(List<Segment> found, int from) throws IOException {
        for (Segment segment : found.subList(from, found.size())) {
            segment.channel.close();
            Files.deleteIfExists(segment.path);
        }
    }

    /** Reads a 1.1.4 file log left in the directory into this format once, then removes its files. */
    private void migrateFromFileBasedLog() throws Exception {
        FileBasedLog old = new FileBasedLog();
        old.init(dir.toString(), Map.of());
        try {
            meta = FileChannel.open(dir.resolve(META_FILE + ".tmp"), StandardOpenOption.CREATE,
                    StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            writeMetaHeader(old.currentTerm(), old.commitIndex(), old.firstAppended());
            currentTerm = old.currentTerm();
            commitIndex = old.commitIndex();
            firstIndex = old.firstAppended();
            lastAppended = firstIndex;
            if (old.votedFor() != null) {
                votedFor(old.votedFor());
            }
            long from = Math.max(1, old.firstAppended());
            if (old.lastAppended() >= from) {
                segments.add(Segment.create(dir, 0, from));
                lastAppended = from - 1;
                LogEntries batch = new LogEntries();
                for (long i = from; i <= old.lastAppended(); i++) {
                    batch.add(old.get(i));
                    if (batch.size() == 256 || i == old.lastAppended()) {
                        append(lastAppended + 1, batch);
                        batch = new LogEntries();
                    }
                }
            }
            ByteBuffer snapshot = old.getSnapshot();
            if (snapshot != null) {
                setSnapshot(snapshot);
            }
            for (Segment segment : segments) {
                segment.channel.force(false);
                segment.channel.close();
            }
            segments.clear();
            force(meta);
            meta.close();
            move(dir.resolve(META_FILE + ".tmp"), dir.resolve(META_FILE));
        } finally {
            old.close();
        }
        for (String file : List.of("entries.raft", "metadata.raft", "state_snapshot.raft")) {
            Files.deleteIfExists(dir.resolve(file));
        }
        logger.info("cluster: the log in {} was converted from jgroups-raft's file log (entries {} to {})", dir,
                firstIndex, lastAppended);
    }

    // ---- appending, truncating

    private Segment segmentToAppendAt(long index) throws IOException {
        Segment last = segments.isEmpty() ? null : segments.get(segments.size() - 1);
        if (last != null && last.lastIndex() + 1 != index) {
            // a truncation moved the first index past every entry: nothing before index stays
            segments.remove(segments.size() - 1);
            retire(last);
            last = null;
        }
        if (last == null || last.bytes >= SEGMENT_BYTES) {
            if (last != null && fsync) {
                last.channel.force(false);
            }
            last = Segment.create(dir, generation, index);
            segments.add(last);
            if (fsync) {
                forceDirectory();
            }
        }
        return last;
    }

    private ByteBuffer writeBufferFor(LogEntries entries) {
        long bytes = 0;
        for (LogEntry entry : entries) {
            bytes += RECORD_OVERHEAD + entry.length();
        }
        if (bytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("an append of " + bytes + " bytes");
        }
        if (writeBuffer.capacity() < bytes) {
            writeBuffer = ByteBuffer.allocateDirect((int) Math.max(bytes, 2L * writeBuffer.capacity()));
        }
        return writeBuffer.clear();
    }

    private int checksum(ByteBuffer buffer, int start, int length) {
        crc.reset();
        crc.update(buffer.duplicate().position(start).limit(start + length));
        return (int) crc.getValue();
    }

    private Segment segmentOf(long index) {
        int low = 0;
        int high = segments.size() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            Segment segment = segments.get(mid);
            if (index < segment.firstIndex) {
                high = mid - 1;
            } else if (index > segment.lastIndex()) {
                low = mid + 1;
            } else {
                return segment;
            }
        }
        return null;
    }

    /** Hands a segment no index refers to any more to the worker; deletes it here if the worker is behind. */
    private void retire(Segment segment) {
        if (!work.offer(segment::delete)) {
            segment.delete();
        }
    }

    /** The worker thread: deletes retired segments and writes deferred snapshots, in the order handed. */
    private void work() {
        try {
            while (true) {
                Runnable task = work.take();
                if (task == STOP) {
                    return;
                }
                task.run();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final Runnable STOP = () -> { };

    /**
     * Worker: writes the engine's part and the deferred content into the snapshot file, then makes
     * the truncation the engine asked meanwhile take effect on disk. The metadata's first index is
     * written under {@link #snapshotLock}, so that a later truncation of the runner's lands after it.
     */
    private void writeDeferred(DeferredSnapshot deferred) {
        long startNs = System.nanoTime();
        Path tmp = dir.resolve(SNAPSHOT_FILE + ".tmp");
        long bytes = -1;
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel), 64 << 10));
            out.write(deferred.enginesPart);
            deferred.content.writeTo(out);
            out.flush();
            force(channel);
            bytes = channel.size();
        } catch (IOException | RuntimeException e) {
            logger.error("cluster: the snapshot of {} could not be written ({}); the log keeps the entries it "
                    + "would have covered until the next snapshot", dir, e.toString());
        }
        if (bytes >= 0) {
            try {
                move(tmp, dir.resolve(SNAPSHOT_FILE));
            } catch (UncheckedIOException e) {
                logger.error("cluster: the snapshot of {} could not be put in place ({}); the log keeps the entries "
                        + "it would have covered until the next snapshot", dir, e.getCause().toString());
                bytes = -1;
            }
        }
        List<Segment> covered;
        synchronized (snapshotLock) {
            deferred.finished = true;
            deferred.succeeded = bytes >= 0;
            covered = deferred.segmentsOnceWritten;
            if (deferred.succeeded && deferred.firstIndexOnceWritten > 0) {
                writeMetaLong(META_FIRST, deferred.firstIndexOnceWritten);
            }
            writing = null;
            snapshotLock.notifyAll();
        }
        for (Segment segment : covered) {
            if (bytes >= 0) {
                segment.delete();
            } else {
                segment.close(); // its file stays: the log on disk still starts before it
            }
        }
        if (bytes >= 0) {
            deferred.onWritten.written(bytes, (System.nanoTime() - startNs) / 1_000_000);
        }
    }

    /** Waits until no deferred snapshot is being written, at most {@code millis}. */
    private void awaitSnapshotWritten(long millis) {
        long deadline = millis == Long.MAX_VALUE ? Long.MAX_VALUE : System.currentTimeMillis() + millis;
        synchronized (snapshotLock) {
            while (writing != null) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    logger.warn("cluster: closing {} while its snapshot is still being written", dir);
                    return;
                }
                try {
                    snapshotLock.wait(Math.min(left, 1_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for the snapshot of " + dir, e);
                }
            }
        }
    }

    private void stopWorker() {
        if (worker == null) {
            return;
        }
        try {
            boolean stuck;
            synchronized (snapshotLock) {
                stuck = writing != null; // its content never came (a sequencer stopped first): give up on it
            }
            if (stuck || !work.offer(STOP, CLOSE_WAIT_MS, TimeUnit.MILLISECONDS)) {
                worker.interrupt();
            }
            worker.join(CLOSE_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        worker = null;
    }

    /** A snapshot whose state machine's part the worker writes; what the engine's truncation asked meanwhile. */
    private static final class DeferredSnapshot {
        final long token;
        final SnapshotContent.Captured content;
        final SnapshotWritten onWritten;
        /** What the engine wrote before the state machine's part (its own state). */
        byte[] enginesPart;
        /** Guarded by {@code snapshotLock}, as the three below: the engine's truncation after it, to apply once written. */
        long firstIndexOnceWritten;
        final List<Segment> segmentsOnceWritten = new ArrayList<>();
        boolean finished;
        boolean succeeded;

        DeferredSnapshot(long token, SnapshotContent.Captured content, SnapshotWritten onWritten) {
            this.token = token;
            this.content = content;
            this.onWritten = onWritten;
        }
    }

    // ---- files

    /** Rewrites one field of the metadata in place; the runner's and the worker's alike (positional writes). */
    private void writeMetaLong(int offset, long value) {
        writeMeta(offset, value);
        try {
            force(meta);
        } catch (IOException e) {
            throw new UncheckedIOException("forcing " + dir.resolve(META_FILE) + " to disk", e);
        }
    }

    /** One field of the metadata file rewritten in place (8-byte aligned: no torn write), not forced. */
    private void writeMeta(int offset, long value) {
        try {
            writeFully(meta, ByteBuffer.allocate(Long.BYTES).putLong(0, value), offset);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + dir.resolve(META_FILE), e);
        }
    }

    /** A new metadata file's whole header, generation 0 and no vote, into {@link #meta}. */
    private void writeMetaHeader(long term, long commit, long first) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(META_VOTE + Short.BYTES);
        header.putInt(META_MAGIC).putInt(META_VERSION).putLong(0).putLong(term).putLong(commit).putLong(first)
                .putShort((short) 0).flip();
        writeFully(meta, header, 0);
        force(meta);
    }

    private void force(FileChannel channel) throws IOException {
        if (fsync) {
            channel.force(false);
        }
    }

    private void forceDirectory() throws IOException {
        try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
            directory.force(true);
        } catch (IOException e) {
            if (fsync) {
                throw e;
            }
        }
    }

    private void move(Path from, Path to) {
        try {
            try {
                Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
            }
            if (fsync) {
                forceDirectory();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("moving " + from + " to " + to, e);
        }
    }

    private static int writeFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        int written = 0;
        while (buffer.hasRemaining()) {
            written += channel.write(buffer, position + written);
        }
        return written;
    }

    /** One segment file: its first index, where each entry starts, how many bytes it holds. */
    private static final class Segment {
        final Path path;
        final FileChannel channel;
        final long firstIndex;
        long[] starts = new long[256];
        int count;
        long bytes;

        private Segment(Path path, FileChannel channel, long firstIndex) {
            this.path = path;
            this.channel = channel;
            this.firstIndex = firstIndex;
        }

        static Segment create(Path dir, long generation, long firstIndex) throws IOException {
            Path path = dir.resolve(String.format("%d-%020d%s", generation, firstIndex, SEGMENT_SUFFIX));
            FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            return new Segment(path, channel, firstIndex);
        }

        static Segment open(Path path, long firstIndex) throws IOException {
            return new Segment(path, FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE), firstIndex);
        }

        /** {generation, first index} from a file name, or null when it is not one of ours. */
        static long[] parseName(String name) {
            int dash = name.indexOf('-');
            if (dash <= 0) {
                return null;
            }
            try {
                return new long[] {Long.parseLong(name.substring(0, dash)),
                        Long.parseLong(name.substring(dash + 1, name.length() - SEGMENT_SUFFIX.length()))};
            } catch (NumberFormatException e) {
                return null;
            }
        }

        long lastIndex() {
            return firstIndex + count - 1;
        }

        void add(long start) {
            if (count == starts.length) {
                starts = Arrays.copyOf(starts, count * 2);
            }
            starts[count++] = start;
        }

        LogEntry read(long index) throws IOException {
            int i = (int) (index - firstIndex);
            long start = starts[i];
            long end = i + 1 < count ? starts[i + 1] : bytes;
            ByteBuffer record = ByteBuffer.allocate((int) (end - start));
            while (record.hasRemaining()) {
                if (channel.read(record, start + record.position()) < 0) {
                    throw new IOException("index " + index + " ends early at byte " + (start + record.position()));
                }
            }
            int length = record.getInt(0);
            long term = record.getLong(Integer.BYTES);
            boolean internal = (record.get(Integer.BYTES + Long.BYTES) & FLAG_INTERNAL) != 0;
            byte[] command = Arrays.copyOfRange(record.array(), RECORD_HEADER, RECORD_HEADER + length);
            return new LogEntry(term, command, 0, length, internal);
        }

        /**
         * Reads every record, checking each. A bad or short record at the end of the last segment is
         * cut off (an append the crash interrupted, never acknowledged); anywhere else it is damage.
         *
         * @return whether a tail was cut
         */
        boolean scan(CRC32C crc, boolean last) throws IOException {
            long size = channel.size();
            ByteBuffer header = ByteBuffer.allocate(RECORD_HEADER);
            long position = 0;
            while (position < size) {
                String problem = null;
                header.clear();
                channel.read(header, position);
                int length = header.getInt(0);
                if (header.position() < RECORD_HEADER) {
                    problem = "a record header cut short";
                } else if (length < 0 || position + RECORD_OVERHEAD + length > size) {
                    problem = "a record of " + length + " bytes past the end of the file";
                } else {
                    ByteBuffer record = ByteBuffer.allocate(RECORD_OVERHEAD + length);
                    channel.read(record, position);
                    crc.reset();
                    crc.update(record.array(), 0, RECORD_HEADER + length);
                    if ((int) crc.getValue() != record.getInt(RECORD_HEADER + length)) {
                        problem = "a record whose check does not match";
                    }
                }
                if (problem != null) {
                    if (!last) {
                        throw new IOException(path + ": " + problem + " at byte " + position + " (index "
                                + (firstIndex + count) + "): the log is damaged");
                    }
                    logger.warn("cluster: {}: {} at byte {} (index {}), an append the node's stop interrupted: cut off",
                            path, problem, position, firstIndex + count);
                    channel.truncate(position);
                    bytes = position;
                    return true;
                }
                add(position);
                position += RECORD_OVERHEAD + length;
            }
            bytes = position;
            return false;
        }

        /** Drops the entries from index on (it is in this segment or just after it). */
        void cutFrom(long index) throws IOException {
            int keep = (int) Math.max(0, Math.min(count, index - firstIndex));
            long end = keep < count ? starts[keep] : bytes;
            channel.truncate(end);
            count = keep;
            bytes = end;
        }

        void close() {
            try {
                channel.close();
            } catch (IOException e) {
                logger.warn("cluster: could not close the log segment {}: {}", path, e.toString());
            }
        }

        void delete() {
            try {
                channel.close();
                Files.deleteIfExists(path);
            } catch (IOException e) {
                logger.warn("cluster: could not delete the old log segment {}: {}", path, e.toString());
            }
        }
    }
}
