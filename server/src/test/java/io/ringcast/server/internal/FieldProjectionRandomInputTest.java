package io.ringcast.server.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.server.internal.RandomJson.Obj;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static io.ringcast.server.internal.JsonValueFixtures.project;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link FieldProjection} on random input, from fixed seeds: random path lists give a projection or
 * an {@link InvalidOptionsException} for {@code fields}, nothing else; random bytes and damaged JSON
 * never make {@link FieldProjection#project} throw, and always give an object within
 * {@link FieldProjection#maxBytes} (valid JSON, and no longer than the value, when the value was
 * a valid object); and on random valid values the projection is exactly the
 * documented one, computed here by hand.
 */
@Timeout(60)
class FieldProjectionRandomInputTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] PATHS = {"a", "b", "q", "bid", "é", "価", "q.a", "q.b", "q.q", "q.q.a", "a.b", "a.q.bid",
            "b.é.価"};
    private static final String ALPHABET = "abq.é价 /\"'\t-_$@0😀\ud800";

    @Test
    void randomPathListsGiveAProjectionOrARefusalForFields() {
        Random random = new Random(1611);
        for (int i = 0; i < 20_000; i++) {
            List<String> paths = new ArrayList<>();
            for (int n = random.nextInt(random.nextInt(10) == 0 ? 40 : 5); n > 0; n--) {
                if (random.nextBoolean()) {
                    paths.add(PATHS[random.nextInt(PATHS.length)]);
                } else {
                    StringBuilder s = new StringBuilder();
                    for (int k = random.nextInt(random.nextInt(20) == 0 ? 300 : 12); k > 0; k--) {
                        s.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
                    }
                    paths.add(s.toString());
                }
            }
            try {
                FieldProjection.parse(paths);
            } catch (InvalidOptionsException e) {
                assertThat(e.option()).isEqualTo("fields");
                assertThat(e.getMessage()).startsWith("fields: ");
            } catch (Throwable t) {
                fail("parse threw " + t + " for " + paths, t);
            }
        }
    }

    @Test
    void randomBytesAndDamagedJsonProjectToAnObjectWithinMaxBytes() {
        Random random = new Random(1612);
        RandomJson json = new RandomJson(random);
        List<FieldProjection> projections = List.of(FieldProjection.parse(List.of("a")),
                FieldProjection.parse(List.of("q.a", "b", "q.q.a")), FieldProjection.parse(List.of("bid", "é", "価", "q.b")));
        int validObjects = 0;
        for (int i = 0; i < 8_000; i++) {
            byte[] value;
            if (random.nextInt(4) == 0) {
                value = new byte[random.nextInt(48)];
                random.nextBytes(value);
                if (value.length > 0 && random.nextBoolean()) {
                    value[0] = '{';
                }
            } else {
                byte[] text = json.object(0).text.getBytes(StandardCharsets.UTF_8);
                value = random.nextInt(3) == 0 ? text : RandomJson.damaged(text, random);
            }
            FieldProjection p = projections.get(random.nextInt(projections.size()));
            byte[] out;
            try {
                out = project(p, value);
            } catch (Throwable t) {
                fail(p + " threw " + t + " on " + Arrays.toString(value), t);
                return;
            }
            assertThat(out.length).as("length").isBetween(2, FieldProjection.maxBytes(value.length));
            assertThat(out[0]).isEqualTo((byte) '{');
            assertThat(out[out.length - 1]).isEqualTo((byte) '}');
            if (isJsonObject(value)) {
                validObjects++;
                assertThat(isJsonObject(out)).as("projection of a valid object: %s",
                        new String(out, StandardCharsets.UTF_8)).isTrue();
                assertThat(out.length).as("a complete object's projection is no longer than it")
                        .isLessThanOrEqualTo(value.length);
            }
        }
        assertThat(validObjects).as("the sample holds valid objects too").isGreaterThan(2_000);
    }

    private static boolean isJsonObject(byte[] bytes) {
        try {
            return JSON.readTree(bytes).isObject();
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void onRandomValuesTheProjectionIsTheDocumentedOne() {
        Random random = new Random(1613);
        RandomJson json = new RandomJson(random);
        int nonEmpty = 0;
        for (int i = 0; i < 2_000; i++) {
            List<String> paths = randomPaths(random);
            FieldProjection p = FieldProjection.parse(paths);
            for (int v = 0; v < 5; v++) {
                Obj value = json.object(0);
                String expected = expected(value, paths, "");
                expected = expected == null ? "{}" : expected;
                assertThat(RandomJson.printable(project(p, value.text))).as("%s of %s", paths, RandomJson.printable(value.text))
                        .isEqualTo(RandomJson.printable(expected));
                nonEmpty += expected.equals("{}") ? 0 : 1;
            }
        }
        assertThat(nonEmpty).as("the sample projects something too").isGreaterThan(2_000);
    }

    /** One to four distinct paths, none inside another. */
    private static List<String> randomPaths(Random random) {
        List<String> paths = new ArrayList<>();
        for (int n = 1 + random.nextInt(4); n > 0; n--) {
            String candidate = PATHS[random.nextInt(PATHS.length)];
            boolean overlaps = paths.stream().anyMatch(p -> p.equals(candidate)
                    || p.startsWith(candidate + ".") || candidate.startsWith(p + "."));
            if (!overlaps) {
                paths.add(candidate);
            }
        }
        return paths;
    }

    /**
     * The documented projection of {@code obj}, whose key is at {@code prefix} ("" for the root): its
     * named fields in its order, first occurrences only, leaves as their text, objects on the way
     * only when something under them is; null when nothing is.
     */
    private static String expected(Obj obj, List<String> paths, String prefix) {
        StringBuilder out = new StringBuilder("{");
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < obj.keys.size(); i++) {
            String key = obj.keys.get(i);
            if (!seen.add(key)) {
                continue;
            }
            String path = prefix + key;
            String part = null;
            if (paths.contains(path)) {
                part = obj.values.get(i).text;
            } else if (obj.values.get(i) instanceof Obj && paths.stream().anyMatch(p -> p.startsWith(path + "."))) {
                part = expected((Obj) obj.values.get(i), paths, path + ".");
            }
            if (part != null) {
                out.append(out.length() > 1 ? "," : "").append('"').append(key).append("\":").append(part);
            }
        }
        return out.length() > 1 ? out.append('}').toString() : null;
    }
}
