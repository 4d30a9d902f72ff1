package io.ringcast.benchmark.load;

import java.util.concurrent.CompletableFuture;

/**
 * Where one {@link PacedPublisher}'s values go: one publishing client of the system under test
 * ({@link Target}). A Ringcast client's {@code publish} to the topic's path, a
 * {@link JetStreamPublication}, or a {@link RedisPublication}. The first two retry on their own as their
 * clients do, Redis's never does; each answers once.
 *
 * <p>Threads: {@link #publish} from the publisher's own thread only; the answer completes on the
 * client's threads (or at once, on the caller's).
 */
@FunctionalInterface
interface Publication {
    /**
     * Sends the value of topic {@code topic} with counter {@code counter}; the answer completes when
     * the system acked it, and fails (with the reason as the exception's message, or a Ringcast error
     * code) when the client gave up on it, its outcome then unknown.
     */
    CompletableFuture<?> publish(int topic, long counter, byte[] value);
}
