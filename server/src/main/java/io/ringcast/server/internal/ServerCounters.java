package io.ringcast.server.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The node's running totals. Each hot counter has a single writer that adds once per batch, so
 * counting costs nothing per message; readers (health, tests, later metrics) may lag a batch.
 */
public final class ServerCounters {
    private volatile long publishes;
    private volatile int topics;
    final AtomicInteger sessions = new AtomicInteger();
    final LongAdder deliveries = new LongAdder();
    final LongAdder slowConsumerDisconnects = new LongAdder();
    final LongAdder protocolErrors = new LongAdder();

    /** Sequencer thread only. */
    void addPublishes(long n) {
        if (n != 0) {
            publishes = publishes + n;
        }
    }

    /** Sequencer thread only. */
    void topics(int n) {
        topics = n;
    }

    public long publishes() {
        return publishes;
    }

    public int topics() {
        return topics;
    }

    public int sessions() {
        return sessions.get();
    }

    public long deliveries() {
        return deliveries.sum();
    }

    public long slowConsumerDisconnects() {
        return slowConsumerDisconnects.sum();
    }

    public long protocolErrors() {
        return protocolErrors.sum();
    }
}
