package io.ringcast.protocol;

import io.netty.buffer.ByteBufUtil;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The options of one {@code SUBSCRIBE} (docs/protocol.md, "Subscribe options"):
 * how often the subscriber wants each topic at most ({@code maxRate}), which fields of each value
 * ({@code fields}), which values ({@code filter}), and what history the reply starts with
 * ({@code rewind}, {@code rewindSince}).
 *
 * <p>An immutable value: equal options are {@link #equals equal} (a server interns views by them),
 * and {@link #NONE} is a plain subscription, which travels with no options block at all. The
 * {@link Builder} refuses what the wire cannot carry or the protocol forbids, with an
 * {@link IllegalArgumentException} naming the option; it does not parse paths or filters, which
 * the server does (docs/subscription-options.md), so a built value can still be refused by a
 * server with {@code INVALID_OPTIONS}.
 *
 * <p>An option not given reads as {@code 0}, an empty list, an empty text or {@code -1}, as each
 * accessor says. Thread-safe.
 */
public final class SubscribeOptions {
    /** Kind byte of {@code maxRate} in the options block. */
    static final int MAX_RATE = 1;
    /** Kind byte of {@code fields}. */
    static final int FIELDS = 2;
    /** Kind byte of {@code filter}. */
    static final int FILTER = 3;
    /** Kind byte of {@code rewind}. */
    static final int REWIND = 4;
    /** Kind byte of {@code rewindSince}. */
    static final int REWIND_SINCE = 5;
    /** Kind byte of {@code incarnations}. */
    static final int INCARNATIONS = 6;
    /** Each kind's name, as the protocol and the error reasons spell it; index = kind. */
    private static final String[] NAMES = {null, "maxRate", "fields", "filter", "rewind", "rewindSince",
            "incarnations"};
    private static final int[] NO_INCARNATIONS = new int[0];

    /** The lowest {@code maxRate}, in thousandths of an update per second: one update per 1,000 s. */
    public static final int MIN_MAX_RATE_THOUSANDTHS = 1;
    /** The highest {@code maxRate}, in thousandths of an update per second: 100,000 updates per second. */
    public static final int MAX_MAX_RATE_THOUSANDTHS = 100_000_000;
    /** The most paths {@code fields} holds. */
    public static final int MAX_FIELDS = 32;
    /** The longest {@code filter}, in characters (UTF-16 code units, as Java's {@link String#length}). */
    public static final int MAX_FILTER_CHARS = 1024;
    /** The most bytes one option's value holds on the wire: its length is a {@code u16}. */
    public static final int MAX_OPTION_VALUE_BYTES = 0xFFFF;

    /** No option: a plain subscription, and a {@code SUBSCRIBE} byte for byte as in protocol version 1. */
    public static final SubscribeOptions NONE = new SubscribeOptions(0, List.of(), "", 0, -1, NO_INCARNATIONS);

    private final int maxRateThousandths;
    private final List<String> fields;
    private final String filter;
    private final int rewind;
    private final long rewindSince;
    private final int[] incarnations;

    private SubscribeOptions(int maxRateThousandths, List<String> fields, String filter, int rewind, long rewindSince,
                             int[] incarnations) {
        this.maxRateThousandths = maxRateThousandths;
        this.fields = fields;
        this.filter = filter;
        this.rewind = rewind;
        this.rewindSince = rewindSince;
        this.incarnations = incarnations;
    }

    /** A builder with no option set; {@link Builder#build()} of it gives {@link #NONE}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Whether no option is given: a plain subscription, equal to {@link #NONE}. */
    public boolean isEmpty() {
        return maxRateThousandths == 0 && fields.isEmpty() && filter.isEmpty() && rewind == 0 && rewindSince < 0
                && incarnations.length == 0;
    }

    /**
     * Whether these options make the subscription's <b>view</b> (docs/protocol.md, "Views"): any of
     * {@code maxRate}, {@code fields}, {@code filter}. Its messages then come flagged {@code VIEWED}.
     * {@code rewind} and {@code rewindSince} only shape the reply of a subscription that is plain
     * otherwise.
     */
    public boolean makesView() {
        return maxRateThousandths != 0 || !fields.isEmpty() || !filter.isEmpty();
    }

    /**
     * {@code maxRate} in updates per second per topic, as it travels (a multiple of 0.001);
     * {@code 0} when not given.
     */
    public double maxRate() {
        return maxRateThousandths / 1000.0;
    }

    /**
     * {@code maxRate} as it travels: thousandths of an update per second per topic, from
     * {@value #MIN_MAX_RATE_THOUSANDTHS} to {@value #MAX_MAX_RATE_THOUSANDTHS}; {@code 0} when not given.
     */
    public int maxRateThousandths() {
        return maxRateThousandths;
    }

    /** {@code fields}: the paths of the fields to send, in the order given (unmodifiable); empty when not given. */
    public List<String> fields() {
        return fields;
    }

    /** {@code filter}: the text of the predicate values must pass; empty when not given. */
    public String filter() {
        return filter;
    }

    /** {@code rewind}: how many of each topic's last updates the reply starts with; {@code 0} when not given. */
    public int rewind() {
        return rewind;
    }

    /**
     * {@code rewindSince}: the reply starts with each topic's updates since this time, in
     * milliseconds since the epoch; {@code -1} when not given.
     */
    public long rewindSince() {
        return rewindSince;
    }

    /**
     * {@code incarnations}: the incarnation of each topic of the resume list, in its order (0: not
     * known), so that a topic removed and created again is not resumed from a sequence of the one
     * before; empty when not given. A copy.
     */
    public int[] incarnations() {
        return incarnations.clone();
    }

    /** These options with {@code incarnations} for a resume list, or without any for an empty array. */
    public SubscribeOptions withIncarnations(int[] incarnations) {
        SubscribeOptions with = new SubscribeOptions(maxRateThousandths, fields, filter, rewind, rewindSince,
                checkIncarnations(incarnations));
        return with.isEmpty() ? NONE : with;
    }

    private static int[] checkIncarnations(int[] incarnations) {
        if (incarnations.length > MAX_OPTION_VALUE_BYTES / 4) {
            throw new IllegalArgumentException("incarnations: " + incarnations.length + " of them, more than the "
                    + MAX_OPTION_VALUE_BYTES / 4 + " an option holds");
        }
        return incarnations.length == 0 ? NO_INCARNATIONS : incarnations.clone();
    }

    /**
     * The names of the options given, in the order of their kinds on the wire: some of
     * {@code maxRate}, {@code fields}, {@code filter}, {@code rewind}, {@code rewindSince},
     * {@code incarnations}.
     */
    public List<String> names() {
        List<String> names = new ArrayList<>(6);
        for (int kind = MAX_RATE; kind <= INCARNATIONS; kind++) {
            if (has(kind)) {
                names.add(NAMES[kind]);
            }
        }
        return names;
    }

    /** Whether the option of this kind is given. */
    boolean has(int kind) {
        return switch (kind) {
            case MAX_RATE -> maxRateThousandths != 0;
            case FIELDS -> !fields.isEmpty();
            case FILTER -> !filter.isEmpty();
            case REWIND -> rewind != 0;
            case REWIND_SINCE -> rewindSince >= 0;
            case INCARNATIONS -> incarnations.length > 0;
            default -> false;
        };
    }

    /** The name of an option kind, or null for a kind this version does not define. */
    static String name(int kind) {
        return kind > 0 && kind < NAMES.length ? NAMES[kind] : null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SubscribeOptions other && maxRateThousandths == other.maxRateThousandths
                && rewind == other.rewind && rewindSince == other.rewindSince && fields.equals(other.fields)
                && filter.equals(other.filter) && java.util.Arrays.equals(incarnations, other.incarnations);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxRateThousandths, fields, filter, rewind, rewindSince) * 31
                + java.util.Arrays.hashCode(incarnations);
    }

    /** The options given, e.g. {@code {maxRate=4, fields=[bid, ask], filter='spread < 0.0005'}}; {@code {}} for none. */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>(5);
        if (maxRateThousandths != 0) {
            parts.add("maxRate=" + BigDecimal.valueOf(maxRateThousandths, 3).stripTrailingZeros().toPlainString());
        }
        if (!fields.isEmpty()) {
            parts.add("fields=" + fields);
        }
        if (!filter.isEmpty()) {
            parts.add("filter='" + filter + "'");
        }
        if (rewind != 0) {
            parts.add("rewind=" + rewind);
        }
        if (rewindSince >= 0) {
            parts.add("rewindSince=" + rewindSince);
        }
        if (incarnations.length > 0) {
            parts.add("incarnations=" + incarnations.length);
        }
        return "{" + String.join(", ", parts) + "}";
    }

    /**
     * Builds {@link SubscribeOptions}. Each setter checks its value and throws an
     * {@link IllegalArgumentException} whose message starts with the option's name; setting an
     * option again replaces it. Not thread-safe.
     */
    public static final class Builder {
        private int maxRateThousandths;
        private List<String> fields = List.of();
        private String filter = "";
        private int rewind;
        private long rewindSince = -1;
        private int[] incarnations = NO_INCARNATIONS;

        private Builder() {
        }

        /**
         * The incarnation of each topic of the {@code SUBSCRIBE}'s resume list, in its order (0: not
         * known); at most {@code 16,383}, the most a {@code u16} of bytes holds.
         */
        public Builder incarnations(int[] incarnations) {
            this.incarnations = checkIncarnations(incarnations);
            return this;
        }

        /**
         * At most this many updates per second per topic, from 0.001 (one per 1,000 s) to 100,000;
         * it travels in thousandths, so it is rounded to the nearest 0.001.
         */
        public Builder maxRate(double updatesPerSecond) {
            // NaN fails both comparisons
            if (!(updatesPerSecond >= MIN_MAX_RATE_THOUSANDTHS / 1000.0
                    && updatesPerSecond <= MAX_MAX_RATE_THOUSANDTHS / 1000.0)) {
                throw new IllegalArgumentException("maxRate: " + updatesPerSecond
                        + " updates per second is out of range (0.001 to 100000)");
            }
            this.maxRateThousandths = (int) Math.round(updatesPerSecond * 1000);
            return this;
        }

        /** {@code maxRate} as it travels, thousandths already checked by the caller (the decoder). */
        /** The rate as the wire carries it ({@link WireDecoder}); refused out of range as {@link #maxRate} refuses. */
        Builder maxRateThousandths(long thousandths) {
            if (thousandths < MIN_MAX_RATE_THOUSANDTHS || thousandths > MAX_MAX_RATE_THOUSANDTHS) {
                throw new IllegalArgumentException("maxRate: " + thousandths + " thousandths of an update per second,"
                        + " out of range (" + MIN_MAX_RATE_THOUSANDTHS + " to " + MAX_MAX_RATE_THOUSANDTHS
                        + ": 0.001 to 100000 updates per second)");
            }
            this.maxRateThousandths = (int) thousandths;
            return this;
        }

        /** Send only these fields of each value: 1 to {@value #MAX_FIELDS} paths (docs/subscription-options.md). */
        public Builder fields(String... paths) {
            return fields(List.of(paths));
        }

        /**
         * Send only these fields of each value: 1 to {@value #MAX_FIELDS} paths, in this order,
         * together at most {@value #MAX_OPTION_VALUE_BYTES} bytes on the wire (a count byte, then
         * each path as a {@code string}). The paths themselves are checked by the server.
         */
        public Builder fields(List<String> paths) {
            Objects.requireNonNull(paths, "fields");
            checkFieldCount(paths.size());
            List<String> copy = List.copyOf(paths); // refuses null paths
            long bytes = fieldsValueBytes(copy);
            if (bytes > MAX_OPTION_VALUE_BYTES) {
                throw new IllegalArgumentException("fields: " + bytes + " bytes on the wire, more than the "
                        + MAX_OPTION_VALUE_BYTES + " an option holds");
            }
            this.fields = copy;
            return this;
        }

        /** {@code fields} read from the wire, already checked by the caller (the decoder). */
        /**
         * Send only the updates whose value passes this predicate: 1 to {@value #MAX_FILTER_CHARS}
         * characters. Its language (docs/subscription-options.md) is checked by the server.
         */
        public Builder filter(String text) {
            Objects.requireNonNull(text, "filter");
            if (text.isEmpty()) {
                throw new IllegalArgumentException("filter: empty");
            }
            if (text.length() > MAX_FILTER_CHARS) {
                throw new IllegalArgumentException("filter: longer than " + MAX_FILTER_CHARS + " characters ("
                        + text.length() + ")");
            }
            this.filter = text;
            return this;
        }

        /**
         * Start the reply with each matching topic's last {@code lastUpdates} updates (at least 1;
         * a server refuses more than its {@code history.length}) instead of its current value.
         */
        public Builder rewind(int lastUpdates) {
            if (lastUpdates < 1) {
                throw new IllegalArgumentException("rewind: " + lastUpdates + " updates; rewind at least 1");
            }
            this.rewind = lastUpdates;
            return this;
        }

        /**
         * Start the reply with each matching topic's updates since this time, in milliseconds since
         * the epoch (at least 0). With {@link #rewind} too: at most that many, none older than this.
         */
        public Builder rewindSince(long epochMillis) {
            if (epochMillis < 0) {
                throw new IllegalArgumentException("rewindSince: " + epochMillis + " is before the epoch");
            }
            this.rewindSince = epochMillis;
            return this;
        }

        /** The options set so far; {@link #NONE} when none is. */
        public SubscribeOptions build() {
            SubscribeOptions built = new SubscribeOptions(maxRateThousandths, fields, filter, rewind, rewindSince,
                    incarnations);
            return built.isEmpty() ? NONE : built;
        }
    }

    /** Bytes of the {@code fields} option's value: {@code u8 n}, then each path as a {@code string}. */
    /** Refuses a {@code fields} option of {@code n} paths unless 1 to {@link #MAX_FIELDS}: the builder's rule, which the decoder applies before reading them. */
    static void checkFieldCount(int n) {
        if (n == 0) {
            throw new IllegalArgumentException("fields: no paths given; name at least one");
        }
        if (n > MAX_FIELDS) {
            throw new IllegalArgumentException("fields: " + n + " paths, more than " + MAX_FIELDS);
        }
    }

    static long fieldsValueBytes(List<String> paths) {
        long bytes = 1;
        for (String path : paths) {
            bytes += 2 + ByteBufUtil.utf8Bytes(path);
        }
        return bytes;
    }
}
