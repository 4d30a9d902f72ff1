package io.ringcast.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.List;

/**
 * How config errors write keys and values for an operator: dotted keys with list indexes, found
 * values quoted and shortened, mappings and lists named rather than dumped.
 */
final class ConfigText {
    private static final int MAX_SHOWN_CHARS = 60;

    private ConfigText() {
    }

    /** Names joined as an operator writes them: {@code features.overrides[0].deltas}. */
    static String dotted(List<String> names) {
        StringBuilder key = new StringBuilder();
        for (String name : names) {
            if (key.length() > 0 && !name.startsWith("[")) {
                key.append('.');
            }
            key.append(name);
        }
        return key.toString();
    }

    static String fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return String.join(", ", names);
    }

    /** A found value as the operator would recognise it: strings quoted, mappings and lists named. */
    static String show(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "nothing";
        }
        if (node.isTextual()) {
            return quote(node.textValue());
        }
        if (node.isObject()) {
            return "a mapping";
        }
        if (node.isArray()) {
            return "a list";
        }
        return node.asText(); // numbers, booleans, null
    }

    /** {@code text} in double quotes with JSON escapes, shortened when long. */
    static String quote(String text) {
        String shown = text.length() <= MAX_SHOWN_CHARS ? text : text.substring(0, MAX_SHOWN_CHARS - 3) + "...";
        return TextNode.valueOf(shown).toString();
    }
}
