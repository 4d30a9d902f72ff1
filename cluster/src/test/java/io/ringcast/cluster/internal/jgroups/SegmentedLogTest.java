package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jgroups.protocols.raft.FileBasedLog;
import org.jgroups.protocols.raft.LogEntries;
import org.jgroups.protocols.raft.LogEntry;
import org.jgroups.util.Util;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What {@link SegmentedLog} adds to the engine's log contract ({@code LogContractTest} holds that):
 * truncation by whole segments, what a crash can leave, and the move from jgroups-raft's file log.
 */
@Timeout(60)
class SegmentedLogTest {
    private static final int ENTRY_BYTES = 8 << 10;

    @TempDir
    Path dir;

    private SegmentedLog log;

    @AfterEach
    void close() {
        if (log != null) {
            log.close();
        }
    }

    @Test
    void aTruncationDeletesTheSegmentsBeforeItsIndexAndKeepsTheOneHoldingIt() throws Exception {
        log = open();
        appendRange(log, 1, 2_000); // ~16 MB: four or five segments
        assertThat(segmentFiles()).hasSizeGreaterThanOrEqualTo(4);
        log.commitIndex(1_990);
        log.setSnapshot(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        log.truncate(1_990);

        assertThat(log.firstAppended()).isEqualTo(1_990);
        assertThat(log.get(1_989)).isNull();
        assertEntry(log.get(1_990), 1_990);
        awaitSegmentFiles(1); // deleted by the log's deleter thread, not by the caller
        appendRange(log, 2_001, 10);
        assertEntry(log.get(2_010), 2_010);
    }

    @Test
    void aLogReopensAfterATruncationWithTheSameEntriesAndSnapshot() throws Exception {
        log = open();
        appendRange(log, 1, 1_200);
        log.commitIndex(1_100);
        log.setSnapshot(ByteBuffer.wrap(new byte[] {9, 8, 7}));
        log.truncate(1_100);
        log.currentTerm(5);
        log.votedFor(Util.createRandomAddress("node-2"));
        log.close();

        log = open();
        assertThat(log.firstAppended()).isEqualTo(1_100);
        assertThat(log.lastAppended()).isEqualTo(1_200);
        assertThat(log.commitIndex()).isEqualTo(1_100);
        assertThat(log.currentTerm()).isEqualTo(5);
        assertThat(log.votedFor()).isNotNull();
        assertThat(log.getSnapshot().array()).containsExactly(9, 8, 7);
        for (long i = 1_100; i <= 1_200; i++) {
            assertEntry(log.get(i), i);
        }
        assertThat(log.get(1_099)).isNull();
    }

    @Test
    void anAppendCutShortByACrashIsDroppedWhenTheLogOpens() throws Exception {
        log = open();
        appendRange(log, 1, 10);
        log.close();
        Path last = segmentFiles().get(segmentFiles().size() - 1);
        try (RandomAccessFile file = new RandomAccessFile(last.toFile(), "rw")) {
            file.setLength(file.length() - 100); // the tenth record half written
        }

        log = open();
        assertThat(log.lastAppended()).isEqualTo(9);
        assertEntry(log.get(9), 9);
        appendRange(log, 10, 1);
        log.close();
        log = open();
        assertEntry(log.get(10), 10);
    }

    @Test
    void aDamagedRecordBeforeTheLastSegmentRefusesToOpenNamingTheFile() throws Exception {
        log = open();
        appendRange(log, 1, 1_200); // two segments at least
        log.close();
        log = null;
        Path first = segmentFiles().get(0);
        try (RandomAccessFile file = new RandomAccessFile(first.toFile(), "rw")) {
            file.seek(100);
            file.write(new byte[] {42, 42, 42});
        }

        SegmentedLog damaged = new SegmentedLog();
        assertThatThrownBy(() -> damaged.init(dir.toString(), new HashMap<>()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(first.getFileName().toString())
                .hasMessageContaining("damaged");
    }

    @Test
    void aSnapshotInstalledFromTheLeaderReplacesTheWholeLogAndSurvivesAReopen() throws Exception {
        log = open();
        appendRange(log, 1, 700);
        log.commitIndex(650);
        log.reinitializeTo(5_000, entry(5_000, 7));

        assertThat(log.firstAppended()).isEqualTo(5_000);
        assertThat(log.lastAppended()).isEqualTo(5_000);
        assertThat(log.commitIndex()).isEqualTo(5_000);
        assertThat(log.currentTerm()).isEqualTo(7);
        assertThat(log.get(650)).isNull();
        awaitSegmentFiles(1);
        log.close();

        log = open();
        assertThat(log.firstAppended()).isEqualTo(5_000);
        assertThat(log.lastAppended()).isEqualTo(5_000);
        assertThat(log.get(5_000).term()).isEqualTo(7);
        appendRange(log, 5_001, 3);
        assertEntry(log.get(5_003), 5_003);
    }

    @Test
    void segmentsOfAnotherGenerationOrWhollyBeforeTheFirstIndexAreDeletedWhenTheLogOpens() throws Exception {
        log = open();
        appendRange(log, 1, 1_200);
        log.commitIndex(1_150);
        log.truncate(1_150);
        log.close();
        log = null;
        // what a crash can leave: a retired segment the deleter had not reached, and the first segment of
        // a snapshot install whose metadata was never written
        Files.write(dir.resolve(String.format("0-%020d.segment", 1)), new byte[0]);
        Files.write(dir.resolve(String.format("1-%020d.segment", 9_000)), new byte[] {1, 2, 3});

        log = open();
        assertThat(log.firstAppended()).isEqualTo(1_150);
        assertThat(log.lastAppended()).isEqualTo(1_200);
        assertThat(segmentFiles()).allSatisfy(p -> assertThat(p.getFileName().toString()).startsWith("0-"));
        assertEntry(log.get(1_200), 1_200);
    }

    @Test
    void entriesDeletedFromTheMiddleOfASegmentAreReplacedByTheNextAppend() throws Exception {
        log = open();
        appendRange(log, 1, 1_000);
        log.commitIndex(400);
        log.deleteAllEntriesStartingFrom(450);
        assertThat(log.lastAppended()).isEqualTo(449);
        LogEntries replacement = new LogEntries();
        replacement.add(new LogEntry(3, "replaced".getBytes()));
        log.append(450, replacement);
        log.close();

        log = open();
        assertThat(log.lastAppended()).isEqualTo(450);
        assertThat(new String(log.get(450).command())).isEqualTo("replaced");
        assertThat(log.get(450).term()).isEqualTo(3);
        assertEntry(log.get(449), 449);
    }

    @Test
    void theCurrentTermNeverGoesDownWhenOlderEntriesAreAppended() throws Exception {
        log = open();
        log.currentTerm(9);
        appendRange(log, 1, 3); // entries of term 1, as a follower receives an old leader's entries
        assertThat(log.currentTerm()).isEqualTo(9);
    }

    @Test
    void aFileLogOfTheEngineLeftInTheDirectoryIsConvertedOnce() throws Exception {
        FileBasedLog old = new FileBasedLog();
        old.init(dir.toString(), new HashMap<>());
        appendRange(old, 1, 300);
        old.commitIndex(250);
        old.currentTerm(4);
        old.setSnapshot(ByteBuffer.wrap(new byte[] {5, 5}));
        old.truncate(200);
        old.close();

        log = open();
        assertThat(log.firstAppended()).isEqualTo(200);
        assertThat(log.lastAppended()).isEqualTo(300);
        assertThat(log.commitIndex()).isEqualTo(250);
        assertThat(log.currentTerm()).isEqualTo(4);
        assertThat(log.getSnapshot().array()).containsExactly(5, 5);
        for (long i = 200; i <= 300; i++) {
            assertEntry(log.get(i), i);
        }
        assertThat(dir.resolve("entries.raft")).doesNotExist();
    }

    @Test
    void aDeferredSnapshotIsWrittenByTheWorkerAndItsTruncationReachesTheDiskOnlyOnceItIsThere() throws Exception {
        log = open();
        appendRange(log, 1, 1_500); // ~12 MB: three segments at least
        log.commitIndex(1_400);
        int segmentsBefore = segmentFiles().size();
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Long> written = new CompletableFuture<>();
        byte[] placeholder = log.deferContent(out -> {
            awaitQuietly(release); // the sequencer's capture, still on its way
            out.write(new byte[] {7, 7, 7});
        }, (bytes, millis) -> written.complete(bytes));

        log.setSnapshot(engineSnapshot(new byte[] {1, 2}, placeholder)); // returns at once: the worker writes
        log.truncate(1_400);
        assertThat(log.firstAppended()).isEqualTo(1_400); // at once in memory, for the engine
        assertThat(metaFirstIndexOnDisk()).isZero(); // not on disk until the snapshot is
        assertThat(segmentFiles()).hasSize(segmentsBefore);
        assertThat(dir.resolve("snapshot.raft")).doesNotExist();

        release.countDown();
        assertThat(written.get(10, TimeUnit.SECONDS)).isEqualTo(5);
        assertThat(log.getSnapshot().array()).containsExactly(1, 2, 7, 7, 7);
        assertThat(metaFirstIndexOnDisk()).isEqualTo(1_400);
        awaitSegmentFiles(1);
        log.close();
        log = open();
        assertThat(log.firstAppended()).isEqualTo(1_400);
        assertThat(log.getSnapshot().array()).containsExactly(1, 2, 7, 7, 7);
        assertEntry(log.get(1_500), 1_500);
    }

    @Test
    void readingTheSnapshotWaitsForADeferredOneBeingWritten() throws Exception {
        log = open();
        appendRange(log, 1, 10);
        log.commitIndex(10);
        CountDownLatch release = new CountDownLatch(1);
        byte[] placeholder = log.deferContent(out -> {
            awaitQuietly(release);
            out.write(9);
        }, (bytes, millis) -> { });
        log.setSnapshot(engineSnapshot(new byte[] {4}, placeholder));
        log.truncate(10);

        CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> log.getSnapshot().array());
        assertThat(read).isNotDone(); // it cannot have the snapshot before the content is written
        release.countDown();
        assertThat(read.get(10, TimeUnit.SECONDS)).containsExactly(4, 9);
    }

    @Test
    void aDeferredSnapshotThatFailsLeavesThePreviousSnapshotAndTheWholeLogOnDisk() throws Exception {
        log = open();
        appendRange(log, 1, 1_500);
        log.commitIndex(500);
        log.setSnapshot(ByteBuffer.wrap(new byte[] {1})); // an earlier snapshot, at 500
        log.truncate(500);
        awaitSegmentFiles(segmentFiles().size()); // nothing pending
        log.commitIndex(1_400);
        byte[] placeholder = log.deferContent(out -> {
            throw new IOException("the sequencer could not capture the snapshot's topics");
        }, (bytes, millis) -> { throw new AssertionError("a failed snapshot is not reported written"); });
        log.setSnapshot(engineSnapshot(new byte[] {2}, placeholder));
        log.truncate(1_400);
        log.close(); // waits for the worker
        log = open();

        assertThat(log.getSnapshot().array()).containsExactly(1);
        assertThat(log.firstAppended()).isEqualTo(500);
        for (long i = 500; i <= 1_500; i++) {
            assertEntry(log.get(i), i);
        }
    }

    private SegmentedLog open() throws Exception {
        SegmentedLog opened = new SegmentedLog();
        opened.useFsync(false);
        opened.init(dir.toString(), new HashMap<>());
        return opened;
    }

    /** Entries first..first+n-1, each of term 1 and {@link #ENTRY_BYTES} bytes starting with its index. */
    private static void appendRange(org.jgroups.protocols.raft.Log target, long first, int n) {
        for (long i = first; i < first + n; i++) {
            LogEntries one = new LogEntries();
            one.add(entry(i, 1));
            target.append(i, one);
        }
    }

    private static LogEntry entry(long index, long term) {
        byte[] command = new byte[ENTRY_BYTES];
        ByteBuffer.wrap(command).putLong(index);
        return new LogEntry(term, command);
    }

    private static void assertEntry(LogEntry entry, long index) {
        assertThat(entry).as("entry %d", index).isNotNull();
        assertThat(entry.length()).isEqualTo(ENTRY_BYTES);
        assertThat(ByteBuffer.wrap(entry.command(), entry.offset(), entry.length()).getLong()).isEqualTo(index);
    }

    /** What the engine hands {@code setSnapshot}: its own state, then what the state machine wrote. */
    private static ByteBuffer engineSnapshot(byte[] enginesPart, byte[] stateMachinesPart) {
        return ByteBuffer.allocate(enginesPart.length + stateMachinesPart.length).put(enginesPart)
                .put(stateMachinesPart).flip();
    }

    /** The first index as the metadata file holds it (offset 32, see {@code SegmentedLog}). */
    private long metaFirstIndexOnDisk() throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(dir.resolve("log.meta"))).getLong(32);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("not released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private List<Path> segmentFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".segment")).sorted().toList();
        }
    }

    private void awaitSegmentFiles(int count) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (segmentFiles().size() != count && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // the deleter thread works within milliseconds
            Thread.yield();
        }
        assertThat(segmentFiles()).hasSize(count);
    }
}
