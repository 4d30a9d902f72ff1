package io.ringcast.server.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * What a subscriber that falls behind gets for the topics of a subtree ({@code features.conflation}).
 * The YAML spelling is {@link #yamlName()}.
 */
public enum Conflation {
    /**
     * Every update, in order: the session's unsent bytes may grow to {@code limits.outboundQueueBytes},
     * past which it gets {@code SLOW_CONSUMER}. Nothing is ever skipped.
     */
    OFF("off"),
    /**
     * While the session's channel is not writable or its unsent bytes pass
     * {@code features.conflationBacklogBytes}, its pending updates collapse to the newest value per
     * topic; otherwise as {@link #OFF}.
     */
    ON_BACKPRESSURE("on-backpressure"),
    /** At most one unsent update per topic per session, whatever the backlog. */
    ALWAYS("always");

    private final String yamlName;

    Conflation(String yamlName) {
        this.yamlName = yamlName;
    }

    /**
     * Reads a config value: a {@link #yamlName()}, or {@code false}, which is what YAML 1.1 makes of
     * an unquoted {@code off} ({@code conflation: off} means what it says).
     *
     * @throws IllegalArgumentException for anything else; the config loader names the key and the values
     */
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static Conflation fromYaml(Object value) {
        if (Boolean.FALSE.equals(value)) {
            return OFF;
        }
        for (Conflation c : values()) {
            if (c.yamlName.equals(value)) {
                return c;
            }
        }
        throw new IllegalArgumentException("not a conflation policy: " + value);
    }

    /** The spelling in a config file, e.g. {@code on-backpressure}. Jackson reads and writes this form. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }
}
