package io.ringcast.server.config;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonPOJOBuilder;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import static io.ringcast.server.config.ConfigRules.between;

/**
 * Section {@code features}: the four toggles, their global defaults and per-subtree overrides.
 * For a topic, each toggle comes from the most specific override whose selector matches the topic
 * and that sets the toggle, else from the global default here. Specificity: more literal segments
 * win, then more segments, then {@code +} over {@code #}; between equally specific overrides, the
 * later in the list wins. Changes to this section take effect without a restart (hot reload).
 *
 * @param lastValueCache        keep each topic's newest value and recent history: new subscribers
 *                              get the value, reconnecting ones resume
 * @param deltas                send an update as a delta against the topic's previous value when
 *                              that is smaller (needs the last-value cache for the topic)
 * @param compression           negotiate WebSocket permessage-deflate with clients that offer it and
 *                              compress the topic's updates
 * @param conflation            what a subscriber that falls behind gets
 * @param compressionMinBytes   frames smaller than this are sent uncompressed
 * @param conflationBacklogBytes with {@link Conflation#ON_BACKPRESSURE}: a session's unsent bytes
 *                              past which its updates are conflated (capped: see
 *                              {@link #effectiveConflationBacklogBytes})
 * @param overrides             per-subtree settings, each naming only the toggles it changes
 * @param expireAfterMs         a topic no publish has updated for this long is removed; 0: never
 */
public record Features(boolean lastValueCache, boolean deltas, boolean compression, Conflation conflation,
                       int compressionMinBytes, long conflationBacklogBytes, List<SubtreeOverride> overrides,
                       long expireAfterMs) {
    /** The longest {@code expireAfterMs}: 10 years; a topic kept longer is one kept for good (0). */
    public static final long MAX_EXPIRE_AFTER_MS = 10L * 366 * 24 * 3600 * 1000;

    public Features {
        Objects.requireNonNull(conflation, "conflation");
        overrides = List.copyOf(overrides);
    }

    /** Features whose topics never expire. */
    public Features(boolean lastValueCache, boolean deltas, boolean compression, Conflation conflation,
                    int compressionMinBytes, long conflationBacklogBytes, List<SubtreeOverride> overrides) {
        this(lastValueCache, deltas, compression, conflation, compressionMinBytes, conflationBacklogBytes, overrides,
                0);
    }

    /**
     * The settings in the config file's words, for a log line: {@code lastValueCache: on, deltas:
     * off, compression: on (from 256 bytes), conflation: on-backpressure (past 1048576 bytes);
     * fx/#: deltas: on}.
     */
    public String describe() {
        StringBuilder b = new StringBuilder()
                .append("lastValueCache: ").append(onOff(lastValueCache))
                .append(", deltas: ").append(onOff(deltas))
                .append(", compression: ").append(onOff(compression));
        if (compression) {
            b.append(" (from ").append(compressionMinBytes).append(" bytes)");
        }
        b.append(", conflation: ").append(conflation.yamlName());
        if (conflation == Conflation.ON_BACKPRESSURE) {
            b.append(" (past ").append(conflationBacklogBytes).append(" bytes)");
        }
        if (expireAfterMs > 0) {
            b.append(", expireAfterMs: ").append(expireAfterMs);
        }
        for (SubtreeOverride o : overrides) {
            b.append("; ").append(o.selector()).append(':');
            String sep = " ";
            if (o.lastValueCache() != null) {
                b.append(sep).append("lastValueCache: ").append(onOff(o.lastValueCache()));
                sep = ", ";
            }
            if (o.deltas() != null) {
                b.append(sep).append("deltas: ").append(onOff(o.deltas()));
                sep = ", ";
            }
            if (o.compression() != null) {
                b.append(sep).append("compression: ").append(onOff(o.compression()));
                sep = ", ";
            }
            if (o.conflation() != null) {
                b.append(sep).append("conflation: ").append(o.conflation().yamlName());
                sep = ", ";
            }
            if (o.expireAfterMs() != null) {
                b.append(sep).append("expireAfterMs: ").append(o.expireAfterMs());
            }
        }
        return b.toString();
    }

    private static String onOff(boolean on) {
        return on ? "on" : "off";
    }

    /** Whether compression is on anywhere: globally or in an override. Then the server negotiates it. */
    public boolean compressionAnywhere() {
        return compression || overrides.stream().anyMatch(o -> Boolean.TRUE.equals(o.compression()));
    }

    /**
     * The backlog past which {@link Conflation#ON_BACKPRESSURE} conflates: {@link #conflationBacklogBytes},
     * at most half the slow-consumer limit, so conflation always starts before that limit is reached.
     */
    public long effectiveConflationBacklogBytes(long outboundQueueBytes) {
        return Math.min(conflationBacklogBytes, outboundQueueBytes / 2);
    }

    void validate(PathLimits pathLimits) {
        between("features.compressionMinBytes", compressionMinBytes, 0, 1048576);
        between("features.conflationBacklogBytes", conflationBacklogBytes, 1024, 1073741824);
        between("features.expireAfterMs", expireAfterMs, 0, MAX_EXPIRE_AFTER_MS);
        Map<Selector, Integer> seen = new HashMap<>();
        for (int i = 0; i < overrides.size(); i++) {
            SubtreeOverride o = overrides.get(i);
            String key = "features.overrides[" + i + "]";
            if (o.selector() == null) {
                throw new ConfigException(key + ".selector", "key '" + key + ".selector' is required: the topics "
                        + "this override applies to, e.g. \"fx/#\"");
            }
            Selector selector;
            try {
                selector = Selector.parse(o.selector(), pathLimits);
            } catch (ProtocolException e) {
                throw new ConfigException(key + ".selector", "key '" + key + ".selector': " + e.getMessage());
            }
            Integer earlier = seen.putIfAbsent(selector, i);
            if (earlier != null) {
                throw new ConfigException(key + ".selector", "key '" + key + ".selector': selector "
                        + ConfigText.quote(o.selector()) + " is already used by features.overrides[" + earlier
                        + "]; merge the two");
            }
            if (o.lastValueCache() == null && o.deltas() == null && o.compression() == null
                    && o.conflation() == null && o.expireAfterMs() == null) {
                throw new ConfigException(key, "key '" + key + "' (selector " + ConfigText.quote(o.selector())
                        + ") sets no feature; give at least one of lastValueCache, deltas, compression, conflation, "
                        + "expireAfterMs");
            }
            if (o.expireAfterMs() != null) {
                between(key + ".expireAfterMs", o.expireAfterMs(), 0, MAX_EXPIRE_AFTER_MS);
            }
        }
    }

    /**
     * One entry of {@code features.overrides}: a selector and the toggles it sets; a toggle left out
     * ({@code null} here) is inherited.
     *
     * @param selector       the topics it applies to: an exact path, {@code +} and a final {@code #}
     * @param lastValueCache see {@link Features#lastValueCache()}, or null
     * @param deltas         see {@link Features#deltas()}, or null
     * @param compression    see {@link Features#compression()}, or null
     * @param conflation     see {@link Features#conflation()}, or null
     * @param expireAfterMs  see {@link Features#expireAfterMs()} (0 here: never, below a subtree that expires), or null
     */
    @JsonDeserialize(builder = SubtreeOverride.Builder.class)
    public record SubtreeOverride(String selector, Boolean lastValueCache, Boolean deltas, Boolean compression,
                           Conflation conflation, Long expireAfterMs) {

        /** An override that leaves expiry as it is inherited. */
        public SubtreeOverride(String selector, Boolean lastValueCache, Boolean deltas, Boolean compression,
                               Conflation conflation) {
            this(selector, lastValueCache, deltas, compression, conflation, null);
        }

        /** Binds an entry whose keys are all optional (a record creator would require every one). */
        @JsonPOJOBuilder(withPrefix = "")
        static final class Builder {
            private String selector;
            private Boolean lastValueCache;
            private Boolean deltas;
            private Boolean compression;
            private Conflation conflation;
            private Long expireAfterMs;

            public Builder selector(String selector) {
                this.selector = selector;
                return this;
            }

            public Builder lastValueCache(Boolean lastValueCache) {
                this.lastValueCache = lastValueCache;
                return this;
            }

            public Builder deltas(Boolean deltas) {
                this.deltas = deltas;
                return this;
            }

            public Builder compression(Boolean compression) {
                this.compression = compression;
                return this;
            }

            public Builder conflation(Conflation conflation) {
                this.conflation = conflation;
                return this;
            }

            public Builder expireAfterMs(Long expireAfterMs) {
                this.expireAfterMs = expireAfterMs;
                return this;
            }

            public SubtreeOverride build() {
                return new SubtreeOverride(selector, lastValueCache, deltas, compression, conflation, expireAfterMs);
            }
        }
    }
}
