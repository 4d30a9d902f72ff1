package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shared read of a large value ({@link ValueIndex}) changes no view's answer: on random valid
 * values, damaged ones, random bytes and values that are not objects, every filter matches and
 * every projection writes exactly what it does reading the value on its own, for random sets of
 * filters and projections sharing one index (paths in common, nested ones, one path a leaf for one
 * view and the way to another's).
 */
@Timeout(60)
class ValueIndexTest {
    private static final String[] PATHS = {"a", "b", "q", "bid", "é", "価", "q.a", "q.b", "q.q", "q.q.a", "a.b",
            "a.q.bid", "q.q.b"};
    private static final String[] OPS = {"=", "!=", "<", ">=", "in"};
    private static final String[] LITERALS = {"1", "-2.5e1", "'x'", "'LSE'", "true", "null", "0"};

    private static ValueFilter randomFilter(Random random) {
        StringBuilder text = new StringBuilder();
        for (int c = 1 + random.nextInt(3); c > 0; c--) {
            if (!text.isEmpty()) {
                text.append(random.nextBoolean() ? " and " : " or ");
            }
            if (random.nextInt(4) == 0) {
                text.append("not ");
            }
            String literal = LITERALS[random.nextInt(LITERALS.length)];
            boolean orderable = !literal.equals("true") && !literal.equals("null");
            String op = OPS[random.nextInt(orderable ? OPS.length : 2)];
            text.append('(').append(PATHS[random.nextInt(PATHS.length)]).append(' ').append(op).append(' ')
                    .append(op.equals("in") ? "[" + literal + ", 'x']" : literal).append(')');
        }
        return ValueFilter.parse(text.toString());
    }

    private static FieldProjection randomProjection(Random random) {
        while (true) {
            List<String> paths = new ArrayList<>();
            for (int n = 1 + random.nextInt(4); n > 0; n--) {
                String p = PATHS[random.nextInt(PATHS.length)];
                if (!paths.contains(p)) {
                    paths.add(p);
                }
            }
            try {
                return FieldProjection.parse(paths);
            } catch (InvalidOptionsException insideAnother) {
                // draw again
            }
        }
    }

    private static byte[] randomValue(Random random, RandomJson json) {
        switch (random.nextInt(6)) {
            case 0:
                return RandomJson.damaged(json.object(0).text.getBytes(StandardCharsets.UTF_8), random);
            case 1: {
                byte[] bytes = new byte[random.nextInt(40)];
                random.nextBytes(bytes);
                if (bytes.length > 0) {
                    bytes[0] = '{';
                }
                return bytes;
            }
            case 2:
                return random.nextBoolean() ? "[1, 2]".getBytes(StandardCharsets.UTF_8) : "\"text\"".getBytes(StandardCharsets.UTF_8);
            default:
                return json.object(0).text.getBytes(StandardCharsets.UTF_8);
        }
    }

    @Test
    void filtersAndProjectionsReadingAnIndexAnswerAsReadingTheValueOnTheirOwn() {
        Random random = new Random(2911);
        RandomJson json = new RandomJson(random);
        ByteBuf projected = Unpooled.buffer();
        ByteBuf direct = Unpooled.buffer();
        int matchedWithIndex = 0;
        int fieldsShown = 0;
        for (int round = 0; round < 3_000; round++) {
            List<ValueFilter> filters = new ArrayList<>();
            List<FieldProjection> projections = new ArrayList<>();
            Map<String, FieldPath> paths = new LinkedHashMap<>();
            for (int n = 1 + random.nextInt(4); n > 0; n--) {
                ValueFilter f = randomFilter(random);
                filters.add(f);
                f.paths().forEach(p -> paths.putIfAbsent(p.text(), p));
            }
            for (int n = 1 + random.nextInt(4); n > 0; n--) {
                FieldProjection p = randomProjection(random);
                projections.add(p);
                p.paths().forEach(path -> paths.putIfAbsent(path.text(), path));
            }
            ValueIndex index = ValueIndex.of(new ArrayList<>(paths.values()));
            for (int v = 0; v < 5; v++) {
                byte[] bytes = randomValue(random, json);
                // the value at an offset in a larger buffer, as a topic's frame holds it
                ByteBuf buffer = Unpooled.buffer().writeBytes("xxxxxxx".getBytes(StandardCharsets.UTF_8)).writeBytes(bytes)
                        .writeBytes("}}".getBytes(StandardCharsets.UTF_8));
                index.read(buffer, 7, bytes.length);
                String shown = RandomJson.printable(new String(bytes, StandardCharsets.UTF_8));
                for (ValueFilter f : filters) {
                    boolean alone = f.matches(buffer, 7, bytes.length);
                    assertThat(f.matches(index)).as("%s on %s", f, shown).isEqualTo(alone);
                    matchedWithIndex += alone ? 1 : 0;
                }
                for (FieldProjection p : projections) {
                    direct.clear();
                    projected.clear();
                    p.project(buffer, 7, bytes.length, direct);
                    p.project(index, projected);
                    assertThat(projected.toString(StandardCharsets.UTF_8)).as("%s of %s", p, shown)
                            .isEqualTo(direct.toString(StandardCharsets.UTF_8));
                    fieldsShown += direct.readableBytes() > 2 ? 1 : 0;
                }
            }
        }
        assertThat(matchedWithIndex).as("the sample has values that pass").isGreaterThan(5_000);
        assertThat(fieldsShown).as("the sample has projections that show fields").isGreaterThan(5_000);
    }
}
