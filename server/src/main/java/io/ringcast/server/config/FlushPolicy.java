package io.ringcast.server.config;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * When a fan-out reader flushes what it wrote to its sessions ({@code pipeline.flushPolicy}):
 * the trade between latency and throughput. The YAML spelling is {@link #yamlName()}.
 */
public enum FlushPolicy {
    /** Flush after every write: the lowest latency, a system call per frame per session. */
    IMMEDIATE("immediate"),
    /** Flush each session once per drained batch of the fan-out ring. The default. */
    END_OF_BATCH("end-of-batch"),
    /**
     * Flush a session at most {@code pipeline.flushMaxDelayUs} after its first unflushed write,
     * gathering several batches into one system call: the highest throughput, a bounded delay.
     */
    MAX_DELAY("max-delay");

    private final String yamlName;

    FlushPolicy(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The spelling in a config file, e.g. {@code end-of-batch}. Jackson reads and writes this form. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }
}
