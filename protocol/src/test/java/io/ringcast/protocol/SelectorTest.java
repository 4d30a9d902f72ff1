package io.ringcast.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class SelectorTest {
    private static final PathLimits LIMITS = PathLimits.DEFAULT;

    private static Selector parse(String text) {
        try {
            return Selector.parse(text, LIMITS);
        } catch (ProtocolException e) {
            throw new AssertionError("selector '" + text + "' refused: " + e.reason(), e);
        }
    }

    private static ProtocolException invalid(String text, PathLimits limits) {
        try {
            Selector.parse(text, limits);
        } catch (ProtocolException e) {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SELECTOR);
            return e;
        }
        throw new AssertionError("selector '" + text + "' was accepted");
    }

    private static boolean matches(String selector, String path) {
        return parse(selector).matches(path);
    }

    // ---------------------------------------------------------------- matching

    @ParameterizedTest(name = "{0} matches {1}")
    @CsvSource({
            "fx/EURUSD/bid, fx/EURUSD/bid",
            "fx,            fx",
            "fx/+/bid,      fx/EURUSD/bid",
            "fx/+/bid,      fx/GBPUSD/bid",
            "+,             fx",
            "+/+,           fx/EURUSD",
            "+/EURUSD/+,    fx/EURUSD/ask",
            "fx/#,          fx",
            "fx/#,          fx/EURUSD",
            "fx/#,          fx/EURUSD/bid",
            "#,             fx",
            "#,             fx/EURUSD/bid",
            "#,             a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
            "+/#,           fx",
            "+/#,           fx/EURUSD/bid",
            "fx/+/#,        fx/EURUSD",
            "fx/+/#,        fx/EURUSD/bid/level/1",
            "météo/+,       météo/zürich",
    })
    void selectorMatchesPath(String selector, String path) {
        assertThat(matches(selector, path)).isTrue();
    }

    @ParameterizedTest(name = "{0} does not match {1}")
    @CsvSource({
            "fx/EURUSD/bid, fx/EURUSD/ask",
            "fx/EURUSD/bid, fx/EURUSD",         // the path is a prefix of the selector
            "fx/EURUSD,     fx/EURUSD/bid",     // the selector is a prefix of the path, without '#'
            "fx/EUR,        fx/EURUSD",         // segment prefix
            "fx/EURUSD,     FX/EURUSD",         // case matters
            "fx/+/bid,      fx/bid",            // '+' is exactly one segment, not zero
            "fx/+/bid,      fx/EURUSD/spot/bid", // nor two
            "fx/+/bid,      fx/EURUSD/ask",
            "+,             fx/EURUSD",
            "+/+,           fx",
            "fx/#,          fxx",
            "fx/#,          f",
            "fx/#,          eq/fx",
            "fx/#,          fy/EURUSD",
            "fx/+/#,        fx",                // '#' stands for its parent, '+' still needs a segment
            "fx/EURUSD/#,   fx",
    })
    void selectorDoesNotMatchPath(String selector, String path) {
        assertThat(matches(selector, path)).isFalse();
    }

    @Test
    void subtreeMatchesItsParentTopic() {
        assertThat(matches("fx/#", "fx")).isTrue();
    }

    @Test
    void hashAloneMatchesEveryTopic() throws ProtocolException {
        Selector all = parse("#");

        for (String path : PATHS) {
            assertThat(all.matches(path)).as(path).isTrue();
            assertThat(all.matches(TopicPath.validate(path, LIMITS))).as(path).isTrue();
        }
    }

    @Test
    void plusMatchesExactlyOneSegment() {
        Selector s = parse("fx/+");

        assertThat(s.matches("fx")).isFalse();
        assertThat(s.matches("fx/a")).isTrue();
        assertThat(s.matches("fx/a/b")).isFalse();
    }

    // ---------------------------------------------------------------- matches(String) vs matches(String[])

    private static final List<String> SELECTORS = List.of("#", "+", "+/#", "+/+", "fx", "fx/#", "fx/+",
            "fx/+/#", "fx/+/bid", "fx/EURUSD", "fx/EURUSD/bid", "fx/EURUSD/#", "+/EURUSD/+", "+/+/+/+", "eq/#");

    private static final List<String> PATHS = List.of("fx", "eq", "fx/EURUSD", "fx/EURUSD/bid", "fx/EURUSD/ask",
            "fx/GBPUSD/bid", "fx/EURUSD/bid/l2", "eq/EURUSD/bid", "fxx/EURUSD", "a/b/c/d/e", "株価/東京");

    /** The MQTT rule written the obvious way, recursively, as the reference for the codec's loop. */
    private static boolean reference(String[] sel, int i, String[] path, int j) {
        if (i == sel.length) {
            return j == path.length;
        }
        if (sel[i].equals("#")) {
            return true; // the parent (j == path.length) or anything below
        }
        if (j == path.length) {
            return false;
        }
        return (sel[i].equals("+") || sel[i].equals(path[j])) && reference(sel, i + 1, path, j + 1);
    }

    static Stream<Arguments> selectorPathGrid() {
        List<Arguments> grid = new ArrayList<>();
        for (String s : SELECTORS) {
            for (String p : PATHS) {
                grid.add(Arguments.of(s, p));
            }
        }
        return grid.stream();
    }

    @ParameterizedTest(name = "{0} ~ {1}")
    @MethodSource("selectorPathGrid")
    void matchesOfStringAndOfSegmentsAgreeWithTheMqttRule(String selector, String path) throws ProtocolException {
        Selector s = parse(selector);
        String[] segments = TopicPath.validate(path, LIMITS);
        boolean expected = reference(selector.split("/"), 0, path.split("/"), 0);

        assertThat(s.matches(path)).as("matches(String)").isEqualTo(expected);
        assertThat(s.matches(segments)).as("matches(String[])").isEqualTo(expected);
    }

    // ---------------------------------------------------------------- parsing

    @Test
    void exactSelectorHasNoWildcard() {
        Selector s = parse("fx/EURUSD/bid");

        assertThat(s.isExact()).isTrue();
        assertThat(s.depth()).isEqualTo(3);
        assertThat(s.segment(1)).isEqualTo("EURUSD");
        assertThat(s.text()).isEqualTo("fx/EURUSD/bid");
        assertThat(s.toString()).isEqualTo("fx/EURUSD/bid");
    }

    @Test
    void wildcardSegmentsAreTheSharedConstants() {
        Selector s = parse("fx/+/bid/#");

        assertThat(s.isExact()).isFalse();
        assertThat(s.depth()).isEqualTo(4);
        assertThat(s.segment(1)).isSameAs(Selector.ONE_SEGMENT);
        assertThat(s.segment(3)).isSameAs(Selector.SUBTREE);
    }

    @Test
    void selectorsAtExactLimitsAreAccepted() throws ProtocolException {
        Selector deep = Selector.parse(String.join("/", Collections.nCopies(16, "+")), LIMITS);
        Selector wide = Selector.parse("a".repeat(254) + "/#", LIMITS);

        assertThat(deep.depth()).isEqualTo(16);
        assertThat(wide.depth()).isEqualTo(2);
    }

    static Stream<Arguments> invalidSelectors() {
        return Stream.of(
                Arguments.of("#/fx", "invalid selector '#/fx': '#' must be the last segment"),
                Arguments.of("fx/#/bid", "invalid selector 'fx/#/bid': '#' must be the last segment"),
                Arguments.of("#/#", "'#' must be the last segment"),
                Arguments.of("a+", "invalid selector 'a+': segment 'a+' mixes a wildcard with other characters"),
                Arguments.of("fx/+bid", "segment '+bid' mixes a wildcard"),
                Arguments.of("#b", "segment '#b' mixes a wildcard"),
                Arguments.of("fx/a#", "segment 'a#' mixes a wildcard"),
                Arguments.of("++", "segment '++' mixes a wildcard"),
                Arguments.of("fx/+#", "segment '+#' mixes a wildcard"),
                Arguments.of("", "invalid selector '': must not be empty"),
                Arguments.of("/", "invalid selector '/': empty segment at index 0"),
                Arguments.of("/fx/#", "invalid selector '/fx/#': empty segment at index 0"),
                Arguments.of("fx/", "invalid selector 'fx/': empty segment at index 3"),
                Arguments.of("fx//#", "invalid selector 'fx//#': empty segment at index 3"),
                Arguments.of("fx/ +", "whitespace or control character U+0020 at index 3"),
                Arguments.of("a".repeat(255) + "/#", "257 bytes, more than the limit of 256"),
                Arguments.of(String.join("/", Collections.nCopies(17, "+")),
                        "17 segments, more than the limit of 16"));
    }

    @ParameterizedTest
    @MethodSource("invalidSelectors")
    void invalidSelectorIsRefusedWithItsReason(String text, String reason) {
        assertThat(invalid(text, LIMITS).reason()).contains(reason);
    }

    @Test
    void customLimitsApplyToSelectors() {
        PathLimits tight = new PathLimits(4, 2);

        assertThat(invalid("+/+/#", new PathLimits(10, 2)).reason()).contains("3 segments, more than the limit of 2");
        assertThat(invalid("abc/#", tight).reason()).contains("5 bytes, more than the limit of 4");
    }

    // ---------------------------------------------------------------- equality

    @Test
    void selectorsParsedFromTheSameTextAreEqual() {
        Selector a = parse("fx/+/bid/#");
        Selector b = parse("fx/+/bid/#");

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a).isEqualTo(a);
    }

    @Test
    void differentSelectorsAreNotEqual() {
        Selector s = parse("fx/+");

        assertThat(s).isNotEqualTo(parse("fx/#"));
        assertThat(s).isNotEqualTo(parse("fx/EURUSD"));
        assertThat(s).isNotEqualTo(parse("fx/+/+"));
        assertThat(s).isNotEqualTo(parse("+/fx"));
        assertThat(s).isNotEqualTo("fx/+");
        assertThat(s).isNotEqualTo(null);
    }
}
