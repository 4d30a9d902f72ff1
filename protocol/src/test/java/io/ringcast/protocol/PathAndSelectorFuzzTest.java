package io.ringcast.protocol;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.charset.StandardCharsets;

import static io.ringcast.protocol.WireCodecFuzzTest.check;

/**
 * Fuzzes the topic path and selector parsers with arbitrary text. Each input is read twice: as
 * UTF-8 (what arrives in a frame; seeds are plain text) and as UTF-16BE (any Java string, unpaired
 * surrogates included), each under the default limits and under small ones. Seeds and crashes are
 * under {@code src/test/resources/io/ringcast/protocol/PathAndSelectorFuzzTestInputs/<method>/}.
 */
class PathAndSelectorFuzzTest {
    private static final PathLimits SMALL = new PathLimits(24, 3);

    /**
     * Any text is a valid path (whose segments join back to it, within the limits) or an
     * {@code INVALID_PATH} with a reason; and a valid path parses as an exact selector that matches it.
     */
    @FuzzTest(maxDuration = "2m")
    void anyTextIsAPathMatchedByItsOwnSelectorOrAnInvalidPath(byte[] input) {
        for (String text : texts(input)) {
            checkPath(text, PathLimits.DEFAULT);
            checkPath(text, SMALL);
        }
    }

    /**
     * Any text is a valid selector (wildcards only as whole segments, {@code #} only last, within
     * the limits) or an {@code INVALID_SELECTOR} with a reason.
     */
    @FuzzTest(maxDuration = "2m")
    void anyTextIsASelectorOrAnInvalidSelector(byte[] input) {
        for (String text : texts(input)) {
            checkSelector(text, PathLimits.DEFAULT);
            checkSelector(text, SMALL);
        }
    }

    private static String[] texts(byte[] input) {
        return new String[] {new String(input, StandardCharsets.UTF_8), new String(input, StandardCharsets.UTF_16BE)};
    }

    private static void checkPath(String text, PathLimits limits) {
        String[] segments;
        try {
            segments = TopicPath.validate(text, limits);
        } catch (ProtocolException e) {
            check(e.code() == ErrorCode.INVALID_PATH, "path refused with " + e.code());
            check(e.reason() != null && !e.reason().isBlank(), "INVALID_PATH without a reason");
            check(!TopicPath.isValid(text, limits), "isValid disagrees with validate");
            return;
        }
        check(String.join("/", segments).equals(text), "segments do not join back to the path");
        check(segments.length <= limits.maxPathDepth(), segments.length + " segments passed the depth limit");
        check(text.getBytes(StandardCharsets.UTF_8).length <= limits.maxPathBytes(), "a path over the byte limit");
        for (String s : segments) {
            check(!s.isEmpty(), "an empty segment");
            check(s.indexOf('+') < 0 && s.indexOf('#') < 0, "a wildcard in a valid path");
        }
        Selector selector;
        try {
            selector = Selector.parse(text, limits);
        } catch (ProtocolException e) {
            throw new AssertionError("valid path '" + text + "' is refused as a selector: " + e.reason());
        }
        check(selector.isExact(), "a valid path parsed as a wildcard selector");
        check(selector.depth() == segments.length, "selector depth differs from path depth");
        check(selector.matches(text), "the selector of path '" + text + "' does not match it");
        check(selector.matches(segments), "the selector of path '" + text + "' does not match its segments");
    }

    private static void checkSelector(String text, PathLimits limits) {
        Selector selector;
        try {
            selector = Selector.parse(text, limits);
        } catch (ProtocolException e) {
            check(e.code() == ErrorCode.INVALID_SELECTOR, "selector refused with " + e.code());
            check(e.reason() != null && !e.reason().isBlank(), "INVALID_SELECTOR without a reason");
            return;
        }
        check(selector.text().equals(text), "the selector's text differs from its input");
        check(selector.depth() >= 1 && selector.depth() <= limits.maxPathDepth(), "depth " + selector.depth());
        boolean wildcard = false;
        for (int i = 0; i < selector.depth(); i++) {
            String s = selector.segment(i);
            check(!s.isEmpty(), "an empty segment");
            if (s.equals(Selector.ONE_SEGMENT) || s.equals(Selector.SUBTREE)) {
                wildcard = true;
                check(!s.equals(Selector.SUBTREE) || i == selector.depth() - 1, "'#' before the last segment");
            } else {
                check(s.indexOf('+') < 0 && s.indexOf('#') < 0, "a wildcard inside segment '" + s + "'");
            }
        }
        check(selector.isExact() == !wildcard, "isExact() is " + selector.isExact() + " for '" + text + "'");
        if (selector.isExact()) {
            check(TopicPath.isValid(text, limits), "an exact selector that is not a valid path: '" + text + "'");
            check(selector.matches(text), "exact selector '" + text + "' does not match its own path");
        }
    }
}
