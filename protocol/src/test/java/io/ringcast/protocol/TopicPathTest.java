package io.ringcast.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopicPathTest {
    private static final PathLimits LIMITS = PathLimits.DEFAULT;

    private static ProtocolException invalid(String path, PathLimits limits) {
        try {
            TopicPath.validate(path, limits);
        } catch (ProtocolException e) {
            assertThat(TopicPath.isValid(path, limits)).as("isValid agrees with validate").isFalse();
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PATH);
            return e;
        }
        throw new AssertionError("path '" + path + "' was accepted");
    }

    private static ProtocolException invalid(String path) {
        return invalid(path, LIMITS);
    }

    private static String[] segments(int n) {
        String[] s = new String[n];
        for (int i = 0; i < n; i++) {
            s[i] = "s" + i;
        }
        return s;
    }

    // ---------------------------------------------------------------- valid paths

    @ParameterizedTest
    @ValueSource(strings = {"fx", "fx/EURUSD/bid", "a", "a-b_c.d:e@f=g%h", "x/1/2/3", "météo/zürich",
            "株価/東京", "🚀/launch", "a*b/?!"})
    void validPathsAreAccepted(String path) throws ProtocolException {
        assertThat(TopicPath.validate(path, LIMITS)).containsExactly(path.split("/"));
        assertThat(TopicPath.isValid(path, LIMITS)).isTrue();
    }

    @Test
    void singleSegmentPathHasOneSegment() throws ProtocolException {
        assertThat(TopicPath.validate("fx", LIMITS)).containsExactly("fx");
    }

    @Test
    void pathOfExactlyMaxPathBytesAsciiIsAccepted() {
        assertThat(TopicPath.isValid("a".repeat(256), LIMITS)).isTrue();
        assertThat(TopicPath.isValid("a/".repeat(15) + "b".repeat(226), LIMITS)).isTrue(); // 256 bytes, 16 segments
    }

    @Test
    void depthIsCheckedEvenWhenBytesFit() {
        assertThat(invalid("a/".repeat(127) + "bc").reason()).contains("128 segments, more than the limit of 16");
    }

    @ParameterizedTest
    @ValueSource(strings = {"é", "€", "🚀"})
    void bytesAreCountedAsUtf8NotAsChars(String ch) {
        int bytesEach = ch.getBytes(StandardCharsets.UTF_8).length; // 2, 3, 4
        int fit = 256 / bytesEach;
        String atLimit = ch.repeat(fit) + "a".repeat(256 - fit * bytesEach);
        String overLimit = ch.repeat(fit + 1);

        assertThat(atLimit.getBytes(StandardCharsets.UTF_8)).hasSize(256);
        assertThat(TopicPath.isValid(atLimit, LIMITS)).isTrue();
        assertThat(overLimit.length()).as("chars (UTF-16 units)").isLessThanOrEqualTo(256);
        assertThat(invalid(overLimit).reason())
                .contains((fit + 1) * bytesEach + " bytes, more than the limit of 256");
    }

    @Test
    void pathOfExactlyMaxPathDepthIsAccepted() throws ProtocolException {
        assertThat(TopicPath.validate(String.join("/", segments(16)), LIMITS)).hasSize(16);
    }

    @Test
    void customLimitsApply() {
        PathLimits tight = new PathLimits(5, 2);

        assertThat(TopicPath.isValid("ab/cd", tight)).isTrue();
        assertThat(invalid("ab/cde", tight).reason()).contains("6 bytes, more than the limit of 5");
        assertThat(invalid("a/b/c", tight).reason()).contains("3 segments, more than the limit of 2");
    }

    // ---------------------------------------------------------------- each rule, with its reason

    static Stream<Arguments> invalidPaths() {
        return Stream.of(
                Arguments.of("", "invalid path '': must not be empty"),
                Arguments.of("/", "invalid path '/': empty segment at index 0"),
                Arguments.of("/fx", "invalid path '/fx': empty segment at index 0 (leading, trailing or double '/')"),
                Arguments.of("fx/", "invalid path 'fx/': empty segment at index 3"),
                Arguments.of("fx//bid", "invalid path 'fx//bid': empty segment at index 3"),
                Arguments.of("fx/+/bid", "invalid path 'fx/+/bid': '+' is a wildcard, allowed only in selectors"),
                Arguments.of("fx/#", "invalid path 'fx/#': '#' is a wildcard, allowed only in selectors"),
                Arguments.of("fx+", "invalid path 'fx+': '+' is a wildcard"),
                Arguments.of("c#/x", "invalid path 'c#/x': '#' is a wildcard"),
                Arguments.of("fx/EUR USD", "invalid path 'fx/EUR\\u0020USD': whitespace or control character U+0020 at index 6"),
                Arguments.of("fx\tbid", "whitespace or control character U+0009 at index 2"),
                Arguments.of("fx/\u00A0", "whitespace or control character U+00A0 at index 3"), // no-break space
                Arguments.of("fx\u2003x", "whitespace or control character U+2003 at index 2"), // em space
                Arguments.of("fx\u3000x", "whitespace or control character U+3000 at index 2"), // ideographic space
                Arguments.of("fx\u2028x", "whitespace or control character U+2028 at index 2"), // line separator
                Arguments.of("fx\nbid", "invalid path 'fx\\u000Abid': whitespace or control character U+000A"),
                Arguments.of("fx\u0000", "whitespace or control character U+0000 at index 2"),
                Arguments.of("fx\u007F", "whitespace or control character U+007F at index 2"),
                Arguments.of("fx\u0085", "whitespace or control character U+0085 at index 2"),
                Arguments.of("fx\uD800x", "unpaired surrogate at index 2"),
                Arguments.of("x\uDC00", "unpaired surrogate at index 1"));
    }

    @ParameterizedTest
    @MethodSource("invalidPaths")
    void eachRuleIsRefusedWithItsReason(String path, String reason) {
        assertThat(invalid(path).reason()).contains(reason);
    }

    @Test
    void nullPathIsRefusedAsEmpty() {
        assertThat(invalid(null).reason()).contains("must not be empty");
    }

    @Test
    void tooManyBytesNamesThePathAbbreviated() {
        String path = "fx/" + "a".repeat(300);

        String reason = invalid(path).reason();

        assertThat(reason).contains("'fx/aaaa", "...'", "303 bytes, more than the limit of 256");
        assertThat(reason.length()).isLessThan(200);
    }

    @Test
    void tooDeepNamesDepthAndLimit() {
        String path = String.join("/", segments(17));

        assertThat(invalid(path).reason()).contains("'" + path + "'", "17 segments, more than the limit of 16");
    }

    @Test
    void pathLimitsRefuseNonsense() {
        assertThatThrownBy(() -> new PathLimits(0, 16)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPathBytes");
        assertThatThrownBy(() -> new PathLimits(65_536, 16)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPathBytes");
        assertThatThrownBy(() -> new PathLimits(256, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPathDepth");
        assertThat(new PathLimits(65_535, 1).maxPathBytes()).isEqualTo(65_535);
    }
}
