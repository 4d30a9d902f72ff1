package io.ringcast.cluster.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Answers the publishes of the entries a node submitted ({@link PublishBatcher}), on a thread of its
 * own, {@code ringcast-cluster-answers-<group>}: an entry the log took only once this node's own log
 * ({@link TopicLog}) has applied it. The entry's updates are then in the node's
 * {@link io.ringcast.cluster.UpdateSink} before any of its publishes is answered, so a node that puts
 * both into one pipeline (the server: its inbound ring) delivers an update before the ack of the
 * publish that made it, as on a single node. The log's response can come before this node has
 * applied the entry (a follower learns of a commit after the leader has answered it) or after (the
 * leader answers once it applied it); the entry's ordinal in the response
 * ({@link EntryResponse#ordinal}), the same on every node, tells which: the entry waits here until
 * {@link #applied} reaches its ordinal, and entries that wait are answered in log order. A failed
 * entry (no leader, a timeout, a refusal) is answered as soon as it is told: it waits for nothing.
 * An entry that waits longer than {@code applyWaitMs} (this node cut off from its leader right after
 * the leader answered, say) is answered as failed: its publishes were committed, but the client
 * cannot be told so in order with their updates here, and a {@code REPUBLISH} through any node gets
 * the sequence they got.
 *
 * <p>Bounded: an entry holds its batcher's permit ({@code entryAnswered} gives it back) until its
 * publishes are answered, so at most the batcher's entries in flight are here, waiting or not.
 *
 * <p>Thread contract: {@link #settled} from any thread, never blocking (the permits leave room);
 * {@link #applied} on the engine's apply thread, never blocking (a volatile write, and an unpark
 * when this poller waits for that entry); the answers on this poller's thread, which they may hold
 * (the server waits there for room in its inbound ring): later answers wait meanwhile. After
 * {@link #close}, an entry is answered on the thread that settles it: with its results if this node
 * applied it already, else as failed.
 */
final class AnswerPoller implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AnswerPoller.class);
    /** {@link #waitingFor} when no entry waits for this node's log. */
    private static final long NOTHING = Long.MAX_VALUE;

    /** An entry's outcome as the engine told it: the log's response, or why the entry failed. */
    private record Settled(List<PublishBatcher.Pending> batch, byte[] response, Throwable failure) {
    }

    /** An entry the log took, waiting until this node has applied it, or until {@code deadlineNanos}. */
    private record Waiting(List<PublishBatcher.Pending> batch, EntryResponse response, long deadlineNanos) {
        long ordinal() {
            return response.ordinal();
        }
    }

    private final Runnable entryAnswered;
    private final ArrayBlockingQueue<Settled> settled;
    /** Poller thread only (and the closer once it has stopped). */
    private final PriorityQueue<Waiting> waiting = new PriorityQueue<>(Comparator.comparingLong(Waiting::ordinal));
    private final Thread thread;
    private final long applyWaitNanos;
    /** The ordinal of the last entry this node's log applied ({@link TopicLog#appliedEntries}). Apply thread. */
    private volatile long applied;
    /** The lowest ordinal an entry here waits for, or {@link #NOTHING}: the apply thread wakes the poller there. */
    private volatile long waitingFor = NOTHING;
    private volatile boolean running = true;

    /**
     * @param entryAnswered run once per entry, after its publishes were answered (the batcher's permit)
     * @param maxEntries    entries settled and not answered at most: the batcher's entries in flight
     * @param applyWaitMs   how long an entry the log took waits for this node's log at most
     */
    AnswerPoller(Runnable entryAnswered, int maxEntries, String groupName, long applyWaitMs) {
        this.entryAnswered = entryAnswered;
        this.applyWaitNanos = TimeUnit.MILLISECONDS.toNanos(applyWaitMs);
        this.settled = new ArrayBlockingQueue<>(maxEntries);
        this.thread = new Thread(this::run, "ringcast-cluster-answers-" + groupName);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** An entry's outcome: {@code response} (the log's), or the {@code failure} of the entry. Any thread. */
    void settled(List<PublishBatcher.Pending> batch, byte[] response, Throwable failure) {
        if (!settled.offer(new Settled(batch, response, failure))) { // each entry holds a permit: never
            answer(batch, null, new IllegalStateException("more entries answered than were in flight"));
            return;
        }
        if (running) {
            LockSupport.unpark(thread);
        } else {
            answerSettledAfterClose(); // close() may have drained already: answer it here
        }
    }

    /**
     * This node's log applied the entry of {@code ordinal} (its updates are in the sink), or read a
     * snapshot that ends there. Apply thread; never blocks.
     */
    void applied(long ordinal) {
        applied = ordinal;
        if (ordinal >= waitingFor) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        while (running) {
            for (Settled s; (s = settled.poll()) != null; ) {
                take(s);
            }
            for (Waiting w; (w = waiting.peek()) != null && w.ordinal() <= applied; ) {
                waiting.poll();
                answer(w.batch(), w.response(), null);
            }
            long nextDeadline = answerOverdue(System.nanoTime());
            Waiting first = waiting.peek();
            waitingFor = first == null ? NOTHING : first.ordinal();
            // with applied(): we store waitingFor then load applied, the apply thread stores applied then
            // loads waitingFor (all volatile), so one of us sees the other's store: either we see the
            // entry applied, or the apply thread unparks us (an unpark before the park is kept)
            if (running && settled.isEmpty() && applied < waitingFor) {
                if (nextDeadline == NOTHING) {
                    LockSupport.park(this);
                } else {
                    LockSupport.parkNanos(this, nextDeadline - System.nanoTime());
                }
            }
        }
    }

    /**
     * Answers as failed the entries that waited past their deadline (at most the entries in flight
     * wait, so a scan is cheap); returns the earliest deadline left, or {@link #NOTHING}.
     */
    private long answerOverdue(long now) {
        long next = NOTHING;
        for (var it = waiting.iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            if (now - w.deadlineNanos() >= 0) {
                it.remove();
                answer(w.batch(), null, new TimeoutException("committed, but not applied by this node within "
                        + TimeUnit.NANOSECONDS.toMillis(applyWaitNanos) + " ms (cut off from the leader?)"));
            } else if (next == NOTHING || w.deadlineNanos() - next < 0) {
                next = w.deadlineNanos();
            }
        }
        return next;
    }

    /** A failed entry is answered now; one the log took waits for this node's log. Poller thread. */
    private void take(Settled s) {
        EntryResponse response = decode(s);
        if (response == null) {
            return;
        }
        waiting.add(new Waiting(s.batch(), response, System.nanoTime() + applyWaitNanos));
    }

    /** The entry's response; or null when the entry failed, and then it was answered. */
    private EntryResponse decode(Settled s) {
        Throwable cause = s.failure();
        EntryResponse response = null;
        if (cause == null) {
            try {
                response = TopicLogCodec.decodeResponse(s.response());
                if (response.isRefused()) {
                    cause = new IllegalStateException("entry refused by the log: " + response.refusal());
                } else if (response.results().size() != s.batch().size()) {
                    cause = new IllegalStateException("the log answered " + response.results().size()
                            + " publishes of an entry of " + s.batch().size());
                }
            } catch (MalformedEntryException e) {
                cause = e;
            }
        }
        if (cause != null) {
            answer(s.batch(), null, cause);
            return null;
        }
        return response;
    }

    /** Tells each publish of the entry its result, or the entry's failure; then gives back its permit. */
    private void answer(List<PublishBatcher.Pending> batch, EntryResponse response, Throwable failure) {
        try {
            for (int i = 0; i < batch.size(); i++) {
                PublishBatcher.Answer a = batch.get(i).answer();
                try {
                    if (failure == null) {
                        a.answered(response.results().get(i), null);
                    } else {
                        a.answered(null, failure);
                    }
                } catch (RuntimeException e) {
                    log.error("a publish's answer failed", e);
                }
            }
        } finally {
            entryAnswered.run();
        }
    }

    /** After close: answers what was settled, with its results where this node applied the entry. */
    private void answerSettledAfterClose() {
        for (Settled s; (s = settled.poll()) != null; ) {
            EntryResponse response = decode(s);
            if (response != null) {
                answerAfterClose(s.batch(), response);
            }
        }
    }

    private void answerAfterClose(List<PublishBatcher.Pending> batch, EntryResponse response) {
        if (response.ordinal() <= applied) {
            answer(batch, response, null);
        } else {
            answer(batch, null, new IllegalStateException("the cluster layer stopped before this node applied "
                    + "the entry (it was committed)"));
        }
    }

    /**
     * Stops the poller; entries waiting for this node's log, and those settled from now on, are
     * answered on the closing or settling thread (see the class comment). Idempotent.
     */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("{} did not stop within 5 s (held by an answer): its entries are left to it", thread.getName());
            return;
        }
        answerSettledAfterClose();
        for (Waiting w; (w = waiting.poll()) != null; ) {
            answerAfterClose(w.batch(), w.response());
        }
    }
}
