package io.ringcast.benchmark.load;

/**
 * The system a run loads ({@code --target}): Ringcast, or NATS JetStream for the comparison of
 * {@code scripts/bench-cluster.sh --vs-jetstream}. The workload, the values, the checks and the
 * figures are the same for both; only the clients differ.
 */
enum Target {
    /** Ringcast nodes at {@code ws://} URLs: Java-client publishers, lean or Java-client subscribers. */
    RINGCAST,
    /**
     * NATS servers with JetStream at {@code nats://} URLs: one file-storage stream over the subjects
     * {@code bench.t0000 ..}, one per topic ({@link JetStreamStream}), publishers that publish
     * asynchronously with JetStream acks and retries ({@link JetStreamPublication}), and subscribers
     * that are ordered push consumers of the official Java client ({@link JetStreamSubscriber}).
     */
    JETSTREAM
}
