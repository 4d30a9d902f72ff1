package io.ringcast.cluster.internal;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.log.PublishResult;
import io.ringcast.log.PublisherLedgers;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The batcher in front of a Raft group, with the real state machine answering each entry (the
 * engine's replication left out): publishes are gathered into entries, bounded in and in flight,
 * and every publish is answered once, with what the log decided (once this node's own log has
 * applied the entry too) or why its entry failed.
 */
@Timeout(30)
class PublishBatcherTest {
    /** Longer than any test: an entry waits for this node's log until the test applies it. */
    private static final long NO_APPLY_DEADLINE_MS = 600_000;

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofMillis(5);

    /** An answer as received. */
    record Answered(int correlationId, PublishResult result, Throwable failure) {
    }

    private static LoggedPublish publish(int correlationId, String path) {
        return new LoggedPublish("alice", 7, correlationId, false, path,
                ("v" + correlationId).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Submits to a real state machine, which is also this node's own (it tells the batcher each
     * entry it applied), answering at once or when released.
     */
    private static final class LogSubmitter implements PublishBatcher.Submitter {
        final TopicLogTesting.RecordingSink sink = new TopicLogTesting.RecordingSink();
        volatile PublishBatcher batcher;
        final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 1000, new PublisherLedgers(1000, 1000), ordinal -> batcher.applied(ordinal));
        final List<Integer> entrySizes = new CopyOnWriteArrayList<>();
        /** Per entry submitted, whether it was submitted as one the engine may send again. */
        final List<Boolean> resendable = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<byte[]>> held = new CopyOnWriteArrayList<>();
        final List<byte[]> responses = new CopyOnWriteArrayList<>();
        volatile boolean hold;

        @Override
        public synchronized CompletableFuture<byte[]> submit(byte[] entry, boolean resendable) {
            try {
                entrySizes.add(TopicLogCodec.decodeEntry(entry, 0, entry.length).size());
            } catch (MalformedEntryException e) {
                throw new AssertionError(e);
            }
            this.resendable.add(resendable);
            byte[] response = log.apply(entry, 0, entry.length, true);
            if (!hold) {
                return CompletableFuture.completedFuture(response);
            }
            CompletableFuture<byte[]> later = new CompletableFuture<>(); // completed by release()
            responses.add(response); // before the future: release() pairs each held future with its response
            held.add(later);
            return later;
        }

        void release() {
            for (int i = 0; i < held.size(); i++) {
                held.get(i).complete(responses.get(i));
            }
        }

        PublishBatcher batcher(int maxPublishesPerEntry, int maxEntriesInFlight, int queueCapacity) {
            batcher = new PublishBatcher(this, maxPublishesPerEntry, maxEntriesInFlight, queueCapacity, "test",
                    NO_APPLY_DEADLINE_MS);
            return batcher;
        }
    }

    /**
     * A follower: the leader's log answers each entry as it is submitted, but the response is held
     * until the test sends it, and this node's own log applies the entries only when the test says
     * so (the test thread plays the engine's apply thread).
     */
    private static final class LaggingNode implements PublishBatcher.Submitter {
        final TopicLog leader = new TopicLog(new TopicLogTesting.RecordingSink(), SnapshotContent.NONE, 1000, 1000);
        /** This node's own updates; read on the answer thread after the log told it (a volatile hand-over). */
        final TopicLogTesting.RecordingSink localSink = new TopicLogTesting.RecordingSink();
        volatile PublishBatcher batcher;
        final TopicLog local = new TopicLog(localSink, SnapshotContent.NONE, 1000, new PublisherLedgers(1000, 1000), o -> batcher.applied(o));
        final List<byte[]> entries = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<byte[]>> held = new CopyOnWriteArrayList<>();
        final List<byte[]> responses = new CopyOnWriteArrayList<>();

        @Override
        public synchronized CompletableFuture<byte[]> submit(byte[] entry, boolean resendable) {
            responses.add(leader.apply(entry, 0, entry.length, true));
            CompletableFuture<byte[]> later = new CompletableFuture<>();
            held.add(later);
            entries.add(entry); // last: the test awaits the entries, then uses the response and the future
            return later;
        }

        PublishBatcher batcher(int maxEntriesInFlight) {
            return batcher(maxEntriesInFlight, NO_APPLY_DEADLINE_MS);
        }

        PublishBatcher batcher(int maxEntriesInFlight, long applyWaitMs) {
            batcher = new PublishBatcher(this, 1, maxEntriesInFlight, 100, "test", applyWaitMs);
            return batcher;
        }

        /** The leader's response to entry i reaches this node. */
        void respond(int i) {
            held.get(i).complete(responses.get(i));
        }

        /** This node's log applies entry i (and must have applied those before it). */
        void applyLocally(int i) {
            assertThat(local.appliedEntries()).as("entries applied here before entry %d", i).isEqualTo(i);
            byte[] entry = entries.get(i);
            local.apply(entry, 0, entry.length, false);
        }
    }

    /** An answer, with what this node's own log held when it was told. */
    record AnsweredAfter(int correlationId, PublishResult result, Throwable failure, int localUpdates,
                         int entriesSubmitted) {
    }

    private static PublishBatcher.Answer recordInto(List<AnsweredAfter> answers, int correlationId, LaggingNode node) {
        return (r, f) -> answers.add(new AnsweredAfter(correlationId, r, f, node.localSink.applied.size(),
                node.entries.size()));
    }

    @Test
    void publishesAreGatheredIntoEntriesAndEachIsAnsweredWithItsSequenceInOrder() {
        LogSubmitter engine = new LogSubmitter();
        engine.hold = true; // the first entry waits, so the rest pile up behind it
        List<Answered> answers = new CopyOnWriteArrayList<>();
        try (PublishBatcher batcher = engine.batcher(100, 1, 10_000)) {
            batcher.start();
            for (int i = 1; i <= 1000; i++) {
                int id = i;
                assertThat(batcher.offer(publish(id, "t"), (r, f) -> answers.add(new Answered(id, r, f)))).isTrue();
            }
            Await.until(() -> engine.entrySizes.size() == 1, WAIT, POLL, () -> "the first entry");
            engine.hold = false;
            engine.release();
            Await.until(() -> answers.size() == 1000, WAIT, POLL, () -> answers.size() + " answered");
        }
        assertThat(engine.entrySizes).allMatch(n -> n <= 100);
        assertThat(engine.entrySizes.size()).as("1,000 publishes in entries of up to 100").isBetween(10, 20);
        assertThat(answers).extracting(Answered::failure).containsOnlyNulls();
        List<Long> sequences = new ArrayList<>();
        for (Answered a : answers.stream().sorted((x, y) -> Integer.compare(x.correlationId(), y.correlationId()))
                .toList()) {
            assertThat(a.result().outcome()).isEqualTo(PublishResult.Outcome.APPLIED);
            sequences.add(a.result().sequence());
        }
        assertThat(sequences).as("each publish its own sequence, in the order offered")
                .isEqualTo(java.util.stream.LongStream.rangeClosed(1, 1000).boxed().toList());
        assertThat(engine.sink.applied).hasSize(1000);
    }

    @Test
    void noMoreEntriesThanTheBoundAreInFlightAndAFullQueueRefusesTheOffer() {
        LogSubmitter engine = new LogSubmitter();
        engine.hold = true;
        AtomicInteger answered = new AtomicInteger();
        try (PublishBatcher batcher = engine.batcher(2, 3, 10)) {
            batcher.start();
            int offered = 0;
            while (batcher.offer(publish(offered + 1, "t"), (r, f) -> answered.incrementAndGet())) {
                offered++;
                if (offered > 100) {
                    break;
                }
            }
            Await.until(() -> engine.entrySizes.size() == 3, WAIT, POLL, () -> engine.entrySizes.size() + " entries");
            // the batcher takes publishes only with an entry's permit: at most 3 entries of 2, then the queue of 10
            assertThat(offered).as("3 entries of 2 in flight and the queue of 10").isBetween(10, 3 * 2 + 10);
            assertThat(engine.entrySizes).hasSize(3);
            engine.hold = false;
            engine.release();
            int total = offered;
            Await.until(() -> answered.get() == total, WAIT, POLL, () -> answered.get() + " of " + total);
        }
    }

    @Test
    void aFailedEntryAnswersEachOfItsPublishesWithTheCause() {
        IllegalStateException noLeader = new IllegalStateException("no leader");
        PublishBatcher.Submitter failing = (entry, resendable) -> CompletableFuture.failedFuture(noLeader);
        PublishBatcher.Submitter throwing = (entry, resendable) -> {
            throw noLeader; // the engine may throw instead of failing the future
        };
        for (PublishBatcher.Submitter engine : List.of(failing, throwing)) {
            List<Answered> answers = new CopyOnWriteArrayList<>();
            try (PublishBatcher batcher = new PublishBatcher(engine, 10, 1, 100, "test", NO_APPLY_DEADLINE_MS)) {
                batcher.start();
                for (int i = 1; i <= 25; i++) {
                    int id = i;
                    batcher.offer(publish(id, "t"), (r, f) -> answers.add(new Answered(id, r, f)));
                }
                Await.until(() -> answers.size() == 25, WAIT, POLL, () -> answers.size() + " answered");
            }
            assertThat(answers).extracting(Answered::result).containsOnlyNulls();
            assertThat(answers).extracting(Answered::failure).containsOnly(noLeader);
        }
    }

    @Test
    void aDuplicateInTheSameOrALaterEntryIsAnsweredWithTheFirstSequence() {
        LogSubmitter engine = new LogSubmitter();
        List<Answered> answers = new CopyOnWriteArrayList<>();
        try (PublishBatcher batcher = engine.batcher(10, 1, 100)) {
            batcher.start();
            batcher.offer(publish(1, "a"), (r, f) -> answers.add(new Answered(1, r, f)));
            batcher.offer(new LoggedPublish("alice", 7, 1, true, "a", new byte[] {1}),
                    (r, f) -> answers.add(new Answered(-1, r, f)));
            Await.until(() -> answers.size() == 2, WAIT, POLL, () -> answers.size() + " answered");
        }
        assertThat(answers.get(0).result()).isEqualTo(PublishResult.applied(1));
        assertThat(answers.get(1).result()).isEqualTo(PublishResult.alreadyApplied(1));
        assertThat(engine.sink.applied).hasSize(1);
    }

    @Test
    void aRemovalGoesInTurnWithThePublishesInAnEntryTheEngineMustNotSendAgain() {
        LogSubmitter engine = new LogSubmitter();
        engine.hold = true;
        List<Answered> answers = new CopyOnWriteArrayList<>();
        try (PublishBatcher batcher = engine.batcher(10, 1, 100)) {
            batcher.start();
            batcher.offer(publish(1, "a"), (r, f) -> answers.add(new Answered(1, r, f)));
            Await.until(() -> engine.entrySizes.size() == 1, WAIT, POLL, () -> "the first entry");
            batcher.offer(publish(2, "a"), (r, f) -> answers.add(new Answered(2, r, f)));
            assertThat(batcher.offerRemoval("a", 0, (r, f) -> answers.add(new Answered(-1, r, f)))).isTrue();
            batcher.offer(publish(3, "a"), (r, f) -> answers.add(new Answered(3, r, f)));
            assertThat(batcher.offerRemoval("a", 2, (r, f) -> answers.add(new Answered(-2, r, f)))).isTrue();
            engine.hold = false;
            engine.release();
            Await.until(() -> answers.size() == 5, WAIT, POLL, () -> answers.size() + " answered");
        }
        assertThat(engine.entrySizes).containsExactly(1, 4);
        assertThat(engine.resendable).as("publishes with publisher ids; then the same with a removal")
                .containsExactly(true, false);
        assertThat(answers).containsExactly(new Answered(1, PublishResult.applied(1), null),
                new Answered(2, PublishResult.applied(2), null),
                new Answered(-1, PublishResult.applied(2), null), // removed a at its sequence 2
                new Answered(3, PublishResult.applied(1), null),  // a made anew
                new Answered(-2, PublishResult.applied(0), null)); // a is at 1, not 2: nothing removed
        assertThat(engine.sink.removed).containsExactly(new TopicLogTesting.Removed("a", 2));
    }

    @Test
    void closingAnswersWhatIsStillQueuedAndRefusesMore() {
        LogSubmitter engine = new LogSubmitter();
        engine.hold = true;
        List<Answered> answers = new CopyOnWriteArrayList<>();
        PublishBatcher batcher = engine.batcher(1, 1, 100);
        batcher.start();
        for (int i = 1; i <= 5; i++) {
            int id = i;
            batcher.offer(publish(id, "t"), (r, f) -> answers.add(new Answered(id, r, f)));
        }
        Await.until(() -> engine.entrySizes.size() == 1, WAIT, POLL, () -> "the first entry");
        batcher.close();
        assertThat(batcher.offer(publish(99, "t"), (r, f) -> { })).isFalse();
        assertThat(answers).as("the queued ones, failed; the one in flight waits for its entry").hasSize(4)
                .allMatch(a -> a.failure() != null);
        engine.release();
        Await.until(() -> answers.size() == 5, WAIT, POLL, () -> answers.size() + " answered");
        assertThat(answers.get(4).result()).as("applied here already: answered with its result")
                .isEqualTo(PublishResult.applied(1));
        batcher.close(); // twice is fine
    }

    @Test
    void anEntryAnsweredBeforeThisNodeAppliedItIsAnsweredOnlyAfterTheApplyAndInLogOrder() {
        LaggingNode node = new LaggingNode();
        List<AnsweredAfter> answers = new CopyOnWriteArrayList<>();
        try (PublishBatcher batcher = node.batcher(3)) {
            batcher.start();
            for (int id = 1; id <= 5; id++) {
                assertThat(batcher.offer(publish(id, "t"), recordInto(answers, id, node))).isTrue();
            }
            Await.until(() -> node.entries.size() == 3, WAIT, POLL, () -> node.entries.size() + " entries");
            node.respond(2); // the responses come, out of order, before this node applied any of them
            node.respond(1);
            node.respond(0);
            node.applyLocally(0);
            Await.until(() -> !answers.isEmpty(), WAIT, POLL, () -> "the first answer");
            // answered once applied here; and the entries answered by the leader but not applied here hold
            // their permits: no fourth entry was submitted before one of the first three was answered
            assertThat(answers.get(0)).isEqualTo(new AnsweredAfter(1, PublishResult.applied(1), null, 1, 3));
            node.applyLocally(1);
            node.applyLocally(2);
            Await.until(() -> node.entries.size() == 5, WAIT, POLL, () -> node.entries.size() + " entries");
            node.respond(3);
            node.respond(4);
            node.applyLocally(3);
            node.applyLocally(4);
            Await.until(() -> answers.size() == 5, WAIT, POLL, () -> answers.size() + " answered");
        }
        assertThat(answers).extracting(AnsweredAfter::correlationId).as("in log order").containsExactly(1, 2, 3, 4, 5);
        for (AnsweredAfter a : answers) {
            assertThat(a.result()).isEqualTo(PublishResult.applied(a.correlationId()));
            assertThat(a.localUpdates()).as("updates applied here when publish %d was answered", a.correlationId())
                    .isGreaterThanOrEqualTo(a.correlationId());
        }
    }

    @Test
    void aFailedEntryIsAnsweredAtOnceWhileAnEarlierOneWaitsForThisNodesLog() {
        LaggingNode node = new LaggingNode();
        List<AnsweredAfter> answers = new CopyOnWriteArrayList<>();
        IllegalStateException timeout = new IllegalStateException("timed out");
        try (PublishBatcher batcher = node.batcher(2)) {
            batcher.start();
            batcher.offer(publish(1, "t"), recordInto(answers, 1, node));
            batcher.offer(publish(2, "t"), recordInto(answers, 2, node));
            Await.until(() -> node.entries.size() == 2, WAIT, POLL, () -> node.entries.size() + " entries");
            node.respond(0); // waits for this node's log
            node.held.get(1).completeExceptionally(timeout);
            Await.until(() -> !answers.isEmpty(), WAIT, POLL, () -> "the failed entry's answer");
            assertThat(answers.get(0)).isEqualTo(new AnsweredAfter(2, null, timeout, 0, 2));
            node.applyLocally(0);
            Await.until(() -> answers.size() == 2, WAIT, POLL, () -> answers.size() + " answered");
            assertThat(answers.get(1)).isEqualTo(new AnsweredAfter(1, PublishResult.applied(1), null, 1, 2));
        }
    }

    @Test
    void closingAnswersAnEntryStillWaitingForThisNodesLogAsFailed() {
        LaggingNode node = new LaggingNode();
        List<AnsweredAfter> answers = new CopyOnWriteArrayList<>();
        PublishBatcher batcher = node.batcher(1);
        batcher.start();
        batcher.offer(publish(1, "t"), recordInto(answers, 1, node));
        Await.until(() -> node.entries.size() == 1, WAIT, POLL, () -> "the entry");
        node.respond(0);
        batcher.close();
        assertThat(answers).hasSize(1);
        assertThat(answers.get(0).result()).isNull();
        assertThat(answers.get(0).failure()).hasMessageContaining("stopped before this node applied the entry");
    }

    @Test
    void anEntryThisNodeDoesNotApplyWithinTheWaitIsAnsweredAsFailedAndGivesBackItsPermit() {
        LaggingNode node = new LaggingNode();
        List<AnsweredAfter> answers = new CopyOnWriteArrayList<>();
        try (PublishBatcher batcher = node.batcher(1, 200)) {
            batcher.start();
            batcher.offer(publish(1, "t"), recordInto(answers, 1, node));
            batcher.offer(publish(2, "t"), recordInto(answers, 2, node));
            Await.until(() -> node.entries.size() == 1, WAIT, POLL, () -> "the first entry");
            node.respond(0); // the leader answered; this node (cut off, say) never applies it
            Await.until(() -> !answers.isEmpty(), WAIT, POLL, () -> "the first answer");
            assertThat(answers.get(0).result()).isNull();
            assertThat(answers.get(0).failure()).isInstanceOf(java.util.concurrent.TimeoutException.class)
                    .hasMessageContaining("not applied by this node within 200 ms");
            // its permit is back: the second publish goes out in an entry of its own
            Await.until(() -> node.entries.size() == 2, WAIT, POLL, () -> node.entries.size() + " entries");
        }
    }
}
