package io.ringcast.protocol;

import java.util.Arrays;

/**
 * A parsed subscription selector: an exact path, or a path with {@code +} (exactly one segment)
 * and a final {@code #} (the parent and everything below it), the MQTT convention. Immutable;
 * safe from any thread.
 */
public final class Selector {
    public static final String ONE_SEGMENT = "+";
    public static final String SUBTREE = "#";

    private final String text;
    private final String[] segments;
    private final boolean exact;

    private Selector(String text, String[] segments, boolean exact) {
        this.text = text;
        this.segments = segments;
        this.exact = exact;
    }

    /**
     * Parses a selector.
     *
     * @throws ProtocolException with {@link ErrorCode#INVALID_SELECTOR} and a reason naming the rule broken
     */
    public static Selector parse(String text, PathLimits limits) throws ProtocolException {
        String[] segments = TopicPath.split(text, limits, true, ErrorCode.INVALID_SELECTOR, "selector");
        boolean exact = true;
        for (int i = 0; i < segments.length; i++) {
            String s = segments[i];
            boolean hasPlus = s.indexOf('+') >= 0;
            boolean hasHash = s.indexOf('#') >= 0;
            if ((hasPlus || hasHash) && s.length() > 1) {
                throw new ProtocolException(ErrorCode.INVALID_SELECTOR, "invalid selector '" + text + "': segment '"
                        + s + "' mixes a wildcard with other characters; '+' and '#' must be whole segments");
            }
            if (hasHash && i != segments.length - 1) {
                throw new ProtocolException(ErrorCode.INVALID_SELECTOR, "invalid selector '" + text
                        + "': '#' must be the last segment");
            }
            if (hasPlus || hasHash) {
                segments[i] = hasPlus ? ONE_SEGMENT : SUBTREE; // interned: matching compares by reference
                exact = false;
            }
        }
        return new Selector(text, segments, exact);
    }

    /** The selector as written. */
    public String text() {
        return text;
    }

    /** Whether the selector has no wildcard and so names exactly one path. */
    public boolean isExact() {
        return exact;
    }

    /** The number of segments, wildcards included. */
    public int depth() {
        return segments.length;
    }

    /** Segment {@code i}; {@link #ONE_SEGMENT} and {@link #SUBTREE} are returned as those constants. */
    public String segment(int i) {
        return segments[i];
    }

    /** Whether this selector matches the topic whose path has these segments. */
    public boolean matches(String[] pathSegments) {
        int n = segments.length;
        for (int i = 0; i < n; i++) {
            String s = segments[i];
            if (s == SUBTREE) {
                return pathSegments.length >= i;
            }
            if (i >= pathSegments.length) {
                return false;
            }
            if (s != ONE_SEGMENT && !s.equals(pathSegments[i])) {
                return false;
            }
        }
        return pathSegments.length == n;
    }

    /** Whether this selector matches the topic with this (valid) path. */
    public boolean matches(String path) {
        return matches(path.split("/", -1));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Selector && Arrays.equals(((Selector) o).segments, segments);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(segments);
    }

    @Override
    public String toString() {
        return text;
    }
}
