package io.ringcast.server.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * One dotted path to a field of a JSON object, as the {@code fields} and {@code filter} options
 * name it: {@code quote.bid} is the key {@code bid} of the object under the root's key
 * {@code quote}. The rules (docs/subscription-options.md, "Field paths"):
 * <ul>
 *   <li>segments separated by {@code .}, each non-empty;</li>
 *   <li>a segment holds ASCII letters and digits, {@code _ - $ @}, and non-ASCII letters, digits
 *       and combining marks; nothing else, so that a filter can write a path without quotes and a
 *       projection can write a key without escapes. A key holding any other character (a
 *       {@code .}, a space, a quote, a {@code /}...) cannot be addressed: there is no escape;</li>
 *   <li>at most {@link #MAX_DEPTH} segments and {@link #MAX_LENGTH} characters (UTF-16 code units).</li>
 * </ul>
 * A segment matches a key exactly: case-sensitive, no Unicode normalisation, and the key as JSON
 * decodes it (a key written with escapes matches what they stand for). A path does not go into arrays: when a path's
 * segment meets an array, the field is missing.
 *
 * <p>Immutable; any thread.
 */
final class FieldPath {
    static final int MAX_DEPTH = 8;
    static final int MAX_LENGTH = 256;

    private final String text;
    private final String[] segments;

    private FieldPath(String text) {
        this.text = text;
        List<String> parts = new ArrayList<>(MAX_DEPTH);
        int start = 0;
        for (int dot = text.indexOf('.'); dot >= 0; dot = text.indexOf('.', start)) {
            parts.add(text.substring(start, dot));
            start = dot + 1;
        }
        parts.add(text.substring(start));
        this.segments = parts.toArray(new String[0]);
    }

    /**
     * The path {@code text} names, for the {@code fields} option.
     *
     * @throws InvalidOptionsException ({@code fields}) naming the rule {@code text} breaks
     */
    static FieldPath parse(String text) {
        String problem = problem(text);
        if (problem != null) {
            throw new InvalidOptionsException(InvalidOptionsException.FIELDS, problem);
        }
        return new FieldPath(text);
    }

    /** The path {@code text} names, which {@link #problem} found valid: for a caller with its own message. */
    static FieldPath ofValid(String text) {
        assert problem(text) == null : text;
        return new FieldPath(text);
    }

    /**
     * What is wrong with {@code text} as a path, for a message (e.g. {@code empty segment in path 'a..b'});
     * null when it is a valid path.
     */
    static String problem(String text) {
        if (text == null || text.isEmpty()) {
            return "empty path";
        }
        if (text.length() > MAX_LENGTH) {
            return "path " + InvalidOptionsException.quote(text) + " is longer than " + MAX_LENGTH + " characters";
        }
        int depth = 1;
        boolean segmentEmpty = true;
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            if (c == '.') {
                if (segmentEmpty) {
                    return "empty segment in path " + InvalidOptionsException.quote(text);
                }
                segmentEmpty = true;
                depth++;
            } else if (isSegmentChar(c)) {
                segmentEmpty = false;
            } else {
                return "character " + InvalidOptionsException.describe(c) + " is not allowed in path "
                        + InvalidOptionsException.quote(text);
            }
            i += Character.charCount(c);
        }
        if (segmentEmpty) {
            return "empty segment in path " + InvalidOptionsException.quote(text);
        }
        if (depth > MAX_DEPTH) {
            return "path " + InvalidOptionsException.quote(text) + " is deeper than " + MAX_DEPTH + " segments";
        }
        return null;
    }

    /** Whether a segment may hold {@code codePoint} (the class javadoc's second rule). */
    static boolean isSegmentChar(int codePoint) {
        if (codePoint < 0x80) {
            return codePoint >= 'a' && codePoint <= 'z' || codePoint >= 'A' && codePoint <= 'Z'
                    || codePoint >= '0' && codePoint <= '9'
                    || codePoint == '_' || codePoint == '-' || codePoint == '$' || codePoint == '@';
        }
        int type = Character.getType(codePoint);
        return Character.isLetterOrDigit(codePoint)
                || type == Character.NON_SPACING_MARK || type == Character.COMBINING_SPACING_MARK;
    }

    /** The path as written, e.g. {@code quote.bid}. */
    String text() {
        return text;
    }

    int depth() {
        return segments.length;
    }

    /** Segment {@code i}, from 0 (the root object's key). */
    String segment(int i) {
        return segments[i];
    }

    /** Whether this path names a field inside the one {@code outer} names: {@code quote.bid} is inside {@code quote}. */
    boolean isInside(FieldPath outer) {
        if (outer.segments.length >= segments.length) {
            return false;
        }
        for (int i = 0; i < outer.segments.length; i++) {
            if (!outer.segments[i].equals(segments[i])) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FieldPath && ((FieldPath) o).text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
