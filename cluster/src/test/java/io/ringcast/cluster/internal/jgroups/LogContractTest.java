package io.ringcast.cluster.internal.jgroups;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import org.jgroups.Address;
import org.jgroups.protocols.raft.FileBasedLog;
import org.jgroups.protocols.raft.Log;
import org.jgroups.protocols.raft.LogEntries;
import org.jgroups.protocols.raft.LogEntry;
import org.jgroups.util.UUID;
import org.jgroups.util.Util;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The contract the Raft engine expects of a persistent {@link Log}: jgroups-raft 1.1.4's own log test
 * ({@code tests/junit-functional/org/jgroups/raft/tests/LogTest.java} at tag {@code jgroups-raft-1.1.4.Final}),
 * every method ported with every assertion, plus what the engine relies on across restarts that
 * upstream does not check. Each test runs on every log in {@link #logs()}, so a log of ours passes
 * exactly what the engine's own file log passes.
 *
 * <p>A reopen closes the log and opens a new instance on the same directory, as a restarted node
 * does: what is read back must come from disk, not from fields of the old object. Upstream reopens
 * the same instance; a new one proves more and is what the engine meets.
 */
@Timeout(30) // the large-log test writes and truncates about 24 MB with fsync; the others take milliseconds
class LogContractTest {

    @TempDir
    Path dir;

    /** The log of the running test; closed after it, whichever way it ended. */
    private Log log;
    private Supplier<Log> factory;

    static Stream<Named<Supplier<Log>>> logs() {
        List<Named<Supplier<Log>>> logs = new ArrayList<>();
        logs.add(Named.of("FileBasedLog", FileBasedLog::new));
        logs.add(Named.of("SegmentedLog", SegmentedLog::new)); // ours
        return logs.stream();
    }

    @AfterEach
    void closeLog() throws Exception {
        if (log != null) {
            log.close();
            log = null;
        }
    }

    // ---- ported from upstream LogTest ----

    /** Ports upstream {@code testFields}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void termAndVoteSurviveAReopenAndAreGoneAfterADelete(Supplier<Log> logs) throws Exception {
        Address addr = Util.createRandomAddress("A");
        open(logs);
        log.currentTerm(22);
        assertEquals(22, log.currentTerm());

        log.votedFor(addr);
        assertEquals(addr, log.votedFor());

        reopen();
        assertEquals(22, log.currentTerm());
        assertEquals(addr, log.votedFor());

        deleteAndReopen();
        assertEquals(0, log.currentTerm());
        assertNull(log.votedFor());
    }

    /** Ports upstream {@code testNewLog}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aNewLogIsEmptyAtTermZeroWithNoVote(Supplier<Log> logs) throws Exception {
        open(logs);
        assertPositions(0, 0, 0, 0);
        assertNull(log.votedFor());
    }

    /** Ports upstream {@code testNewLogAfterDelete}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aDeletedLogReopensEmpty(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 5, 5, 5);
        log.commitIndex(2);
        assertPositions(0, 3, 2, 5);

        deleteAndReopen();
        assertPositions(0, 0, 0, 0);
        assertNull(log.votedFor());
    }

    /** Ports upstream {@code testMetadataInAReopenedLog}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aReopenedLogKeepsItsPositionsTermAndVote(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 4, 4, 5, 5, 6, 6, 6);
        log.commitIndex(10);
        log.votedFor(Util.createRandomAddress("A"));

        reopen();
        assertPositions(0, 10, 10, 6);
        // a new random address named "A": only the name shows that the vote was read back
        assertEquals(Util.createRandomAddress("A").toString(), log.votedFor().toString());
    }

    /** Ports upstream {@code testAppendOnLeader}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void appendingABatchMovesLastAppendedAndTheTermButNotTheCommitIndex(Supplier<Log> logs) throws Exception {
        open(logs);
        byte[] buf = new byte[10];
        log.append(1, LogEntries.create(new LogEntry(5, buf), new LogEntry(5, buf)));
        assertPositions(0, 2, 0, 5);
    }

    /** Ports upstream {@code testAppendMultipleEntries}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aSecondBatchFollowsTheFirstAndItsLastTermBecomesCurrent(Supplier<Log> logs) throws Exception {
        open(logs);
        byte[] buf = new byte[10];
        LogEntries le = new LogEntries().add(new LogEntry(1, buf), new LogEntry(1, buf), new LogEntry(3, buf));
        log.append(1, le);
        assertPositions(0, 3, 0, 3);

        le.clear();
        for (int i = 0; i < 30; i++) {
            le.add(new LogEntry(Math.max(3, i / 2), buf));
        }
        log.append(4, le);
        assertPositions(0, 33, 0, 29 / 2);
    }

    /** Ports upstream {@code testAppendMultipleEntriesOneByOne}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void eachEntryOfABatchMayCarryItsOwnTerm(Supplier<Log> logs) throws Exception {
        open(logs);
        byte[] buf = new byte[10];
        LogEntries le = new LogEntries();
        for (int i = 0; i < 30; i++) {
            le.add(new LogEntry(i + 1, buf));
        }
        log.append(1, le);
        assertPositions(0, 30, 0, 30);
    }

    /** Ports upstream {@code testDeleteEntriesInTheMiddle}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void deletingFromTheMiddleDropsThatEntryAndEveryLaterOneAndTakesBackTheirTerm(Supplier<Log> logs)
            throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3);
        log.commitIndex(5);

        log.deleteAllEntriesStartingFrom(6);
        assertPositions(0, 5, 5, termAfterDeleting(2, 3));
        for (int i = 1; i <= 5; i++) {
            assertNotNull(log.get(i), "entry " + i);
        }
        for (int i = 6; i <= 11; i++) {
            assertNull(log.get(i), "entry " + i);
        }
    }

    /** Ports upstream {@code testDeleteEntriesFromFirst}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void deletingFromTheFirstIndexEmptiesAnUncommittedLog(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3);
        // nothing committed: Raft never deletes a committed entry

        log.deleteAllEntriesStartingFrom(1);
        assertPositions(0, 0, 0, termAfterDeleting(0, 3));
        for (int i = 1; i <= 11; i++) {
            assertNull(log.get(i), "entry " + i);
        }
    }

    /** Ports upstream {@code testDeleteEntriesFromLast}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void deletingFromTheLastIndexDropsOnlyTheLastEntry(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3);
        log.commitIndex(10);

        log.deleteAllEntriesStartingFrom(11);
        assertPositions(0, 10, 10, 3);
        for (int i = 1; i <= 10; i++) {
            assertNotNull(log.get(i), "entry " + i);
        }
        assertNull(log.get(11));
    }

    /** Ports upstream {@code testTruncateInTheMiddle}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void truncatingInTheMiddleDropsOnlyTheEarlierEntries(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3);
        log.commitIndex(11);

        log.truncate(6);
        assertPositions(6, 11, 11, 3);
        for (int i = 1; i <= 5; i++) {
            assertNull(log.get(i), "entry " + i);
        }
        for (int i = 6; i <= 11; i++) {
            assertNotNull(log.get(i), "entry " + i);
        }
    }

    /** Ports upstream {@code testTruncateFirst}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void truncatingAtTheFirstIndexDropsNothing(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3);
        log.commitIndex(11);

        log.truncate(1);
        assertPositions(1, 11, 11, 3);
        assertNotNull(log.get(1));
    }

    /** Ports upstream {@code testTruncateLast}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void truncatingAtTheLastIndexKeepsOnlyTheLastEntry(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3);
        log.commitIndex(11);

        log.truncate(11);
        assertPositions(11, 11, 11, 3);
        for (int i = 1; i <= 10; i++) {
            assertNull(log.get(i), "entry " + i);
        }
        assertNotNull(log.get(11));
    }

    /** Ports upstream {@code testTruncateAndReopen}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aTruncatedLogReopensWithItsFirstEntryAtTheTruncationPoint(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2);
        log.commitIndex(5);

        log.truncate(4);
        reopen();
        assertEquals(4, log.firstAppended());
        assertEquals(5, log.lastAppended());
        for (int i = 1; i <= 3; i++) {
            assertNull(log.get(i), "entry " + i);
        }
        for (int i = 4; i <= 5; i++) {
            assertNotNull(log.get(i), "entry " + i);
        }
    }

    /** Ports upstream {@code testTruncateAtCommitIndexAndReopen}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aLogTruncatedAtItsCommitIndexReopensHoldingOnlyThatEntry(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 2, 3, 4, 5);
        log.commitIndex(log.lastAppended());
        log.truncate(log.commitIndex());

        reopen();
        assertEquals(10, log.firstAppended());
        assertEquals(10, log.lastAppended());
        assertEquals(10, log.commitIndex());
        for (int i = 1; i < 10; i++) {
            assertNull(log.get(i), "entry " + i);
        }
        assertNotNull(log.get(10));
    }

    /** Ports upstream {@code testTruncateTwice}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aSecondTruncationMovesTheFirstIndexFurtherAndLeavesTheCommitIndex(Supplier<Log> logs) throws Exception {
        open(logs);
        appendTerms(1, 10, 5);
        log.commitIndex(6);
        log.truncate(4);
        assertEquals(6, log.commitIndex());
        assertEquals(4, log.firstAppended());

        log.commitIndex(10);
        log.truncate(8);
        assertEquals(10, log.commitIndex());
        assertEquals(8, log.firstAppended());
    }

    /** Ports upstream {@code testTruncateOnlyCommitted}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void truncationStopsAtTheCommitIndex(Supplier<Log> logs) throws Exception {
        open(logs);
        appendTerms(1, 10, 5);

        log.commitIndex(5);
        log.truncate(10);
        assertEquals(5, log.commitIndex());
        assertEquals(5, log.firstAppended());
    }

    /** Ports upstream {@code testReinitializeTo}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void reinitializingReplacesEveryEntryWithOneAtTheGivenIndexAndAppendsAfterIt(Supplier<Log> logs)
            throws Exception {
        open(logs);
        appendTerms(1, 10, 5);
        assertPositions(0, 10, 0, 5);

        log.reinitializeTo(5, new LogEntry(10, null));
        assertPositions(5, 5, 5, 10);
        assertEquals(1, log.size());

        long last = log.append(6, LogEntries.create(new LogEntry(15, null)));
        assertEquals(6, last);
        assertEquals(2, log.size());
        assertPositions(5, 6, 5, 15);
    }

    /** Ports upstream {@code testForEach}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void forEachVisitsEveryEntryFromFirstToLastAppendedAndClampsItsRange(Supplier<Log> logs) throws Exception {
        open(logs);
        byte[] buf = new byte[10];
        LogEntries le = new LogEntries();
        for (int i = 1; i <= 10; i++) {
            le.add(new LogEntry(i, buf));
        }
        log.append(1, le);
        log.commitIndex(8);

        AtomicInteger cnt = new AtomicInteger(0);
        log.forEach((entry, index) -> cnt.incrementAndGet());
        assertEquals(10, cnt.get());

        cnt.set(0);
        log.truncate(8);

        append(11, buf, 6, 6, 6, 7, 7, 7, 8, 8, 8, 8);
        log.forEach((entry, index) -> cnt.incrementAndGet());
        assertEquals(13, cnt.get());

        cnt.set(0);
        log.forEach((entry, index) -> cnt.incrementAndGet(), 0, 25);
        assertEquals(13, cnt.get());
    }

    /** Ports upstream {@code testSize}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void sizeCountsTheEntriesAppendedAndThoseLeftAfterATruncation(Supplier<Log> logs) throws Exception {
        open(logs);
        byte[] buf = new byte[10];
        assertEquals(0, log.size());
        LogEntries le = new LogEntries();
        le.add(new LogEntry(5, buf));
        log.append(1, le);
        assertEquals(1, log.size());

        le.clear().add(new LogEntry(5, buf));
        log.append(2, le);
        assertEquals(2, log.size());

        le.clear();
        for (int i = 3; i <= 8; i++) {
            le.add(new LogEntry(5, buf));
        }
        log.append(3, le);
        assertEquals(8, log.size());

        log.commitIndex(3);
        log.truncate(3); // drops 1 and 2, keeps 3
        assertEquals(6, log.size());
    }

    /** Ports upstream {@code testSizeInBytes}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void sizeInBytesIsZeroWhenNewAndCoversAtLeastTheAppendedCommands(Supplier<Log> logs) throws Exception {
        open(logs);
        assertEquals(0, log.sizeInBytes());
        byte[] buf = new byte[50];
        final int num = 100;
        LogEntries le = new LogEntries();
        for (int i = 0; i < num; i++) {
            le.add(new LogEntry(1, buf));
        }
        long last = log.append(1, le);
        assertEquals(num, last);
        long sizeInBytes = log.sizeInBytes();
        assertTrue(sizeInBytes >= (long) buf.length * num, "size in bytes " + sizeInBytes);
    }

    /** Ports upstream {@code testInternalCommand}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void theInternalFlagOfEachEntryIsKept(Supplier<Log> logs) throws Exception {
        open(logs);
        assertEquals(0, log.sizeInBytes());
        byte[] buf = new byte[10];
        LogEntries entries = new LogEntries();
        for (int i = 1; i <= 10; i++) {
            entries.add(new LogEntry(i, buf).internal((i & 1) == 0));
        }

        long last = log.append(1, entries);
        assertEquals(entries.size(), last, "not every entry stored");

        AtomicInteger visited = new AtomicInteger();
        log.forEach((e, index) -> {
            assertEquals((index & 1) == 0, e.internal(), "internal flag of entry " + index);
            visited.incrementAndGet();
        });
        // not upstream: without it, a forEach that visits nothing would pass
        assertEquals(10, visited.get());
    }

    // ---- beyond upstream: what the engine relies on across a restart ----

    /**
     * Beyond upstream: the engine's snapshot step (set the snapshot, truncate at the commit index)
     * followed by a restart, which is how a node comes back after compacting its log.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void theSnapshotAndTheEntryAtTheCommitIndexSurviveTruncationAndAReopen(Supplier<Log> logs) throws Exception {
        open(logs);
        append(1, new byte[10], 1, 1, 1, 2, 2, 2, 3, 3, 3, 4);
        log.commitIndex(10);
        byte[] snapshot = "state machine at 10".getBytes(StandardCharsets.UTF_8);
        log.setSnapshot(ByteBuffer.wrap(snapshot));
        log.truncate(10);
        assertArrayEquals(snapshot, bytesOf(log.getSnapshot()));

        reopen();
        assertArrayEquals(snapshot, bytesOf(log.getSnapshot()));
        assertEquals(10, log.firstAppended());
        assertEquals(10, log.lastAppended());
        assertEquals(10, log.commitIndex());
        LogEntry kept = log.get(10);
        assertNotNull(kept);
        assertEquals(4, kept.term());
        assertNull(log.get(9));

        // the next AppendEntries after the restart needs the kept entry as its predecessor
        assertEquals(11, log.append(11, LogEntries.create(new LogEntry(4, new byte[10]))));
        assertNotNull(log.get(11));
    }

    /** Beyond upstream: Raft's persistent state (term, vote) and the commit index read back by a new instance. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void termVoteAndCommitIndexSurviveAReopen(Supplier<Log> logs) throws Exception {
        open(logs);
        appendTerms(1, 5, 3);
        Address vote = UUID.randomUUID();
        log.currentTerm(9);
        log.votedFor(vote);
        log.commitIndex(4);

        reopen();
        assertEquals(9, log.currentTerm());
        assertEquals(vote, log.votedFor());
        assertEquals(4, log.commitIndex());
        assertEquals(5, log.lastAppended());
    }

    /**
     * Beyond upstream: a follower that installed a leader's snapshot (reinitializeTo) and then restarts
     * must come back at the snapshot's index and keep appending from there.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aReinitializedLogReopensAtItsNewIndexAndAppendsAfterIt(Supplier<Log> logs) throws Exception {
        open(logs);
        // FileBasedLog 1.1.4 fails this: LogEntryStorage.reinitializeTo fills its write buffer and writes it
        // without flip(), so 0 bytes reach entries.raft; get(100) is null at once, and a reopened log is
        // empty (first=last=0) while its commit index is 100, so the next append throws. Fixed upstream
        // only in 2.0.0.Beta1 (eb497e5). Skipped, not disabled, so that the other logs still run it.
        assumeFalse(log.getClass() == FileBasedLog.class,
                "FileBasedLog 1.1.4 never writes the entry given to reinitializeTo (buffer not flipped)");
        appendTerms(1, 10, 5);
        log.commitIndex(5);
        byte[] command = "entry of the snapshot".getBytes(StandardCharsets.UTF_8);
        log.reinitializeTo(100, new LogEntry(7, command));
        assertArrayEquals(command, bytesOf(log.get(100)), "entry 100 before the reopen");

        reopen();
        assertPositions(100, 100, 100, 7);
        LogEntry first = log.get(100);
        assertNotNull(first);
        assertEquals(7, first.term());
        assertArrayEquals(command, bytesOf(first));
        assertNull(log.get(10), "an entry from before the reinitialization");

        assertEquals(101, log.append(101, LogEntries.create(new LogEntry(7, new byte[10]))));
        assertEquals(101, log.lastAppended());
        assertNotNull(log.get(101));

        reopen();
        assertPositions(100, 101, 100, 7);
        assertNotNull(log.get(101));
    }

    /**
     * Beyond upstream: a follower drops a deposed leader's uncommitted tail and takes the new leader's
     * entries at the same indices; after a restart it must read the new entries, never the old ones,
     * and nothing of the old tail past the new one.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void entriesWrittenOverADeletedTailAreTheOnesReadBackAfterAReopen(Supplier<Log> logs) throws Exception {
        open(logs);
        byte[] old = filled((byte) 'o');
        byte[] replacing = filled((byte) 'n');
        append(1, old, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2);
        log.commitIndex(5);

        log.deleteAllEntriesStartingFrom(7);
        append(7, replacing, 3, 3); // shorter than the dropped tail (7..10)

        reopen();
        assertEquals(8, log.lastAppended());
        assertEquals(3, log.currentTerm());
        LogEntry kept = log.get(6);
        assertEquals(2, kept.term());
        assertArrayEquals(old, bytesOf(kept));
        for (int i = 7; i <= 8; i++) {
            LogEntry entry = log.get(i);
            assertNotNull(entry, "entry " + i);
            assertEquals(3, entry.term(), "term of entry " + i);
            assertArrayEquals(replacing, bytesOf(entry), "bytes of entry " + i);
        }
        for (int i = 9; i <= 10; i++) {
            assertNull(log.get(i), "dropped entry " + i);
        }
    }

    /**
     * Beyond upstream: truncation of a log many times larger than a write buffer or page of positions
     * (3,000 entries of 8 KB), keeping a tail of 11 entries that must still be the right ones.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logs")
    void aLargeLogTruncatedNearItsEndKeepsItsTailReadableBeforeAndAfterAReopen(Supplier<Log> logs) throws Exception {
        final int entries = 3_000;
        final int entryBytes = 8 * 1024;
        final int batch = 100; // batches the size the engine sends, not one 24 MB write
        open(logs);
        for (int start = 1; start <= entries; start += batch) {
            LogEntries le = new LogEntries();
            for (int i = start; i < start + batch; i++) {
                le.add(new LogEntry(1, commandOf(i, entryBytes)));
            }
            assertEquals(start + batch - 1, log.append(start, le));
        }
        log.commitIndex(entries);

        log.truncate(2_990);
        assertHoldsIndexedEntries(2_990, entries, entryBytes);

        reopen();
        assertHoldsIndexedEntries(2_990, entries, entryBytes);
    }

    // ---- opening, appending and checking a log ----

    private void open(Supplier<Log> logs) throws Exception {
        factory = logs;
        log = start();
    }

    /** A new instance on the same directory, as after a restart. */
    private void reopen() throws Exception {
        log.close();
        log = null;
        log = start();
    }

    /** Upstream's close, delete, init: what is left on disk must be nothing. */
    private void deleteAndReopen() throws Exception {
        log.close();
        log.delete();
        log = null;
        log = start();
    }

    private Log start() throws Exception {
        Log started = factory.get();
        started.useFsync(true);
        // a directory for logs that take one (FileBasedLog); none that exists yet, as on a first start
        started.init(dir.resolve("log").toString(), null);
        return started;
    }

    /** One entry per term, each with the given command, from startIndex on. */
    private void append(long startIndex, byte[] command, int... terms) {
        LogEntries le = new LogEntries();
        for (int term : terms) {
            le.add(new LogEntry(term, command));
        }
        log.append(startIndex, le);
    }

    /** count entries of the same term, each with a 10-byte command, from startIndex on. */
    private void appendTerms(long startIndex, int count, long term) {
        LogEntries le = new LogEntries();
        for (int i = 0; i < count; i++) {
            le.add(new LogEntry(term, new byte[10]));
        }
        log.append(startIndex, le);
    }

    /**
     * The one deliberate difference: the engine's logs take the current term back to the last kept
     * entry's after a deletion; {@link SegmentedLog} keeps it, since the engine reloads the persisted
     * term on restart and Raft's current term must never go down (a lower one could vote twice in a term).
     */
    private long termAfterDeleting(long lastKeptEntrysTerm, long termBefore) {
        return log instanceof SegmentedLog ? termBefore : lastKeptEntrysTerm;
    }

    private void assertPositions(long first, long last, long commit, long term) {
        assertEquals(first, log.firstAppended(), "first appended");
        assertEquals(last, log.lastAppended(), "last appended");
        assertEquals(commit, log.commitIndex(), "commit index");
        assertEquals(term, log.currentTerm(), "current term");
    }

    private void assertHoldsIndexedEntries(long from, long to, int entryBytes) {
        assertEquals(from, log.firstAppended(), "first appended");
        assertEquals(to, log.lastAppended(), "last appended");
        assertNull(log.get(from - 1), "entry " + (from - 1));
        for (long i = from; i <= to; i++) {
            LogEntry entry = log.get(i);
            assertNotNull(entry, "entry " + i);
            assertArrayEquals(commandOf(i, entryBytes), bytesOf(entry), "bytes of entry " + i);
        }
    }

    /** A command that names its own index, so an entry read at the wrong position shows. */
    private static byte[] commandOf(long index, int size) {
        byte[] command = new byte[size];
        ByteBuffer.wrap(command).putLong(index).putLong(size - Long.BYTES, index);
        Arrays.fill(command, Long.BYTES, size - Long.BYTES, (byte) index);
        return command;
    }

    private static byte[] filled(byte b) {
        byte[] bytes = new byte[10];
        Arrays.fill(bytes, b);
        return bytes;
    }

    private static byte[] bytesOf(LogEntry entry) {
        assertNotNull(entry, "no entry");
        return Arrays.copyOfRange(entry.command(), entry.offset(), entry.offset() + entry.length());
    }

    private static byte[] bytesOf(ByteBuffer buffer) {
        assertNotNull(buffer, "no snapshot");
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
