package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link FieldPath}: what a path may hold, each rule's refusal with its exact message, and nesting of paths. */
@Timeout(10)
class FieldPathTest {

    private static void assertRefused(String text, String message) {
        assertThatThrownBy(() -> FieldPath.parse(text))
                .isInstanceOf(InvalidOptionsException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((InvalidOptionsException) e).option()).isEqualTo("fields"));
    }

    @Test
    void aDottedPathIsSplitIntoItsSegments() {
        FieldPath p = FieldPath.parse("quote.bid");

        assertThat(p.text()).isEqualTo("quote.bid");
        assertThat(p.depth()).isEqualTo(2);
        assertThat(p.segment(0)).isEqualTo("quote");
        assertThat(p.segment(1)).isEqualTo("bid");
        assertThat(p).hasToString("quote.bid").isEqualTo(FieldPath.parse("quote.bid")).isNotEqualTo(FieldPath.parse("quote"));
        assertThat(p.hashCode()).isEqualTo(FieldPath.parse("quote.bid").hashCode());
    }

    @Test
    void segmentsMayHoldAsciiLettersDigitsUnderscoreDashDollarAtAndNonAsciiLettersDigitsAndMarks() {
        for (String ok : List.of("a", "Z9", "_x", "-1", "0", "$type", "@timestamp", "bid-size", "prix_é", "価格",
                "e\u0301", "x𝒳", "٣")) {
            assertThat(FieldPath.parse(ok).depth()).as(ok).isEqualTo(1);
        }
        assertThat(FieldPath.parse("価格.prix_é.$x.@t.a-b.0").depth()).isEqualTo(6);
    }

    @Test
    void eightSegmentsAnd256CharactersAreTheLongestAccepted() {
        assertThat(FieldPath.parse("a.b.c.d.e.f.g.h").depth()).isEqualTo(FieldPath.MAX_DEPTH);
        String longest = "a".repeat(FieldPath.MAX_LENGTH);
        assertThat(FieldPath.parse(longest).text()).hasSize(256);
    }

    @Test
    void emptyAndNullPathsAreRefused() {
        assertRefused("", "fields: empty path");
        assertRefused(null, "fields: empty path");
    }

    @Test
    void aPathLongerThan256CharactersIsRefusedQuotingItsFirst40() {
        assertRefused("a".repeat(257), "fields: path '" + "a".repeat(40) + "...' is longer than 256 characters");
    }

    @Test
    void aPathDeeperThan8SegmentsIsRefused() {
        assertRefused("a.b.c.d.e.f.g.h.i", "fields: path 'a.b.c.d.e.f.g.h.i' is deeper than 8 segments");
    }

    @Test
    void anEmptySegmentAnywhereIsRefused() {
        assertRefused("a..b", "fields: empty segment in path 'a..b'");
        assertRefused(".a", "fields: empty segment in path '.a'");
        assertRefused("a.", "fields: empty segment in path 'a.'");
        assertRefused(".", "fields: empty segment in path '.'");
    }

    @Test
    void aCharacterOutsideTheSegmentSetIsRefusedAndNamedVisibly() {
        assertRefused("a b", "fields: character U+0020 is not allowed in path 'a b'");
        assertRefused("a\tb", "fields: character U+0009 is not allowed in path 'a\tb'");
        assertRefused("a/b", "fields: character '/' is not allowed in path 'a/b'");
        assertRefused("'a'", "fields: character ''' is not allowed in path ''a''");
        assertRefused("a\"b", "fields: character '\"' is not allowed in path 'a\"b'");
        assertRefused("prix_€", "fields: character '€' is not allowed in path 'prix_€'");
        assertRefused("smile😀", "fields: character '😀' is not allowed in path 'smile😀'");
        assertRefused("a\u200bb", "fields: character U+200B is not allowed in path 'a\u200bb'");
    }

    @Test
    void aPathIsInsideEveryProperPrefixOfItsSegmentsOnly() {
        FieldPath quote = FieldPath.parse("quote");
        FieldPath bid = FieldPath.parse("quote.bid");

        assertThat(bid.isInside(quote)).isTrue();
        assertThat(FieldPath.parse("a.b.c").isInside(FieldPath.parse("a.b"))).isTrue();
        assertThat(quote.isInside(bid)).isFalse();
        assertThat(quote.isInside(quote)).as("not inside itself").isFalse();
        assertThat(FieldPath.parse("quotes.bid").isInside(quote)).as("a prefix of text, not of segments").isFalse();
        assertThat(bid.isInside(FieldPath.parse("quo"))).isFalse();
    }

    static List<List<String>> documentedPathRows() {
        return SubscriptionOptionsDoc.table("| path | message |");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedPathRows")
    void everyRowOfTheDocumentedPathTableIsTheMessageGiven(List<String> row) {
        assertRefused(row.get(0), row.get(1));
    }
}
