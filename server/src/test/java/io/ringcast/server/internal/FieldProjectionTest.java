package io.ringcast.server.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.ringcast.server.internal.JsonValueFixtures.project;
import static io.ringcast.server.internal.JsonValueFixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link FieldProjection}: the rules of the list with their exact messages, and the projection of
 * values: the value's order, nesting, leaves copied byte for byte, missing fields, values that are
 * not objects or not JSON, and equal bytes for equal values. Every row of the doc's tables is held
 * against the code.
 */
@Timeout(10)
class FieldProjectionTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static FieldProjection fields(String... paths) {
        return FieldProjection.parse(List.of(paths));
    }

    private static void assertRefused(List<String> paths, String message) {
        assertThatThrownBy(() -> FieldProjection.parse(paths))
                .isInstanceOf(InvalidOptionsException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((InvalidOptionsException) e).option()).isEqualTo("fields"));
    }

    // ---- the list ----

    @Test
    void theListKeepsItsPathsInTheOrderGiven() {
        assertThat(fields("b", "a.x", "c").paths()).extracting(FieldPath::text).containsExactly("b", "a.x", "c");
    }

    @Test
    void anEmptyOrMissingListIsRefused() {
        assertRefused(List.of(), "fields: no paths given; name at least one");
        assertRefused(null, "fields: no paths given; name at least one");
    }

    @Test
    void thirtyTwoPathsAreAcceptedAndThirtyThreeRefused() {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < FieldProjection.MAX_PATHS; i++) {
            paths.add("f" + i);
        }
        assertThat(FieldProjection.parse(paths).paths()).hasSize(32);

        paths.add("f32");
        assertRefused(paths, "fields: 33 paths, more than 32");
    }

    @Test
    void aPathNamedTwiceIsRefused() {
        assertRefused(List.of("a", "b.c", "b.c"), "fields: path 'b.c' is named twice");
    }

    @Test
    void aPathInsideAnotherIsRefusedInEitherOrder() {
        String message = "fields: path 'quote.bid' is inside path 'quote', which is copied whole; name one of them";
        assertRefused(List.of("quote", "quote.bid"), message);
        assertRefused(List.of("quote.bid", "quote"), message);
        assertRefused(List.of("a.b.c", "x", "a"), "fields: path 'a.b.c' is inside path 'a', which is copied whole; name one of them");
        assertThat(fields("quote.bid", "quote.ask", "quotes").paths()).as("siblings and look-alikes are fine").hasSize(3);
    }

    @Test
    void aBadPathIsRefusedWithItsOwnRule() {
        assertRefused(List.of("ok", "a..b"), "fields: empty segment in path 'a..b'");
        assertRefused(Arrays.asList("ok", null), "fields: empty path");
    }

    static List<List<String>> documentedRefusals() {
        return SubscriptionOptionsDoc.table("| fields | message |");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedRefusals")
    void everyDocumentedRefusalIsTheMessageGiven(List<String> row) throws Exception {
        assertRefused(JSON.readValue(row.get(0), new TypeReference<List<String>>() { }), row.get(1));
    }

    // ---- projections ----

    static List<List<String>> documentedProjections() {
        return SubscriptionOptionsDoc.table("| fields | value | projection |");
    }

    @ParameterizedTest(name = "{0} of {1}")
    @MethodSource("documentedProjections")
    void everyDocumentedProjectionIsTheBytesGiven(List<String> row) throws Exception {
        FieldProjection p = FieldProjection.parse(JSON.readValue(row.get(0), new TypeReference<List<String>>() { }));

        assertThat(project(p, row.get(1))).isEqualTo(row.get(2));
    }

    @Test
    void fieldsComeInTheValuesOrderNotTheLists() {
        assertThat(project(fields("c", "a", "b"), "{\"a\":1,\"b\":2,\"c\":3}")).isEqualTo("{\"a\":1,\"b\":2,\"c\":3}");
        assertThat(project(fields("a", "c"), "{\"c\":3,\"b\":2,\"a\":1}")).isEqualTo("{\"c\":3,\"a\":1}");
    }

    @Test
    void dottedPathsKeepTheirNestingAtEveryDepth() {
        FieldProjection p = fields("a.b.c", "a.d", "e.f", "a.b.g");

        assertThat(project(p, "{\"x\":0,\"a\":{\"b\":{\"g\":1,\"c\":2,\"h\":3},\"d\":4,\"z\":5},\"e\":{\"f\":6}}"))
                .isEqualTo("{\"a\":{\"b\":{\"g\":1,\"c\":2},\"d\":4},\"e\":{\"f\":6}}");
        assertThat(project(fields("a.b.c.d.e.f.g.h"), "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":[1],\"i\":2}}}}}}}}"))
                .isEqualTo("{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":[1]}}}}}}}}");
    }

    @Test
    void anObjectOnAPathsWayIsWrittenOnlyWhenSomethingUnderItIs() {
        FieldProjection p = fields("a.b.c", "d");

        assertThat(project(p, "{\"a\":{\"b\":{\"x\":1}},\"d\":2}")).isEqualTo("{\"d\":2}");
        assertThat(project(p, "{\"a\":{},\"d\":2}")).isEqualTo("{\"d\":2}");
        assertThat(project(p, "{\"a\":{\"b\":7}}")).isEqualTo("{}");
        assertThat(project(p, "{\"a\":{\"b\":[{\"c\":1}]}}")).as("no path into arrays").isEqualTo("{}");
        assertThat(project(p, "{\"a\":null,\"d\":null}")).isEqualTo("{\"d\":null}");
    }

    @Test
    void anObjectOrArrayThatAPathNamesIsCopiedWholeWithItsInnerSpacing() {
        String tricky = "{ \"s\" : \"}]\\\"{[\" , \"n\" : [ 1 , { \"x\" : [ ] } ] }";

        assertThat(project(fields("o"), "{\"o\":" + tricky + ",\"p\":1}")).isEqualTo("{\"o\":" + tricky + "}");
        assertThat(project(fields("o"), "{\"o\":[]}")).isEqualTo("{\"o\":[]}");
        assertThat(project(fields("o"), "{\"o\":{}}")).isEqualTo("{\"o\":{}}");
        assertThat(project(fields("o", "p"), "{\"o\":[ [ ], \"]\" ] ,\"p\":{ }}")).isEqualTo("{\"o\":[ [ ], \"]\" ],\"p\":{ }}");
    }

    @Test
    void scalarsAreCopiedByteForByte() {
        FieldProjection p = fields("v");
        for (String scalar : List.of("0", "-0", "1.250", "1E+3", "-1.5e-7", "123456789012345678901234567890",
                "true", "false", "null", "\"\"", "\"plain\"", "\"a\\\"b\\\\c\\/d\"", "\"\\u00e9\\u00E9\"",
                "\"\\ud83d\\ude00\"", "\"😀 Zürich 東京\"", "\"\\b\\f\\n\\r\\t\"")) {
            assertThat(project(p, "{\"v\":" + scalar + "}")).as(scalar).isEqualTo("{\"v\":" + scalar + "}");
            assertThat(project(p, "{ \"v\"\t:\n" + scalar + " \r\n}")).as(scalar + " with spaces").isEqualTo("{\"v\":" + scalar + "}");
        }
    }

    @Test
    void nonAsciiBytesArePreservedExactly() {
        byte[] value = utf8("{\"name\":\"Zürich 東京 😀\",\"k\":\"\\u6771\"}");
        byte[] expected = utf8("{\"name\":\"Zürich 東京 😀\",\"k\":\"\\u6771\"}");

        assertThat(project(fields("name", "k"), value)).isEqualTo(expected);
    }

    @Test
    void keysAreWrittenAsThePathsSpellThemWhateverEscapesTheValueUsed() {
        assertThat(project(fields("quote.bid"), "{\"qu\\u006fte\":{\"\\u0062id\":1}}")).isEqualTo("{\"quote\":{\"bid\":1}}");
        assertThat(project(fields("価格"), "{\"\\u4fa1\\u683c\":1}")).isEqualTo("{\"価格\":1}");
    }

    @Test
    void theFirstOccurrenceOfARepeatedKeyCountsAtEveryLevel() {
        assertThat(project(fields("a"), "{\"a\":1,\"a\":2}")).isEqualTo("{\"a\":1}");
        assertThat(project(fields("q.a", "q.b"), "{\"q\":{\"a\":1},\"q\":{\"b\":2}}")).isEqualTo("{\"q\":{\"a\":1}}");
        assertThat(project(fields("q.a", "z"), "{\"q\":{\"a\":1,\"a\":3},\"z\":0}")).isEqualTo("{\"q\":{\"a\":1},\"z\":0}");
    }

    @Test
    void aValueThatIsNotAJsonObjectProjectsToAnEmptyObject() {
        FieldProjection p = fields("a");
        for (String value : List.of("", " ", "[]", "[{\"a\":1}]", "1", "\"a\"", "true", "null", "a=1", "{", "{\"a\"",
                "{\"a\":}", "{\"a\" 1}", "{'a':1}", "{\"a\":01}", "{\"a\":NaN}", "}", "\u0000")) {
            assertThat(project(p, value)).as(value).isEqualTo("{}");
        }
    }

    @Test
    void aValueMalformedBeforeTheProjectionIsCompleteProjectsToAnEmptyObjectAndWritesNothingElse() {
        assertThat(project(fields("a", "b"), "{\"a\":{\"x\":[1,2]},\"b\":")).isEqualTo("{}");
        assertThat(project(fields("a", "b"), "{\"a\":1,\"c\":tru,\"b\":2}")).isEqualTo("{}");
        assertThat(project(fields("a"), "{\"a\":\"bad \u0001 control\"}")).isEqualTo("{}");
    }

    @Test
    void readingStopsOnceEveryPathIsCopied() {
        assertThat(project(fields("a"), "{\"a\":1,\"b\":!!! not json")).isEqualTo("{\"a\":1}");
        assertThat(project(fields("a.b", "c"), "{\"c\":1,\"a\":{\"b\":2,\"x\":!!!")).isEqualTo("{\"c\":1,\"a\":{\"b\":2}}");
    }

    @Test
    void aValueInUtf16OrUtf32ProjectsToAnEmptyObjectAndAUtf8ByteOrderMarkIsSkipped() {
        String json = "{\"a\":1}";
        assertThat(project(fields("a"), json.getBytes(StandardCharsets.UTF_16BE))).isEqualTo(utf8("{}"));
        assertThat(project(fields("a"), json.getBytes(StandardCharsets.UTF_16LE))).isEqualTo(utf8("{}"));
        assertThat(project(fields("a"), json.getBytes(StandardCharsets.UTF_16))).as("with a BOM").isEqualTo(utf8("{}"));
        assertThat(project(fields("a"), json.getBytes(java.nio.charset.Charset.forName("UTF-32BE")))).isEqualTo(utf8("{}"));
        assertThat(project(fields("a"), utf8("\uFEFF" + json))).isEqualTo(utf8(json));
    }

    @Test
    void invalidUtf8InANamedStringProjectsToAnEmptyObject() {
        byte[] value = utf8("{\"a\":\"xx\"}");
        value[6] = (byte) 0xC3; // a lead byte followed by 'x': not UTF-8
        assertThat(project(fields("a"), value)).isEqualTo(utf8("{}"));
    }

    @Test
    void jacksonsLimitsMakeAValueInvalidWhereTheReadingMeetsThem() {
        String tooDeep = "[".repeat(JsonValueInput.MAX_NESTING_DEPTH) + "]".repeat(JsonValueInput.MAX_NESTING_DEPTH);
        String deepest = "[".repeat(JsonValueInput.MAX_NESTING_DEPTH - 1) + "]".repeat(JsonValueInput.MAX_NESTING_DEPTH - 1);
        String longNumber = "1".repeat(JsonValueInput.MAX_NUMBER_LENGTH + 1);

        assertThat(project(fields("a"), "{\"x\":" + deepest + ",\"a\":1}")).isEqualTo("{\"a\":1}");
        assertThat(project(fields("a"), "{\"x\":" + tooDeep + ",\"a\":1}")).isEqualTo("{}");
        assertThat(project(fields("a"), "{\"x\":" + longNumber + ",\"a\":1}")).isEqualTo("{}");
        assertThat(project(fields("a"), "{\"a\":1,\"x\":" + longNumber + "}")).as("after the last named field").isEqualTo("{\"a\":1}");
    }

    @Test
    void tokensAcrossTheParsersChunkBoundariesAreCopiedWhole() {
        // Jackson reads the stream in chunks of about 8,000 bytes: put every kind of leaf across the seams
        FieldProjection p = fields("n", "s", "o", "t");
        String leaves = "\"n\":-12345.678e-9,\"s\":\"Zürich \\\"HB\\\" 東京\",\"o\":{\"k\":[1,\"]\",{}]},\"t\":true}";
        for (int pad = 7_950; pad <= 8_050; pad++) {
            String value = "{\"pad\":\"" + "x".repeat(pad) + "\"," + leaves;
            assertThat(project(p, value)).as("pad %d", pad).isEqualTo("{" + leaves);
        }
        String big = "{\"a\":\"" + "é".repeat(20_000) + "\",\"o\":[" + "1,".repeat(10_000) + "2]}";
        assertThat(project(fields("a", "o"), big)).isEqualTo(big);
    }

    @Test
    void equalValuesGiveEqualBytesWhereverTheyLieAndWhateverWasProjectedBefore() {
        String value = "{\"ts\":1700000000123,\"quote\":{\"ask\":1.0842,\"bid\":1.0840},\"venue\":\"LSE\"}";
        FieldProjection one = fields("quote.bid", "venue");
        FieldProjection other = fields("venue", "quote.bid");

        String first = project(one, value);
        project(one, "{\"quote\":{\"bid\":2},\"venue\":\"X\",\"venue\":\"Y\"}");
        project(one, "not json");
        assertThat(project(one, value)).isEqualTo(first);
        assertThat(project(other, value)).as("the same paths in another order").isEqualTo(first);
        assertThat(first).isEqualTo("{\"quote\":{\"bid\":1.0840},\"venue\":\"LSE\"}");
    }

    @Test
    void aProjectionAppendsAtTheWriterIndexAndItsResultIsAJsonObject() throws Exception {
        ByteBuf value = Unpooled.copiedBuffer("{\"a\":{\"b\":[1,2]},\"c\":\"d\"}", StandardCharsets.UTF_8);
        ByteBuf out = Unpooled.buffer(4);
        try {
            out.writeBytes(utf8("xyz"));
            int n = fields("a.b", "c").project(value, value.readerIndex(), value.readableBytes(), out);

            String written = out.toString(3, n, StandardCharsets.UTF_8);
            assertThat(out.toString(0, 3, StandardCharsets.UTF_8)).isEqualTo("xyz");
            assertThat(written).isEqualTo("{\"a\":{\"b\":[1,2]},\"c\":\"d\"}");
            assertThat(JSON.readTree(written).isObject()).isTrue();
            assertThat(value.readerIndex()).isZero();
        } finally {
            value.release();
            out.release();
        }
    }

    @Test
    void projectingFromASecondThreadTripsTheThreadAssertion() throws Exception {
        FieldProjection p = fields("a");
        project(p, "{\"a\":1}");
        Throwable[] thrown = new Throwable[1];
        Thread other = new Thread(() -> {
            try {
                project(p, "{\"a\":1}");
            } catch (Throwable t) {
                thrown[0] = t;
            }
        });
        other.start();
        other.join();

        assertThat(thrown[0]).isInstanceOf(AssertionError.class).hasMessageContaining("one thread only");
    }
}
