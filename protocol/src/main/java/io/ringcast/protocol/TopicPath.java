package io.ringcast.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * Rules for topic paths: {@code /}-separated, non-empty segments of any Unicode characters but
 * {@code /}, {@code +}, {@code #}, whitespace and control characters, within {@link PathLimits}.
 * Stateless; safe from any thread.
 */
public final class TopicPath {
    public static final char SEPARATOR = '/';

    private TopicPath() {
    }

    /**
     * Checks a path and returns its segments.
     *
     * @throws ProtocolException with {@link ErrorCode#INVALID_PATH} and a reason naming the rule broken
     */
    public static String[] validate(String path, PathLimits limits) throws ProtocolException {
        return split(path, limits, false, ErrorCode.INVALID_PATH, "path");
    }

    /** Whether {@code path} is a valid topic path under {@code limits}. */
    public static boolean isValid(String path, PathLimits limits) {
        try {
            validate(path, limits);
            return true;
        } catch (ProtocolException e) {
            return false;
        }
    }

    /**
     * Splits and checks a path or, with {@code wildcards}, a selector whose {@code +} and {@code #}
     * segments are left for the caller to judge.
     */
    static String[] split(String text, PathLimits limits, boolean wildcards, ErrorCode error, String what)
            throws ProtocolException {
        if (text == null || text.isEmpty()) {
            throw new ProtocolException(error, "invalid " + what + " '': must not be empty");
        }
        List<String> segments = new ArrayList<>(8);
        int utf8Bytes = 0;
        int segmentStart = 0;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            int next = i + Character.charCount(cp);
            if (cp == SEPARATOR) {
                addSegment(text, segmentStart, i, segments, error, what);
                segmentStart = next;
            } else if (!wildcards && (cp == '+' || cp == '#')) {
                throw new ProtocolException(error, "invalid " + what + " '" + text + "': '" + (char) cp
                        + "' is a wildcard, allowed only in selectors");
            } else if (Character.isWhitespace(cp) || Character.isSpaceChar(cp) || Character.isISOControl(cp)) {
                throw new ProtocolException(error, "invalid " + what + " '" + printable(text) + "': "
                        + "whitespace or control character U+" + String.format("%04X", cp) + " at index " + i);
            } else if (Character.isSurrogate(text.charAt(i)) && Character.charCount(cp) == 1) {
                throw new ProtocolException(error, "invalid " + what + ": unpaired surrogate at index " + i);
            }
            utf8Bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            i = next;
        }
        addSegment(text, segmentStart, text.length(), segments, error, what);
        if (utf8Bytes > limits.maxPathBytes()) {
            throw new ProtocolException(error, "invalid " + what + " '" + abbreviate(text) + "': " + utf8Bytes
                    + " bytes, more than the limit of " + limits.maxPathBytes());
        }
        if (segments.size() > limits.maxPathDepth()) {
            throw new ProtocolException(error, "invalid " + what + " '" + abbreviate(text) + "': " + segments.size()
                    + " segments, more than the limit of " + limits.maxPathDepth());
        }
        return segments.toArray(new String[0]);
    }

    private static void addSegment(String text, int from, int to, List<String> segments, ErrorCode error,
                                   String what) throws ProtocolException {
        if (from == to) {
            throw new ProtocolException(error, "invalid " + what + " '" + abbreviate(text)
                    + "': empty segment at index " + from + " (leading, trailing or double '/')");
        }
        segments.add(text.substring(from, to));
    }

    private static String abbreviate(String text) {
        return text.length() <= 80 ? text : text.substring(0, 77) + "...";
    }

    private static String printable(String text) {
        StringBuilder sb = new StringBuilder();
        abbreviate(text).codePoints().forEach(cp -> {
            if (Character.isISOControl(cp) || Character.isWhitespace(cp)) {
                sb.append(String.format("\\u%04X", cp));
            } else {
                sb.appendCodePoint(cp);
            }
        });
        return sb.toString();
    }
}
