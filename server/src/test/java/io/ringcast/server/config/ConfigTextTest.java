package io.ringcast.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How refusals write keys and found values ({@link ConfigText}): as an operator reads and writes them. */
class ConfigTextTest {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    @Test
    void keysAreDottedAndListIndexesFollowTheirListUnseparated() {
        assertThat(ConfigText.dotted(List.of("features", "overrides", "[0]", "deltas")))
                .isEqualTo("features.overrides[0].deltas");
        assertThat(ConfigText.dotted(List.of("security", "roles", "[2]", "publish", "[1]")))
                .isEqualTo("security.roles[2].publish[1]");
        assertThat(ConfigText.dotted(List.of("server"))).isEqualTo("server");
        assertThat(ConfigText.dotted(List.of())).isEmpty();
    }

    @Test
    void aFoundStringIsQuotedSoThatAQuotedNumberReadsAsTheStringItIs() {
        assertThat(ConfigText.show(NODES.textNode("8080"))).isEqualTo("\"8080\"");
        assertThat(ConfigText.show(NODES.numberNode(8080))).isEqualTo("8080");
        assertThat(ConfigText.show(NODES.textNode(""))).isEqualTo("\"\"");
    }

    @Test
    void aFoundValueWithControlCharactersStaysOnOneLine() {
        assertThat(ConfigText.quote("a\nb\t\"c\"")).isEqualTo("\"a\\nb\\t\\\"c\\\"\"");
    }

    @Test
    void aLongFoundValueIsShortenedToSixtyCharacters() {
        String sixty = "x".repeat(60);
        assertThat(ConfigText.quote(sixty)).isEqualTo("\"" + sixty + "\"");
        assertThat(ConfigText.quote(sixty + "y")).isEqualTo("\"" + "x".repeat(57) + "...\"");
    }

    @Test
    void mappingsAndListsAreNamedNotDumped() {
        assertThat(ConfigText.show(NODES.objectNode().put("secret", "hunter2"))).isEqualTo("a mapping");
        assertThat(ConfigText.show(NODES.arrayNode().add("hunter2"))).isEqualTo("a list");
    }

    @Test
    void nothingNullNumbersAndBooleansAreShownAsYamlWritesThem() {
        assertThat(ConfigText.show(null)).isEqualTo("nothing");
        assertThat(ConfigText.show(MissingNode.getInstance())).isEqualTo("nothing");
        assertThat(ConfigText.show(NODES.nullNode())).isEqualTo("null");
        assertThat(ConfigText.show(NODES.booleanNode(true))).isEqualTo("true");
        assertThat(ConfigText.show(NODES.numberNode(80.5))).isEqualTo("80.5");
    }

    @Test
    void fieldNamesAreListedInTheOrderWritten() throws Exception {
        JsonNode node = new ObjectMapper().readTree("{\"host\":1,\"port\":2,\"ioThreads\":3}");

        assertThat(ConfigText.fieldNames(node)).isEqualTo("host, port, ioThreads");
    }
}
