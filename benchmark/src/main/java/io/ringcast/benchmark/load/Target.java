package io.ringcast.benchmark.load;

/**
 * The system a run loads ({@code --target}): Ringcast, NATS JetStream for the comparison of
 * {@code scripts/bench-cluster.sh --vs-jetstream}, or Redis pub/sub for that of
 * {@code scripts/bench-e2e.sh --vs-redis}. The workload, the values, the checks and the figures are
 * the same for all; only the clients differ.
 */
enum Target {
    /** Ringcast nodes at {@code ws://} URLs: Java-client publishers, lean or Java-client subscribers. */
    RINGCAST("Ringcast", "ws://"),
    /**
     * NATS servers with JetStream at {@code nats://} URLs: one file-storage stream over the subjects
     * {@code bench.t0000 ..}, one per topic ({@link JetStreamStream}), publishers that publish
     * asynchronously with JetStream acks and retries ({@link JetStreamPublication}), and subscribers
     * that are ordered push consumers of the official Java client ({@link JetStreamSubscriber}).
     */
    JETSTREAM("JetStream", "nats://"),
    /**
     * A Redis server at a {@code redis://} URL, its pub/sub: the channels {@code bench.t0000 ..}, one per
     * topic ({@link RedisChannels}), publishers that send {@code PUBLISH} pipelined, acked by its reply
     * ({@link RedisPublication}), and subscribers on {@code PSUBSCRIBE bench.*} ({@link RedisSubscriber}),
     * all on Netty's RESP codec and the generator's event loops ({@link RedisClients}). Nothing is kept
     * or sent again: a lost connection fails the run.
     */
    REDIS("Redis", "redis://");

    /** How the reports name the system. */
    final String displayName;
    /** What every {@code --servers} URL of this target starts with. */
    final String urlScheme;

    Target(String displayName, String urlScheme) {
        this.displayName = displayName;
        this.urlScheme = urlScheme;
    }

    /** As {@code --target} spells it, and the scenario names' suffix: {@code jetstream}, {@code redis}. */
    String optionName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
