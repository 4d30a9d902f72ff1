package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigFixtures.refusal;
import static io.ringcast.server.config.ConfigFixtures.setting;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every integer key's range, as docs/configuration.md states it in its "valid values" column, is
 * the range the loader enforces: both ends accepted, one past each end refused naming the key. The
 * table is read from the doc, so a doc and a check that disagree fail here, and an integer key whose
 * range the doc does not state fails {@link #everyIntegerKeyHasADocumentedRange}.
 */
class ConfigRangesTest {
    private static final Path DOC = Path.of("..", "docs", "configuration.md");
    /** A table row: key, type, default, valid values. */
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`([a-zA-Z]+\\.[a-zA-Z]+)`\\s*\\|([^|]*)\\|[^|]*\\|([^|]*)\\|",
            Pattern.MULTILINE);
    /** "0 = never, or 1000 to 3600000", "a power of two, 64 to 16777216", "1 or more", "0 to 65535; 0 = ...". */
    private static final Pattern RANGE = Pattern.compile(
            "^(?<zero>0 = [^,]+, or )?(?<pow2>a power of two, )?(?<min>\\d+)(?: to (?<max>\\d+)| or more)");
    /** What an enabled cluster needs besides the key under test, so that its ranges are checked. */
    private static final String CLUSTER = "  enabled: true\n  nodeName: a\n"
            + "  members: [{name: a, host: h, membershipPort: 7801}]\n";

    /** A documented range: {@code min..max}, also 0 when {@code zeroAllowed}, only powers of two when {@code powerOfTwo}. */
    record Range(String key, long min, long max, boolean zeroAllowed, boolean powerOfTwo, boolean unbounded) {
        @Override
        public String toString() {
            return key + " " + (zeroAllowed ? "0 or " : "") + min + ".." + (unbounded ? "" : max);
        }
    }

    static Stream<Range> documentedRanges() {
        return ranges().values().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedRanges")
    void bothEndsOfTheDocumentedRangeAreAccepted(Range r) {
        assertThat(bound(r.key, r.min)).as("lowest").isEqualTo(r.min);
        assertThat(bound(r.key, r.max)).as("highest").isEqualTo(r.max);
        if (r.zeroAllowed) {
            assertThat(bound(r.key, 0)).as("0, the special value").isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedRanges")
    void oneBelowTheLowestIsRefusedNamingTheKey(Range r) {
        long below = r.min - 1;
        if (below != 0 || !r.zeroAllowed) {
            assertRefusedNamingTheKey(r.key, below);
        }
        if (r.zeroAllowed) {
            assertRefusedNamingTheKey(r.key, -1); // 0 is special; below it is not
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedRanges")
    void oneAboveTheHighestIsRefusedNamingTheKey(Range r) {
        if (r.unbounded) {
            return; // "N or more": the highest is the type's largest value, accepted above
        }
        assertRefusedNamingTheKey(r.key, r.powerOfTwo ? r.max * 2 : r.max + 1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documentedRanges")
    void aValueInsideTheRangeThatIsNotAPowerOfTwoIsRefusedWhereOneIsRequired(Range r) {
        if (r.powerOfTwo) {
            assertRefusedNamingTheKey(r.key, r.min + 1);
            assertThat(bound(r.key, r.min * 2)).isEqualTo(r.min * 2);
        }
    }

    @Test
    void everyIntegerKeyHasADocumentedRange() {
        List<String> integerKeys = new ArrayList<>();
        for (RecordComponent section : ServerConfig.class.getRecordComponents()) {
            if (!section.getType().isRecord()) {
                continue;
            }
            for (RecordComponent key : section.getType().getRecordComponents()) {
                if (key.getType() == int.class || key.getType() == long.class) {
                    integerKeys.add(section.getName() + "." + key.getName());
                }
            }
        }

        assertThat(ranges().keySet()).as("integer keys whose valid values docs/configuration.md states as a range")
                .containsExactlyInAnyOrderElementsOf(integerKeys);
    }

    // ---------------------------------------------------------------------------------------------

    /** The documented ranges of integer keys, by key; an unbounded one ends at its type's largest value. */
    private static Map<String, Range> ranges() {
        String doc;
        try {
            doc = Files.readString(DOC, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Range> ranges = new TreeMap<>();
        Matcher row = ROW.matcher(doc);
        while (row.find()) {
            String key = row.group(1);
            if (!row.group(2).strip().startsWith("integer")) {
                continue;
            }
            Matcher m = RANGE.matcher(row.group(3).strip());
            assertThat(m.find()).as("the valid values of %s read as a range: %s", key, row.group(3)).isTrue();
            boolean unbounded = m.group("max") == null;
            long max = unbounded ? largest(key) : Long.parseLong(m.group("max"));
            ranges.put(key, new Range(key, Long.parseLong(m.group("min")), max, m.group("zero") != null,
                    m.group("pow2") != null, unbounded));
        }
        return ranges;
    }

    private static long largest(String key) {
        String[] names = key.split("\\.");
        Class<?> section = component(ServerConfig.class, names[0]).getType();
        return component(section, names[1]).getType() == long.class ? Long.MAX_VALUE : Integer.MAX_VALUE;
    }

    private static RecordComponent component(Class<?> record, String name) {
        return Arrays.stream(record.getRecordComponents()).filter(c -> c.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no key " + name + " in " + record.getSimpleName()));
    }

    private static String yaml(String key, long value) {
        String yaml = setting(key, Long.toString(value));
        return key.startsWith("cluster.") ? yaml + CLUSTER : yaml;
    }

    /** The value {@code key} has once {@code value} is loaded. */
    private static long bound(String key, long value) {
        JsonNode node = new ObjectMapper().valueToTree(ConfigLoader.fromYaml(yaml(key, value)))
                .at("/" + key.replace('.', '/'));
        assertThat(node.isIntegralNumber()).as("%s bound as an integer", key).isTrue();
        return node.longValue();
    }

    private static void assertRefusedNamingTheKey(String key, long value) {
        ConfigException e = refusal(yaml(key, value));

        assertThat(e.key()).as("key of the refusal of %s: %s", value, e.getMessage()).hasValue(key);
        assertThat(e).hasMessageStartingWith("key '" + key + "' must be ").hasMessageEndingWith(", got " + value);
    }
}
