package io.ringcast.server.config;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * How the Disruptor ring consumers wait for work ({@code pipeline.waitStrategy}).
 * The YAML spelling is {@link #yamlName()}: {@code blocking}, {@code sleeping}, {@code yielding},
 * {@code busy-spin}.
 */
public enum WaitStrategyKind {
    /** Park on a lock and condition: no CPU when idle, the highest wake-up latency. The default. */
    BLOCKING("blocking"),
    /** Spin, then yield, then sleep briefly: little CPU when idle, moderate latency. */
    SLEEPING("sleeping"),
    /** Spin, then {@code Thread.yield()}: a busy core per consumer, low latency. */
    YIELDING("yielding"),
    /** Spin without pause: a dedicated core per consumer, the lowest latency. */
    BUSY_SPIN("busy-spin");

    private final String yamlName;

    WaitStrategyKind(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The spelling in a config file, e.g. {@code busy-spin}. Jackson reads and writes this form. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }
}
