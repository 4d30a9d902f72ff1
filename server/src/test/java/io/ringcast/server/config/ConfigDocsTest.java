package io.ringcast.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/configuration.md documents exactly the keys of the embedded defaults. */
class ConfigDocsTest {

    private static final Path DOC = Path.of("..", "docs", "configuration.md");
    private static final Pattern TABLE_ROW_KEY = Pattern.compile("^\\|\\s*`([A-Za-z0-9.]+)`", Pattern.MULTILINE);

    @Test
    void everyDefaultKeyIsDocumented() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);

        List<String> undocumented = defaultLeafKeys().stream()
                .filter(key -> !doc.contains("`" + key + "`"))
                .toList();

        assertThat(undocumented).as("keys in defaults.yaml missing from " + DOC).isEmpty();
    }

    @Test
    void everyDocumentedKeyExists() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        Set<String> tableKeys = new TreeSet<>();
        Matcher m = TABLE_ROW_KEY.matcher(doc);
        while (m.find()) {
            tableKeys.add(m.group(1));
        }

        assertThat(tableKeys).as("keys in the tables of " + DOC).containsExactlyInAnyOrderElementsOf(defaultLeafKeys());
    }

    /** Each start-up error the doc shows, with a file that gives it; the doc may show no other. */
    @Test
    void everyExampleErrorInTheDocIsWhatTheLoaderSays() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("Examples of start-up errors:\\s*```\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertThat(block.find()).as("the examples block of " + DOC).isTrue();
        List<String> files = List.of(
                "server:\n  prot: 8080\n",
                "server:\n  port: eighty\n",
                "pipeline:\n  inboundRingSize: 1000\n",
                "pipeline:\n  waitStrategy: fast\n",
                "server:\n  transport: iouring\n",
                "server:\n port: 1\n  host: x\n",
                "metrics:\n  enabled: true\n");

        List<String> said = new ArrayList<>();
        for (String yaml : files) {
            said.add("config/server.yaml: " + ConfigFixtures.refusal(yaml).getMessage());
        }

        assertThat(block.group(1).lines().toList()).containsExactlyElementsOf(said);
    }

    private static List<String> defaultLeafKeys() throws IOException {
        try (InputStream in = ConfigLoader.class.getResourceAsStream("defaults.yaml")) {
            assertThat(in).as("defaults.yaml resource").isNotNull();
            List<String> keys = ConfigLoader.keysOf(new YAMLMapper().readTree(in));
            assertThat(keys).isNotEmpty();
            return keys;
        }
    }
}
