package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.StringJoiner;

import static io.ringcast.server.internal.JsonValueFixtures.matches;
import static io.ringcast.server.internal.JsonValueFixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ValueFilter}: the grammar (precedence, spacing, keywords), every refusal with its exact
 * message and column, each limit at and past its edge, and the semantics: missing fields, type
 * mismatches, nested paths, {@code in} with mixed types, numbers, strings, values that are not
 * objects or not JSON. Every row of the doc's semantics and error tables is held against the code.
 */
@Timeout(10)
class ValueFilterTest {

    private static boolean matchesValue(String filter, String json) {
        return matches(ValueFilter.parse(filter), json);
    }

    private static void assertRefused(String filter, String message) {
        assertThatThrownBy(() -> ValueFilter.parse(filter))
                .isInstanceOf(InvalidOptionsException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((InvalidOptionsException) e).option()).isEqualTo("filter"));
    }

    // ---- the documented tables ----

    static List<List<String>> documentedSemantics() {
        return SubscriptionOptionsDoc.table("| filter | value | matches |");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedSemantics")
    void everyRowOfTheDocumentedSemanticsTableHolds(List<String> row) {
        assertThat(row.get(2)).isIn("yes", "no");

        assertThat(matchesValue(row.get(0), row.get(1))).isEqualTo(row.get(2).equals("yes"));
    }

    static List<List<String>> documentedRefusals() {
        return SubscriptionOptionsDoc.table("| filter | message |");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedRefusals")
    void everyDocumentedRefusalIsTheMessageGiven(List<String> row) {
        assertRefused(row.get(0), row.get(1));
    }

    @Test
    void theDocumentsExamplesParse() {
        for (String example : List.of("spread < 0.0005", "symbol in ['EURUSD', 'GBPUSD']",
                "spread < 0.0005 and venue in ['LSE', 'XETRA']", "quote.bid >= 1.08 and not (halted = true)",
                "(side = 'buy' or side = \"sell\") and size > 1e6")) {
            assertThat(ValueFilter.parse(example).text()).isEqualTo(example);
        }
        assertThat(matchesValue("spread < 0.0005 and venue in ['LSE', 'XETRA']", "{\"venue\":\"XETRA\",\"spread\":0.0001}"))
                .isTrue();
    }

    // ---- grammar ----

    @Test
    void notBindsTighterThanAndWhichBindsTighterThanOr() {
        assertThat(ValueFilter.parse("a = 1 or b = 2 and c = 3").structure()).isEqualTo("(a = 1 or (b = 2 and c = 3))");
        assertThat(ValueFilter.parse("a = 1 and b = 2 or c = 3").structure()).isEqualTo("((a = 1 and b = 2) or c = 3)");
        assertThat(ValueFilter.parse("not a = 1 and b = 2").structure()).isEqualTo("(not a = 1 and b = 2)");
        assertThat(ValueFilter.parse("not not a = 1").structure()).isEqualTo("not not a = 1");
        assertThat(ValueFilter.parse("a = 1 or b = 2 or c = 3 and d = 4 and e = 5").structure())
                .isEqualTo("(a = 1 or b = 2 or (c = 3 and d = 4 and e = 5))");
    }

    @Test
    void parenthesesGroup() {
        assertThat(ValueFilter.parse("(a = 1 or b = 2) and c = 3").structure()).isEqualTo("((a = 1 or b = 2) and c = 3)");
        assertThat(ValueFilter.parse("not (a = 1 or b = 2)").structure()).isEqualTo("not (a = 1 or b = 2)");
        assertThat(ValueFilter.parse("((((a = 1))))").structure()).isEqualTo("a = 1");
    }

    @Test
    void literalsAreReadAsWritten() {
        assertThat(ValueFilter.parse("x in [1, -0.5e-3, 'a', \"b\", true, false, null, 'it\\'s', \"\\u00e9\\n\"]").structure())
                .isEqualTo("x in [1, -0.5e-3, 'a', 'b', true, false, null, 'it's', 'é\n']");
        assertThat(ValueFilter.parse("x = \"say \\\"hi\\\" \\/ \\\\\"").structure()).isEqualTo("x = 'say \"hi\" / \\'");
    }

    @Test
    void spacesTabsAndLineBreaksMayStandBetweenTokensOrNowhere() {
        assertThat(ValueFilter.parse("a=1 and(b!='x'or not(c<=2))").structure())
                .isEqualTo("(a = 1 and (b != 'x' or not c <= 2))");
        assertThat(ValueFilter.parse("x in['a','b']").structure()).isEqualTo("x in ['a', 'b']");
        assertThat(ValueFilter.parse("\t a\n>=\r\n-1 \n").structure()).isEqualTo("a >= -1");
    }

    @Test
    void aPathMayStartWithAKeywordOrADigitOrADash() {
        assertThat(ValueFilter.parse("notional > 5 or order = 1 and android = 2 or index in [1] or nullable = true")
                .structure()).isEqualTo("(notional > 5 or (order = 1 and android = 2) or index in [1] or nullable = true)");
        assertThat(ValueFilter.parse("in.x = 1 and 24h.vol > 0 and -x = 1").structure())
                .isEqualTo("(in.x = 1 and 24h.vol > 0 and -x = 1)");
        assertThat(matchesValue("24h.vol > 0", "{\"24h\":{\"vol\":5}}")).isTrue();
    }

    @Test
    void aKeywordNeedsNoSpaceAfterAQuotedStringOrAParenthesis() {
        assertThat(ValueFilter.parse("a = 'x'and b = 1").structure()).isEqualTo("(a = 'x' and b = 1)");
        assertThat(ValueFilter.parse("(a = 1)or(b = 1)").structure()).isEqualTo("(a = 1 or b = 1)");
        assertRefused("a = 1and b = 1", "filter: bad number '1and' at column 5");
    }

    // ---- refusals that do not fit in the doc's table ----

    @Test
    void anEmptyOrBlankFilterIsRefused() {
        assertRefused("", "filter: empty");
        assertRefused(" \t\n", "filter: empty");
        assertRefused(null, "filter: empty");
    }

    @Test
    void columnsCountCodePointsFromOne() {
        assertRefused("s = '😀' x", "filter: expected 'and', 'or' or the end at column 9");
        assertRefused("s = '😀😀' x", "filter: expected 'and', 'or' or the end at column 10");
    }

    @Test
    void anUnterminatedStringIsReportedAtItsOpeningQuoteEvenAfterAnEscape() {
        assertRefused("x = \"abc", "filter: unterminated string at column 5");
        assertRefused("x = 'abc\\'", "filter: unterminated string at column 5");
        assertRefused("x = 'abc\\", "filter: unterminated string at column 5");
        assertRefused("x in ['a', 'b]", "filter: unterminated string at column 12");
    }

    @Test
    void aBadUnicodeEscapeNamesWhatWasRead() {
        assertRefused("x = '\\uZZZZ'", "filter: bad escape '\\u' (\\u takes 4 hex digits) at column 6");
        assertRefused("x = '\\u00e'", "filter: bad escape '\\u00e' (\\u takes 4 hex digits) at column 6");
        assertRefused("x = '\\u00", "filter: bad escape '\\u00' (\\u takes 4 hex digits) at column 6");
    }

    @Test
    void badNumbersAreRefusedWithTheirText() {
        for (String bad : List.of("+1", "-", "1.2.3", "1e", "1e+", "--1", "0x10", "1_000", "-01", ".5", "1.e3", "Infinity")) {
            String expected = bad.startsWith("+") || bad.startsWith("I")
                    ? "filter: expected a literal after '='" : "filter: bad number '" + bad + "'";
            assertThatThrownBy(() -> ValueFilter.parse("x = " + bad)).as(bad)
                    .isInstanceOf(InvalidOptionsException.class).hasMessageStartingWith(expected);
        }
        assertThat(ValueFilter.parse("x = 1e999999999").structure()).isEqualTo("x = 1e999999999");
        assertThat(ValueFilter.parse("x = 1e-000000000999999999").structure()).as("leading zeros of an exponent do not count")
                .isEqualTo("x = 1e-000000000999999999");
    }

    @Test
    void aLongFilterIsQuotedCutInAMessage() {
        String path = "p".repeat(50);
        assertRefused(path + " ! 1", "filter: unknown operator '!' (use = != < <= > >= or in) at column 52");
        assertRefused(path + " 1", "filter: expected a comparison operator after '" + "p".repeat(40) + "...' at column 52");
    }

    // ---- limits, at and past each edge ----

    @Test
    void atMost1024CharactersAreAccepted() {
        String atLimit = "x = '" + "a".repeat(ValueFilter.MAX_TEXT_LENGTH - 6) + "'";
        assertThat(atLimit).hasSize(1024);
        assertThat(ValueFilter.parse(atLimit).text()).isEqualTo(atLimit);

        assertRefused(atLimit + " ", "filter: longer than 1024 characters (1025)");
    }

    @Test
    void atMost32ComparisonsAreAcceptedAndTheThirtyThirdIsRefusedAtItsColumn() {
        StringJoiner filter = new StringJoiner(" or ");
        for (int i = 0; i < ValueFilter.MAX_COMPARISONS; i++) {
            filter.add("c" + i + " = " + i);
        }
        String atLimit = filter.toString();
        ValueFilter f = ValueFilter.parse(atLimit);
        assertThat(matches(f, "{\"c31\":31}")).isTrue();
        assertThat(matches(f, "{\"c0\":0}")).isTrue();
        assertThat(matches(f, "{\"c31\":0}")).isFalse();

        String over = atLimit + " or x in [1]";
        assertRefused(over, "filter: more than 32 comparisons at column " + (atLimit.length() + 5));
    }

    @Test
    void comparisonsOnTheSamePathAllCount() {
        String filter = "x = 1 or ".repeat(32) + "x = 2";
        assertRefused(filter, "filter: more than 32 comparisons at column " + (32 * 9 + 1));
        assertThat(matchesValue("x > 1 and x < 3 and x != 2.5 and x in [2, 3]", "{\"x\":2}")).isTrue();
    }

    @Test
    void nestingOf16ParenthesesAndNotsIsAcceptedAnd17Refused() {
        assertThat(ValueFilter.parse("(".repeat(16) + "a = 1" + ")".repeat(16)).structure()).isEqualTo("a = 1");
        assertThat(matches(ValueFilter.parse("not ".repeat(16) + "a = 1"), "{\"a\":1}")).isTrue();
        assertThat(matches(ValueFilter.parse("not (".repeat(8) + "a = 1" + ")".repeat(8)), "{\"a\":1}")).isTrue();

        assertRefused("(".repeat(17) + "a = 1" + ")".repeat(17),
                "filter: nested more than 16 deep (parentheses and 'not' count) at column 17");
        assertRefused("not ".repeat(17) + "a = 1",
                "filter: nested more than 16 deep (parentheses and 'not' count) at column 65");
        assertRefused("not (".repeat(8) + "not a = 1" + ")".repeat(8),
                "filter: nested more than 16 deep (parentheses and 'not' count) at column 41");
        assertThat(ValueFilter.parse("(a = 1) and ".repeat(20) + "(a = 1)").text()).as("siblings do not nest").isNotNull();
    }

    @Test
    void anInListOf64LiteralsIsAcceptedAndTheSixtyFifthRefusedAtItsColumn() {
        StringJoiner list = new StringJoiner(", ", "x in [", "]");
        for (int i = 0; i < ValueFilter.MAX_IN_LITERALS; i++) {
            list.add(Integer.toString(i));
        }
        String atLimit = list.toString();
        assertThat(matchesValue(atLimit, "{\"x\":63}")).isTrue();
        assertThat(matchesValue(atLimit, "{\"x\":64}")).isFalse();

        String over = atLimit.substring(0, atLimit.length() - 1) + ", 64]";
        assertRefused(over, "filter: more than 64 literals in an 'in' list at column " + (atLimit.length() + 2));
    }

    @Test
    void aPathBreakingAPathRuleIsRefusedAtItsColumn() {
        String longPath = "a".repeat(FieldPath.MAX_LENGTH + 1);
        assertRefused("x = 1 and " + longPath + " = 1",
                "filter: path '" + "a".repeat(40) + "...' is longer than 256 characters at column 11");
        assertRefused("x. = 1", "filter: empty segment in path 'x.' at column 1");
        assertRefused(".x = 1", "filter: empty segment in path '.x' at column 1");
    }

    // ---- semantics beyond the doc's table ----

    @Test
    void aComparisonOfAMissingFieldIsFalseWhateverTheOperatorAndNotInvertsIt() {
        for (String op : List.of("=", "!=", "<", "<=", ">", ">=")) {
            assertThat(matchesValue("x " + op + " 1", "{\"y\":1}")).as(op).isFalse();
            assertThat(matchesValue("not x " + op + " 1", "{\"y\":1}")).as("not " + op).isTrue();
        }
        assertThat(matchesValue("x in [1, 'a', null]", "{}")).isFalse();
        assertThat(matchesValue("not x in [1, 'a', null]", "{}")).isTrue();
    }

    @Test
    void aComparisonWithAValueOfAnotherTypeIsFalseWhateverTheOperator() {
        for (String value : List.of("\"1\"", "true", "null", "{}", "[1]", "{\"x\":1}")) {
            for (String op : List.of("=", "!=", "<", "<=", ">", ">=")) {
                assertThat(matchesValue("x " + op + " 1", "{\"x\":" + value + "}")).as(value + " " + op).isFalse();
                assertThat(matchesValue("x " + op + " '1'", "{\"x\":" + (value.equals("\"1\"") ? "1" : value) + "}"))
                        .as(value + " " + op + " '1'").isFalse();
            }
        }
        assertThat(matchesValue("x != true", "{\"x\":1}")).isFalse();
        assertThat(matchesValue("x != false", "{\"x\":true}")).isTrue();
        assertThat(matchesValue("x = false", "{\"x\":null}")).isFalse();
    }

    @Test
    void numbersCompareExactlyWhateverTheirSpelling() {
        assertThat(matchesValue("x = 1000", "{\"x\":1E3}")).isTrue();
        assertThat(matchesValue("x = 1000", "{\"x\":1e+3}")).isTrue();
        assertThat(matchesValue("x = 1000", "{\"x\":10000e-1}")).isTrue();
        assertThat(matchesValue("x = 0.1", "{\"x\":0.1000}")).isTrue();
        assertThat(matchesValue("x = 0", "{\"x\":0e5}")).isTrue();
        assertThat(matchesValue("x = 0", "{\"x\":-0.0e-7}")).isTrue();
        assertThat(matchesValue("x > -1", "{\"x\":-0}")).isTrue();
        assertThat(matchesValue("x < 0", "{\"x\":-0}")).isFalse();
        assertThat(matchesValue("x < 0.30000000000000004", "{\"x\":0.3}")).isTrue();
        assertThat(matchesValue("x = 123456789012345678901234567890",
                "{\"x\":1.23456789012345678901234567890e29}")).isTrue();
        assertThat(matchesValue("x > 9223372036854775807", "{\"x\":9223372036854775808}")).isTrue();
        assertThat(matchesValue("x < -9223372036854775808", "{\"x\":-9223372036854775809}")).isTrue();
        assertThat(matchesValue("x > 1e999999999", "{\"x\":1e99999999999999999999}")).as("saturated exponent").isTrue();
        assertThat(matchesValue("x < -1e999999999", "{\"x\":-1e99999999999999999999}")).isTrue();
        assertThat(matchesValue("x > 0", "{\"x\":1e-99999999999999999999}")).isTrue();
        assertThat(matchesValue("x < 1e-999999999", "{\"x\":1e-99999999999999999999}")).isTrue();
    }

    @Test
    void stringsCompareByCodePointCaseSensitivelyWithoutNormalisation() {
        assertThat(matchesValue("s = 'é'", "{\"s\":\"e\\u0301\"}")).as("NFC and NFD differ").isFalse();
        assertThat(matchesValue("s < 'é'", "{\"s\":\"z\"}")).isTrue();
        assertThat(matchesValue("s > '\\uffff'", "{\"s\":\"\\ud800\\udc00\"}")).isTrue();
        assertThat(matchesValue("s < 'ab'", "{\"s\":\"a\"}")).isTrue();
        assertThat(matchesValue("s > ''", "{\"s\":\"a\"}")).isTrue();
        assertThat(matchesValue("s = ''", "{\"s\":\"\"}")).isTrue();
        assertThat(matchesValue("s = '\\u0000'", "{\"s\":\"\\u0000\"}")).isTrue();
        assertThat(matchesValue("s = '東京 😀'", "{\"s\":\"\\u6771\\u4eac \\ud83d\\ude00\"}")).isTrue();
    }

    @Test
    void codePointOrderAgreesWithComparingCodePointsOneByOne() {
        java.util.Random random = new java.util.Random(16);
        int[] pool = {'a', 'z', 0x7f, 0xe9, 0x4e2d, 0xd7ff, 0xe000, 0xff5e, 0xffff, 0x10000, 0x1f600, 0x10ffff};
        for (int i = 0; i < 5_000; i++) {
            String a = randomString(random, pool);
            String b = randomString(random, pool);
            int expected = Integer.signum(compareByCodePoints(a, b));
            char[] chars = ("##" + a).toCharArray();
            assertThat(Integer.signum(ValueFilter.compareCodePoints(chars, 2, a.length(), b))).as("%s vs %s", a, b)
                    .isEqualTo(expected);
        }
    }

    private static String randomString(java.util.Random random, int[] pool) {
        StringBuilder s = new StringBuilder();
        for (int n = random.nextInt(4); n > 0; n--) {
            s.appendCodePoint(pool[random.nextInt(pool.length)]);
        }
        return s.toString();
    }

    private static int compareByCodePoints(String a, String b) {
        int[] x = a.codePoints().toArray();
        int[] y = b.codePoints().toArray();
        return java.util.Arrays.compare(x, y);
    }

    @Test
    void nestedPathsGoThroughObjectsOnly() {
        String value = "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":8}}}}}}},\"arr\":[{\"b\":1}],\"s\":\"x\"}";
        assertThat(matchesValue("a.b.c.d.e.f.g.h = 8", value)).isTrue();
        assertThat(matchesValue("a.b.c.d.e.f.g = 8", value)).isFalse();
        assertThat(matchesValue("arr.b = 1", value)).isFalse();
        assertThat(matchesValue("s.length = 1", value)).isFalse();
        assertThat(matchesValue("a.b.x = 1 or a.b.c.d.e.f.g.h = 8", value)).isTrue();
    }

    @Test
    void keysAreMatchedAsJsonDecodesThem() {
        assertThat(matchesValue("quote.bid > 1", "{\"qu\\u006fte\":{\"bid\":1.25}}")).isTrue();
        assertThat(matchesValue("価格 = 1", "{\"\\u4fa1\\u683c\":1}")).isTrue();
        assertThat(matchesValue("Bid = 1", "{\"bid\":1}")).isFalse();
    }

    @Test
    void aValueThatIsNotAJsonObjectMatchesNothingNotEvenANegation() {
        ValueFilter f = ValueFilter.parse("not (x = 1)");
        for (String value : List.of("", "   ", "[]", "1", "\"x\"", "null", "x = 1", "{", "{\"x\"", "{\"y\":1 \"x\":2}", "}")) {
            assertThat(matches(f, value)).as(value).isFalse();
        }
        assertThat(matches(f, "{\"x\":1}".getBytes(StandardCharsets.UTF_16BE))).isFalse();
        assertThat(matches(f, "{}")).isTrue();
        assertThat(matches(f, utf8("\uFEFF{}"))).as("a UTF-8 byte order mark is skipped").isTrue();
    }

    @Test
    void readingStopsOnceEveryPathIsMet() {
        assertThat(matchesValue("x = 1 and y.z = 2", "{\"y\":{\"z\":2},\"x\":1,\"rest\":!!!")).isTrue();
        assertThat(matchesValue("x = 1 and y.z = 2", "{\"y\":{\"z\":2},\"rest\":!!!,\"x\":1}")).isFalse();
        assertThat(matchesValue("not (x = 1)", "{\"x\":2,\"rest\":!!!")).isTrue();
    }

    @Test
    void aFilterIsReusableAcrossValues() {
        ValueFilter f = ValueFilter.parse("x = 1 and q.a = 2");
        for (int i = 0; i < 3; i++) {
            assertThat(matches(f, "{\"x\":1,\"q\":{\"a\":2}}")).isTrue();
            assertThat(matches(f, "{\"x\":1,\"x\":2,\"q\":{\"a\":2}}")).isTrue();
            assertThat(matches(f, "{\"x\":2,\"q\":{\"a\":2}}")).isFalse();
            assertThat(matches(f, "garbage")).isFalse();
            assertThat(matches(f, "{\"q\":{\"b\":2},\"q\":{\"a\":2},\"x\":1}")).as("the first q counts").isFalse();
        }
    }

    @Test
    void matchingFromASecondThreadTripsTheThreadAssertion() throws Exception {
        ValueFilter f = ValueFilter.parse("a = 1");
        matches(f, "{\"a\":1}");
        Throwable[] thrown = new Throwable[1];
        Thread other = new Thread(() -> {
            try {
                matches(f, "{\"a\":1}");
            } catch (Throwable t) {
                thrown[0] = t;
            }
        });
        other.start();
        other.join();

        assertThat(thrown[0]).isInstanceOf(AssertionError.class).hasMessageContaining("one thread only");
    }
}
