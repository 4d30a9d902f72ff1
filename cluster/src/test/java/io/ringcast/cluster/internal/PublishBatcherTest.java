package io.ringcast.cluster.internal;

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
 * The batcher in front of a Raft group, with the real state machine answering each entry at once
 * (the engine's replication left out): publishes are gathered into entries, bounded in and in
 * flight, and every publish is answered once, with what the log decided or why its entry failed.
 */
@Timeout(30)
class PublishBatcherTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofMillis(5);

    /** An answer as received. */
    record Answered(int correlationId, PublishResult result, Throwable failure) {
    }

    private static LoggedPublish publish(int correlationId, String path) {
        return new LoggedPublish("alice", 7, correlationId, false, path,
                ("v" + correlationId).getBytes(StandardCharsets.UTF_8));
    }

    /** Submits to a real state machine, answering at once or when released. */
    private static final class LogSubmitter implements PublishBatcher.Submitter {
        final TopicLogTesting.RecordingSink sink = new TopicLogTesting.RecordingSink();
        final TopicLog log = new TopicLog(sink, SnapshotContent.NONE, 1000, 1000);
        final List<Integer> entrySizes = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<byte[]>> held = new CopyOnWriteArrayList<>();
        final List<byte[]> responses = new CopyOnWriteArrayList<>();
        volatile boolean hold;

        @Override
        public synchronized CompletableFuture<byte[]> submit(byte[] entry) {
            try {
                entrySizes.add(TopicLogCodec.decodeEntry(entry, 0, entry.length).size());
            } catch (MalformedEntryException e) {
                throw new AssertionError(e);
            }
            byte[] response = log.apply(entry, 0, entry.length, true);
            if (!hold) {
                return CompletableFuture.completedFuture(response);
            }
            CompletableFuture<byte[]> later = new CompletableFuture<>(); // completed by release()
            held.add(later);
            responses.add(response);
            return later;
        }

        void release() {
            for (int i = 0; i < held.size(); i++) {
                held.get(i).complete(responses.get(i));
            }
        }
    }

    @Test
    void publishesAreGatheredIntoEntriesAndEachIsAnsweredWithItsSequenceInOrder() {
        LogSubmitter engine = new LogSubmitter();
        engine.hold = true; // the first entry waits, so the rest pile up behind it
        List<Answered> answers = new CopyOnWriteArrayList<>();
        try (PublishBatcher batcher = new PublishBatcher(engine, 100, 1, 10_000, "test")) {
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
        try (PublishBatcher batcher = new PublishBatcher(engine, 2, 3, 10, "test")) {
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
        PublishBatcher.Submitter failing = entry -> CompletableFuture.failedFuture(noLeader);
        PublishBatcher.Submitter throwing = entry -> {
            throw noLeader; // the engine may throw instead of failing the future
        };
        for (PublishBatcher.Submitter engine : List.of(failing, throwing)) {
            List<Answered> answers = new CopyOnWriteArrayList<>();
            try (PublishBatcher batcher = new PublishBatcher(engine, 10, 1, 100, "test")) {
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
        try (PublishBatcher batcher = new PublishBatcher(engine, 10, 1, 100, "test")) {
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
    void closingAnswersWhatIsStillQueuedAndRefusesMore() {
        LogSubmitter engine = new LogSubmitter();
        engine.hold = true;
        List<Answered> answers = new CopyOnWriteArrayList<>();
        PublishBatcher batcher = new PublishBatcher(engine, 1, 1, 100, "test");
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
        assertThat(answers.get(4).result()).isEqualTo(PublishResult.applied(1));
        batcher.close(); // twice is fine
    }
}
