package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.JetStreamApiException;
import io.nats.client.api.Error;
import io.nats.client.impl.Headers;
import io.nats.client.support.NatsJetStreamConstants;
import io.nats.client.support.Status;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A JetStream publisher's retries, with a stand-in for the client: which failures are tried again,
 * with the same message id, until the budget is spent; and how the client's failures are told apart.
 */
class JetStreamPublicationTest {
    static final int RUN = 42;
    static final String[] SUBJECTS = {"bench.t0000", "bench.t0001"};
    static final long ATTEMPT_TIMEOUT_MS = 50;

    final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor();
    /** The message id and subject of every try, in order. */
    final List<String> tries = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        retries.shutdownNow();
    }

    /** A publication whose try {@code n} (from 1) is answered by {@code answers}. */
    JetStreamPublication publication(long budgetMs, IntFunction<CompletableFuture<?>> answers) {
        return new JetStreamPublication((String subject, Headers headers, byte[] value) -> {
            tries.add(subject + " " + headers.getFirst(NatsJetStreamConstants.MSG_ID_HDR));
            return answers.apply(tries.size());
        }, SUBJECTS, RUN, retries, ATTEMPT_TIMEOUT_MS, budgetMs);
    }

    static CompletableFuture<?> noResponders() {
        return CompletableFuture.failedFuture(new RuntimeException(
                new IOException("Error Publishing: 503 No Responders Available For Request")));
    }

    @Test
    @Timeout(10)
    void anAckAnswersTheFirstTry() throws Exception {
        JetStreamPublication p = publication(1_000, n -> CompletableFuture.completedFuture("ack"));
        p.publish(1, 7, new byte[28]).get(5, TimeUnit.SECONDS);
        assertThat(tries).containsExactly("bench.t0001 42-1-7");
        assertThat(p.retriedTries()).isZero();
    }

    @Test
    @Timeout(10)
    void aTryWithNoAckInTimeAndOneRefusedAreSentAgainWithTheSameMessageId() throws Exception {
        JetStreamPublication p = publication(5_000, n -> switch (n) {
            case 1 -> new CompletableFuture<>(); // the leader died with it: never answered
            case 2 -> noResponders(); // no leader yet
            default -> CompletableFuture.completedFuture("ack");
        });
        p.publish(0, 3, new byte[28]).get(5, TimeUnit.SECONDS);
        assertThat(tries).containsExactly("bench.t0000 42-0-3", "bench.t0000 42-0-3", "bench.t0000 42-0-3");
        assertThat(p.retriedTries()).isEqualTo(2);
    }

    @Test
    @Timeout(10)
    void aPublishNeverAckedFailsOnceTheBudgetIsSpentWithTheLastTrysReason() {
        JetStreamPublication p = publication(300, n -> new CompletableFuture<>());
        CompletableFuture<Void> answer = p.publish(0, 1, new byte[28]);
        assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(IOException.class)
                .hasMessageContaining("TIMEOUT");
        assertThat(tries.size()).isBetween(2, 8); // a try each 50 ms, none started after 300 ms
    }

    @Test
    @Timeout(10)
    void aRefusalForGoodIsNotSentAgain() {
        JetStreamPublication p = publication(5_000, n -> CompletableFuture.failedFuture(
                new RuntimeException(new JetStreamApiException(Error.JsBadRequestErr))));
        CompletableFuture<Void> answer = p.publish(0, 1, new byte[28]);
        assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).hasMessageContaining("REFUSED");
        assertThat(tries).hasSize(1);
    }

    @Test
    @Timeout(10)
    void aClosedPublicationSendsNothingMoreAndFailsWhatIsUnanswered() {
        JetStreamPublication p = publication(5_000, n -> new CompletableFuture<>());
        CompletableFuture<Void> answer = p.publish(0, 1, new byte[28]);
        p.close();
        assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).hasMessageContaining("CLOSED");
        assertThat(tries).hasSize(1);
    }

    @Test
    void theClientsFailuresAreToldApartThroughTheirWrappers() {
        assertThat(JetStreamPublication.outcome(null)).isEqualTo(JetStreamPublication.Outcome.ACKED);
        assertThat(JetStreamPublication.outcome(new TimeoutException()))
                .isEqualTo(JetStreamPublication.Outcome.TIMEOUT);
        assertThat(JetStreamPublication.outcome(new CompletionException(new CancellationException())))
                .isEqualTo(JetStreamPublication.Outcome.TIMEOUT);
        assertThat(JetStreamPublication.outcome(new CompletionException(new RuntimeException(
                new IOException("Error Publishing: 503 No Responders Available For Request")))))
                .isEqualTo(JetStreamPublication.Outcome.NO_RESPONDERS);
        assertThat(JetStreamPublication.outcome(new ExecutionException(new RuntimeException(new JetStreamApiException(
                Error.convert(new Status(503, "unavailable")))))))
                .isEqualTo(JetStreamPublication.Outcome.UNAVAILABLE);
        assertThat(JetStreamPublication.outcome(new RuntimeException(new JetStreamApiException(Error.JsBadRequestErr))))
                .isEqualTo(JetStreamPublication.Outcome.REFUSED);
        assertThat(JetStreamPublication.outcome(new IllegalStateException("Output queue is full 5000")))
                .isEqualTo(JetStreamPublication.Outcome.CLIENT_REFUSED);
        assertThat(JetStreamPublication.outcome(new IOException("broken pipe")))
                .isEqualTo(JetStreamPublication.Outcome.FAILED);
        // a thousand timeouts are one reason
        assertThat(JetStreamPublication.reason(JetStreamPublication.Outcome.TIMEOUT, new TimeoutException()))
                .isEqualTo(JetStreamPublication.reason(JetStreamPublication.Outcome.TIMEOUT, null));
    }
}
