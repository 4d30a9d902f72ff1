package io.ringcast.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes {@link ConfigLoader#fromYaml}: whatever an operator writes, the server either gets a
 * {@link ServerConfig} or a {@link ConfigException} it can show as is; a raw Jackson or SnakeYAML
 * exception, an NPE or any other exception escaping is a finding. Seeds and crashes are under
 * {@code src/test/resources/io/ringcast/server/config/ConfigLoaderFuzzTestInputs/<method>/}.
 */
class ConfigLoaderFuzzTest {
    /** Every {@code section.key} of the embedded defaults: what the structured test writes. */
    private static final List<String[]> KEYS = defaultKeys();
    private static final String[] OVERRIDE_KEYS = {"selector", "lastValueCache", "deltas", "compression", "conflation"};
    private static final String[] WORDS = {"blocking", "sleeping", "yielding", "busy-spin", "immediate",
        "end-of-batch", "max-delay", "adaptive", "off", "on-backpressure", "always", "true", "false", "yes", "null",
        "fx/#", "fx/+/bid", "#", "fx//bid", "0.0.0.0", "localhost"};

    /** Arbitrary text (seeds: real config files): a config, or a ConfigException with a message. */
    @FuzzTest(maxDuration = "2m")
    void anyTextGivesAConfigOrAConfigException(byte[] input) {
        String yaml = new String(input, StandardCharsets.UTF_8);
        try {
            ConfigLoader.fromYaml(yaml);
        } catch (ConfigException e) {
            checkMessage(e);
        }
    }

    /**
     * Well-formed YAML over the real keys with values of every shape (numbers in and out of range,
     * too large for the type, strings, enums, nulls, lists, mappings, empty values), unknown keys
     * and override entries: a config, or a ConfigException whose message names the key at fault
     * (a YAML syntax error from a generated scalar may name only its line and column).
     */
    @FuzzTest(maxDuration = "2m")
    void structuredYamlGivesAConfigOrAnErrorNamingTheKey(FuzzedDataProvider data) {
        String yaml = structuredYaml(data);
        try {
            ConfigLoader.fromYaml(yaml);
        } catch (ConfigException e) {
            checkMessage(e);
            if (!e.getMessage().startsWith("YAML syntax error") && e.key().isEmpty()) {
                throw new AssertionError("a ConfigException that names no key: " + e.getMessage() + "\nfor:\n" + yaml, e);
            }
        }
    }

    /**
     * Found by {@link #anyTextGivesAConfigOrAConfigException} (crash-ba58065a...): SnakeYAML 2.3's
     * reader threw IndexOutOfBoundsException when a character outside the BMP straddled its
     * 1024-character buffer, and it escaped from the loader unwrapped (the loader wraps it in a
     * ConfigException since). SnakeYAML 2.5 (under Jackson 2.23) reads such a pair whole: the value
     * arrives intact, and the loader's wrapping stays for whatever the reader throws next.
     */
    @Test
    void surrogatePairAtSnakeYamlReaderBufferEdgeIsReadWhole() throws ConfigException {
        String start = "server:\n  host: \"";
        String host = "x".repeat(1023 - start.length()) + "\uD83D\uDCC8"; // the pair at 1023..1024
        assertThat(ConfigLoader.fromYaml(start + host + "\"\n").server().host()).isEqualTo(host);
    }

    private static void checkMessage(ConfigException e) {
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            throw new AssertionError("a ConfigException without a message", e);
        }
        if (e.key().isPresent() && !message.contains(e.key().get())) {
            throw new AssertionError("the message does not name its key '" + e.key().get() + "': " + message, e);
        }
    }

    private static String structuredYaml(FuzzedDataProvider data) {
        Map<String, Map<String, String>> sections = new LinkedHashMap<>();
        Map<String, String> scalarSections = new LinkedHashMap<>();
        List<Map<String, String>> overrides = new ArrayList<>();
        int entries = data.consumeInt(0, 8);
        for (int i = 0; i < entries && data.remainingBytes() > 0; i++) {
            switch (data.consumeInt(0, 9)) {
                case 0 -> sections.computeIfAbsent(name(data), s -> new LinkedHashMap<>()).put(name(data), value(data));
                case 1 -> scalarSections.put(data.pickValue(KEYS)[0], value(data));
                case 2 -> {
                    Map<String, String> o = new LinkedHashMap<>();
                    int keys = data.consumeInt(0, 4);
                    for (int k = 0; k < keys; k++) {
                        o.put(data.consumeBoolean() ? data.pickValue(OVERRIDE_KEYS) : name(data), value(data));
                    }
                    overrides.add(o);
                }
                default -> {
                    String[] key = data.pickValue(KEYS);
                    sections.computeIfAbsent(key[0], s -> new LinkedHashMap<>()).put(key[1], value(data));
                }
            }
        }
        StringBuilder yaml = new StringBuilder();
        scalarSections.forEach((section, value) -> yaml.append(section).append(": ").append(value).append('\n'));
        sections.forEach((section, keys) -> {
            yaml.append(section).append(":\n");
            keys.forEach((key, value) -> yaml.append("  ").append(key).append(": ").append(value).append('\n'));
        });
        if (!overrides.isEmpty()) {
            yaml.append(sections.containsKey("features") ? "" : "features:\n").append("  overrides:\n");
            for (Map<String, String> o : overrides) {
                if (o.isEmpty()) {
                    yaml.append("    - {}\n");
                    continue;
                }
                String dash = "    - ";
                for (Map.Entry<String, String> e : o.entrySet()) {
                    yaml.append(dash).append(e.getKey()).append(": ").append(e.getValue()).append('\n');
                    dash = "      ";
                }
            }
        }
        return yaml.toString();
    }

    /** A key name that is not a real one: plain when it can be, else double-quoted. */
    private static String name(FuzzedDataProvider data) {
        String s = data.consumeString(12);
        return s.matches("[A-Za-z][A-Za-z0-9]*") ? s : TextNode.valueOf(s).toString();
    }

    /** A YAML value of some shape, written as it would follow {@code key: } on one line. */
    private static String value(FuzzedDataProvider data) {
        return switch (data.consumeInt(0, 14)) {
            case 0 -> Integer.toString(data.consumeInt(-2, 70000));
            case 1 -> Long.toString(data.consumeLong());
            case 2 -> "9" + Long.toString(Math.abs(data.consumeLong() % 1_000_000_000L)) + "0000000000";
            case 3 -> Double.toString(data.consumeDouble());
            case 4 -> Boolean.toString(data.consumeBoolean());
            case 5 -> TextNode.valueOf(data.consumeString(40)).toString();
            case 6 -> data.pickValue(WORDS);
            case 7 -> "~";
            case 8 -> "";
            case 9 -> "[" + value(data) + ", " + value(data) + "]";
            case 10 -> "{" + name(data) + ": " + value(data) + "}";
            case 11 -> "\"" + Integer.toString(data.consumeInt(0, 100000)) + "\"";
            case 12 -> "0x" + Integer.toHexString(data.consumeInt());
            case 13 -> data.pickValue(new String[] {".inf", "-.inf", ".nan", "1e3", "1_000", "0o17", "+12"});
            default -> "[]";
        };
    }

    private static List<String[]> defaultKeys() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream("defaults.yaml")) {
            JsonNode tree = new YAMLMapper().readTree(in);
            List<String[]> keys = new ArrayList<>();
            tree.properties().forEach(section -> section.getValue().fieldNames()
                    .forEachRemaining(key -> keys.add(new String[] {section.getKey(), key})));
            return keys;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
