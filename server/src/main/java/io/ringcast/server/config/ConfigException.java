package io.ringcast.server.config;

import java.util.Optional;

/**
 * A config file or environment override that cannot be used: unreadable, not YAML, an unknown key, a
 * wrong type or a value out of range. The message names the file (when there is one) or the
 * variable, the full dotted key and what was expected, e.g.
 * {@code config/server.yaml: key 'server.port' expects an integer, got "eighty"};
 * it is meant to be shown to the operator as is. The server stops at start-up on this exception.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final String key;
    private final String detail;

    ConfigException(String key, String detail) {
        this(null, key, detail, null);
    }

    ConfigException(String source, String key, String detail, Throwable cause) {
        super(source == null ? detail : source + ": " + detail, cause);
        this.source = source;
        this.key = key;
        this.detail = detail;
    }

    /** The file (or other source) that was being read, when there is one. */
    public Optional<String> source() {
        return Optional.ofNullable(source);
    }

    /** The full dotted key at fault, e.g. {@code server.port}, when the fault is a key's. */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /** The same failure, with {@code newSource} named in front of the message. */
    ConfigException withSource(String newSource) {
        if (newSource == null || newSource.equals(source)) {
            return this;
        }
        ConfigException e = new ConfigException(newSource, key, detail, getCause());
        e.setStackTrace(getStackTrace());
        return e;
    }
}
