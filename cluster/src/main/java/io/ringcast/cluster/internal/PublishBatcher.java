package io.ringcast.cluster.internal;

import io.ringcast.log.PublishResult;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Gathers the publishes (and removals) a node receives into batched log entries for one Raft group: many
 * publishes per entry is what makes the engine fast (jgroups-raft carries about 466k records/s at
 * 100 per entry against 15k at one per entry). Publishes come in from any thread through a bounded
 * queue ({@link #offer} returns false when it is full: the caller pauses, as on a full inbound ring);
 * one thread, {@code ringcast-cluster-batcher}, drains up to {@code maxPublishesPerEntry} into an
 * entry and submits it, with at most {@code maxEntriesInFlight} entries unanswered. Each publish's
 * {@link Answer} is told once, by the {@link AnswerPoller} (its own thread,
 * {@code ringcast-cluster-answers}), with its {@link PublishResult} once this node's own log has
 * applied the entry too ({@link #applied}), or with {@code null} and the cause as soon as its entry
 * failed (no leader, no majority, a timeout: whether it was applied is then unknown to this node).
 * An entry is in flight until its publishes are answered, waiting for this node's log included.
 */
public final class PublishBatcher implements AutoCloseable {
    private static final long POLL_MS = 50;

    /** Hands an encoded entry to the engine; the future completes with the state machine's response. */
    @FunctionalInterface
    public interface Submitter {
        /**
         * @param resendable whether the log recognises the entry's publishes if it applies the entry
         *                   twice (each has a publisher id, and it holds no removal), so the engine
         *                   may send it again
         */
        CompletableFuture<byte[]> submit(byte[] entry, boolean resendable);
    }

    /** How one publish ended; told on the {@link AnswerPoller}'s thread, which it may hold (later answers wait). */
    @FunctionalInterface
    public interface Answer {
        /**
         * @param result what the log decided, or null when the entry failed
         * @param failure why the entry failed, or null
         */
        void answered(PublishResult result, Throwable failure);
    }

    record Pending(LoggedRecord record, Answer answer) {
    }

    private final Submitter submitter;
    private final int maxPublishesPerEntry;
    private final ArrayBlockingQueue<Pending> queue;
    private final Semaphore inFlight;
    private final AnswerPoller answers;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param maxPublishesPerEntry the most publishes one entry carries
     * @param maxEntriesInFlight   entries submitted and not answered yet, at most
     * @param queueCapacity        publishes waiting for an entry, at most
     * @param applyWaitMs          how long an entry the log took waits for this node to apply it before
     *                             its publishes are answered as failed (whether applied here is then
     *                             unknown to the client; a {@code REPUBLISH} tells): a node cut off
     *                             from its leader right after the leader answered would else hold
     *                             them, and its entries in flight, until the cut heals
     */
    public PublishBatcher(Submitter submitter, int maxPublishesPerEntry, int maxEntriesInFlight, int queueCapacity,
                          String groupName, long applyWaitMs) {
        this.submitter = submitter;
        this.maxPublishesPerEntry = maxPublishesPerEntry;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        this.inFlight = new Semaphore(maxEntriesInFlight);
        this.answers = new AnswerPoller(inFlight::release, maxEntriesInFlight, groupName, applyWaitMs);
        this.thread = new Thread(this::run, "ringcast-cluster-batcher-" + groupName);
        thread.setDaemon(true);
    }

    public void start() {
        answers.start();
        thread.start();
    }

    /**
     * This node's log applied the entry of {@code ordinal} ({@link TopicLog}'s listener): the entries
     * up to it may be answered now. The engine's apply thread; never blocks.
     */
    public void applied(long ordinal) {
        answers.applied(ordinal);
    }

    /**
     * Queues a publish for the next entry. Any thread.
     *
     * @return false when the queue is full (nothing was queued; offer it again later), or when stopped
     */
    public boolean offer(LoggedPublish publish, Answer answer) {
        return offerRecord(publish, answer);
    }

    /**
     * Queues the removal of the topic at {@code path} for the next entry, in turn with the publishes
     * (a {@link LoggedRemoval}); its {@link PublishResult} is {@code APPLIED} with the removed topic's
     * last sequence, or 0 when nothing was removed. Any thread.
     *
     * @param ifLastSequence remove it only at this last sequence; 0: whatever it is
     * @return false when the queue is full (nothing was queued; offer it again later), or when stopped
     * @throws IllegalArgumentException for an empty path or a negative {@code ifLastSequence}
     */
    public boolean offerRemoval(String path, long ifLastSequence, Answer answer) {
        return offerRecord(new LoggedRemoval(path, ifLastSequence), answer);
    }

    private boolean offerRecord(LoggedRecord record, Answer answer) {
        return running && queue.offer(new Pending(record, answer));
    }

    /** Publishes the queue has room for now. Any thread. */
    public int remaining() {
        return queue.remainingCapacity();
    }

    /** Publishes waiting for an entry. Any thread. */
    public int queued() {
        return queue.size();
    }

    private void run() {
        List<Pending> batch = new ArrayList<>(maxPublishesPerEntry);
        while (running) {
            try {
                inFlight.acquire();
                Pending first = queue.poll(POLL_MS, TimeUnit.MILLISECONDS);
                if (first == null) {
                    inFlight.release();
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, maxPublishesPerEntry - 1);
                submit(List.copyOf(batch));
                batch.clear();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Submits one entry; its permit is given back once its publishes are answered. Batcher thread. */
    private void submit(List<Pending> batch) {
        List<LoggedRecord> records = new ArrayList<>(batch.size());
        boolean resendable = true;
        for (Pending p : batch) {
            records.add(p.record());
            // a removal applied twice is not recognised: it could remove the topic a publish made since
            resendable &= p.record() instanceof LoggedPublish publish && publish.hasPublisher();
        }
        CompletableFuture<byte[]> response;
        try {
            response = submitter.submit(TopicLogCodec.encodeEntry(records), resendable);
        } catch (RuntimeException e) {
            response = CompletableFuture.failedFuture(e); // the engine may throw instead of failing the future
        }
        response.whenComplete((bytes, failure) -> answers.settled(batch, bytes, failure));
    }

    /**
     * Stops taking publishes; those still queued are answered as failed. Entries in flight are
     * answered when their futures complete, on that thread: with their results if this node
     * applied them already, else as failed ({@link AnswerPoller#close}). Idempotent.
     */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Pending> left = new ArrayList<>();
        queue.drainTo(left);
        IllegalStateException stopped = new IllegalStateException("the cluster layer stopped");
        for (Pending p : left) {
            p.answer().answered(null, stopped);
        }
        answers.close();
    }
}
