package io.ringcast.benchmark.load;

import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.impl.Headers;
import io.nats.client.support.NatsJetStreamConstants;
import java.io.IOException;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

/**
 * A JetStream publisher's sending side ({@code --target jetstream}): each value is published
 * asynchronously with the official Java client ({@code publishAsync}) to its topic's subject, and
 * answered by JetStream's ack, which the stream sends once a majority of its replicas stored it.
 * The paced publisher bounds how many are in flight ({@link PacedPublisher#MAX_IN_FLIGHT}).
 *
 * <p>What the client does not do, this class does, as a JetStream application that must not lose a
 * value does: a try with no ack within {@link #ATTEMPT_TIMEOUT_MS} (the stream's leader died with it
 * in flight: stored or not, no one says) is sent again at once, and one refused because no server
 * took it ({@code 503} no responders: the stream has no leader for now, or the connection was being
 * re-made) after {@link #REFUSED_RETRY_DELAY_MS}; every try carries the same {@code Nats-Msg-Id}
 * ({@link JetStreamStream#messageId}), so the stream stores it once whichever tries reached it. After
 * {@link #RETRY_BUDGET_MS} from the first try it gives up, and the publish fails with its last try's
 * {@link Outcome} as the reason (the paced publisher counts it by that, and the value is unacked).
 * Tries of one publish may overtake another's: a value whose first try timed out can be stored
 * after the next value of its topic, which the subscribers' checks then see as out of order.
 *
 * <p>Threads: {@link #publish} from the publisher's thread; retries from the shared scheduler;
 * answers complete on the client's threads, the JDK's timeout thread or the scheduler;
 * {@link #close} from any thread.
 */
final class JetStreamPublication implements Publication {
    /** A try whose ack has not come within this is sent again (the client's own timeout is 5 to 10 s). */
    static final long ATTEMPT_TIMEOUT_MS = 2_000;
    /**
     * A try refused at once (no responders) is sent again after this: the Go client's own wait between
     * such retries ({@code DefaultPubRetryWait}). Every publish in flight is retried on its own, so a
     * shorter wait multiplies the tries while the stream has no leader.
     */
    static final long REFUSED_RETRY_DELAY_MS = 250;
    /**
     * No try starts later than this after the first: the Ringcast client's retries take at most
     * about as long ({@code replicationTimeoutMs}, 5 s, through each of five nodes).
     */
    static final long RETRY_BUDGET_MS = 30_000;

    /** How one try ended; the reason a publish failed is its last try's. */
    enum Outcome {
        /** Acked. */
        ACKED(false, 0),
        /** No ack within {@link #ATTEMPT_TIMEOUT_MS}, or the client gave up waiting: sent again at once. */
        TIMEOUT(true, 0),
        /** No server took it ({@code 503}): sent again after {@link #REFUSED_RETRY_DELAY_MS}. */
        NO_RESPONDERS(true, REFUSED_RETRY_DELAY_MS),
        /** JetStream answered that it is not available now ({@code 503} API error). */
        UNAVAILABLE(true, REFUSED_RETRY_DELAY_MS),
        /** The client would not send it (its outgoing queue full, its connection being re-made). */
        CLIENT_REFUSED(true, REFUSED_RETRY_DELAY_MS),
        /** JetStream refused it for good (another API error): not sent again. */
        REFUSED(false, 0),
        /** The run closed the client before the ack came. */
        CLOSED(false, 0),
        /** Anything else the client failed it with. */
        FAILED(false, 0);

        final boolean retried;
        final long retryDelayMs;

        Outcome(boolean retried, long retryDelayMs) {
            this.retried = retried;
            this.retryDelayMs = retryDelayMs;
        }
    }

    /** Sends one try: {@link JetStream#publishAsync}, or a test's stand-in. */
    @FunctionalInterface
    interface Sender {
        CompletableFuture<?> send(String subject, Headers headers, byte[] value);
    }

    private final Sender sender;
    private final String[] subjects;
    private final int runId;
    private final ScheduledExecutorService retries;
    private final long attemptTimeoutMs;
    private final long retryBudgetNs;
    /** Tries sent again, by the outcome of the try before. */
    private final Map<Outcome, LongAdder> retriedTries = new EnumMap<>(Outcome.class);
    private volatile boolean closed;

    /**
     * @param js       the publisher's own connection's JetStream context
     * @param subjects every topic's subject, by topic index
     * @param retries  runs the tries after the first (shared by the run's publishers)
     */
    JetStreamPublication(JetStream js, String[] subjects, int runId, ScheduledExecutorService retries) {
        this(js::publishAsync, subjects, runId, retries, ATTEMPT_TIMEOUT_MS, RETRY_BUDGET_MS);
    }

    /** With another sender and other times: the tests'. */
    JetStreamPublication(Sender sender, String[] subjects, int runId, ScheduledExecutorService retries,
                         long attemptTimeoutMs, long retryBudgetMs) {
        this.sender = sender;
        this.subjects = subjects;
        this.runId = runId;
        this.retries = retries;
        this.attemptTimeoutMs = attemptTimeoutMs;
        this.retryBudgetNs = TimeUnit.MILLISECONDS.toNanos(retryBudgetMs);
        for (Outcome o : Outcome.values()) {
            retriedTries.put(o, new LongAdder()); // all of them now: the map is only read after
        }
    }

    @Override
    public CompletableFuture<Void> publish(int topic, long counter, byte[] value) {
        Headers headers = new Headers().put(NatsJetStreamConstants.MSG_ID_HDR,
                JetStreamStream.messageId(runId, topic, counter));
        CompletableFuture<Void> answer = new CompletableFuture<>();
        attempt(subjects[topic], headers, value, answer, System.nanoTime() + retryBudgetNs);
        return answer;
    }

    private void attempt(String subject, Headers headers, byte[] value, CompletableFuture<Void> answer,
                         long lastStartNs) {
        CompletableFuture<?> ack;
        try {
            ack = closed ? CompletableFuture.failedFuture(new IllegalStateException("closed"))
                    : sender.send(subject, headers, value);
        } catch (RuntimeException e) {
            ack = CompletableFuture.failedFuture(e); // the client refused at once: its queue full, its connection closed
        }
        ack.orTimeout(attemptTimeoutMs, TimeUnit.MILLISECONDS).whenComplete((ok, failure) -> {
            Outcome outcome = closed && failure != null ? Outcome.CLOSED : outcome(failure);
            if (outcome == Outcome.ACKED) {
                answer.complete(null);
            } else if (outcome.retried && System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(outcome.retryDelayMs)
                    <= lastStartNs) {
                retriedTries.get(outcome).increment();
                try {
                    retries.schedule(() -> attempt(subject, headers, value, answer, lastStartNs), outcome.retryDelayMs,
                            TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    answer.completeExceptionally(new IOException(Outcome.CLOSED.name())); // the run is over
                }
            } else {
                answer.completeExceptionally(new IOException(reason(outcome, failure)));
            }
        });
    }

    /**
     * The message a publish fails with, the reason it is counted by: the outcome's name, so that a
     * thousand timeouts are one reason, with the client's message for the rare final refusals.
     */
    static String reason(Outcome outcome, Throwable failure) {
        return switch (outcome) {
            case TIMEOUT, NO_RESPONDERS, UNAVAILABLE, CLIENT_REFUSED ->
                    outcome.name() + " (no ack within the tries of " + RETRY_BUDGET_MS / 1000 + " s)";
            case REFUSED, FAILED -> outcome.name() + ": " + unwrap(failure);
            default -> outcome.name();
        };
    }

    /** How a try ended, from the failure its answer completed with (null: acked). */
    static Outcome outcome(Throwable failure) {
        if (failure == null) {
            return Outcome.ACKED;
        }
        Throwable cause = unwrap(failure);
        if (cause instanceof TimeoutException || cause instanceof CancellationException) {
            return Outcome.TIMEOUT; // ours, or the client's own clean-up of requests never answered
        }
        if (cause instanceof JetStreamApiException api) {
            return api.getErrorCode() == 503 ? Outcome.UNAVAILABLE : Outcome.REFUSED;
        }
        if (cause instanceof IOException && String.valueOf(cause.getMessage()).contains("503")) {
            return Outcome.NO_RESPONDERS; // "Error Publishing: 503 No Responders Available For Request"
        }
        if (cause instanceof IllegalStateException) {
            return Outcome.CLIENT_REFUSED;
        }
        return Outcome.FAILED;
    }

    /**
     * What the client failed a try with: it wraps its IOException and JetStreamApiException in a
     * RuntimeException, and the JDK that in a CompletionException.
     */
    static Throwable unwrap(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException
                || cause.getClass() == RuntimeException.class) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** Tries sent after a publish's first, so far. Any thread. */
    long retriedTries() {
        return retriedTries.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** {@link #retriedTries()} by the outcome of the try before, those with any, added to {@code byOutcome}. */
    void addRetriedTries(Map<Outcome, Long> byOutcome) {
        retriedTries.forEach((o, n) -> {
            if (n.sum() > 0) {
                byOutcome.merge(o, n.sum(), Long::sum);
            }
        });
    }

    /** No more tries: what is still unanswered fails as {@link Outcome#CLOSED}. Any thread, any number of times. */
    void close() {
        closed = true;
    }
}
