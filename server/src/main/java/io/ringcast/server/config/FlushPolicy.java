package io.ringcast.server.config;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * When a fan-out reader flushes what it wrote to its sessions ({@code pipeline.flushPolicy}):
 * the trade between latency and throughput. The YAML spelling is {@link #yamlName()}.
 */
public enum FlushPolicy {
    /** Flush after every write: the lowest latency, a system call per frame per session. */
    IMMEDIATE("immediate"),
    /** Flush each session once per drained batch of the fan-out ring. */
    END_OF_BATCH("end-of-batch"),
    /**
     * As {@link #END_OF_BATCH}, and a loop drains the fan-out ring at most once per
     * {@code pipeline.flushMaxDelayUs}: a drain that would follow the previous one sooner waits for
     * the rest of that time, so under load each drain gathers that long's updates into one frame
     * and one system call per session, while an update after a quiet spell goes out at once. The
     * least server CPU per delivery under load, for at most that much added latency.
     */
    MAX_DELAY("max-delay"),
    /**
     * As {@link #MAX_DELAY}, with the least time between two drains chosen by the load: a multiple
     * of what the flushes of the loop's last drain took (its system calls), up to
     * {@code pipeline.flushMaxDelayUs}. Quiet, they take microseconds and every update goes out at
     * once; under load, and with more sessions, they take longer, the loop waits longer before the
     * next drain, and each session gets more updates per frame and per system call: the cost per
     * delivery falls as the load rises, with no knob but the ceiling. The default.
     */
    ADAPTIVE("adaptive");

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
