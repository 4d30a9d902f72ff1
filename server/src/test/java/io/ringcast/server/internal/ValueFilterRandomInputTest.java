package io.ringcast.server.internal;

import io.ringcast.server.internal.RandomJson.Arr;
import io.ringcast.server.internal.RandomJson.Kind;
import io.ringcast.server.internal.RandomJson.Node;
import io.ringcast.server.internal.RandomJson.Obj;
import io.ringcast.server.internal.RandomJson.Scalar;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ringcast.server.internal.JsonValueFixtures.matches;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link ValueFilter} on random input, from fixed seeds: random and damaged filter texts give a
 * filter or an {@link InvalidOptionsException} naming a column inside the text, nothing else;
 * random bytes and damaged JSON never make {@link ValueFilter#matches} throw; and on random valid
 * values, random filters decide exactly as the documented semantics, computed here by hand, do.
 */
@Timeout(60)
class ValueFilterRandomInputTest {
    private static final Pattern COLUMN = Pattern.compile(" at column (\\d+)");
    private static final String[] PATHS = {"a", "b", "q", "bid", "é", "価", "q.a", "q.b", "q.q", "q.q.a", "a.b", "a.q.bid"};
    private static final String ALPHABET = "abqxn ot.=!<>()[],'\"\\-+019eE\t\n_$@é価😀\u0000\ud800";
    private static final List<String> VALID = List.of(
            "spread < 0.0005 and venue in ['LSE', 'XETRA']", "not (a = 1 or b != 'x') and q.a >= -1e3",
            "x in [1, '1', true, null]", "s = \"a\\\"b\\u00e9\"", "((a = 1))", "not not a > 0");

    private static void assertParsesOrRefusesWithAColumnInside(String text) {
        try {
            ValueFilter.parse(text);
        } catch (InvalidOptionsException e) {
            assertThat(e.option()).isEqualTo("filter");
            assertThat(e.getMessage()).startsWith("filter: ");
            Matcher m = COLUMN.matcher(e.getMessage());
            if (m.find()) {
                int column = Integer.parseInt(m.group(1));
                assertThat(column).as("column in %s for [%s]", e.getMessage(), text)
                        .isBetween(1, text.codePointCount(0, text.length()) + 1);
            } else {
                assertThat(e.getMessage()).as("a message without a column is about the whole text: [%s]", text)
                        .isIn("filter: empty", "filter: longer than 1024 characters (" + text.length() + ")");
            }
        } catch (Throwable t) {
            fail("parse threw " + t + " for [" + text + "]", t);
        }
    }

    @Test
    void randomTextGivesAFilterOrARefusalNamingAColumnInsideIt() {
        Random random = new Random(1601);
        for (int i = 0; i < 30_000; i++) {
            StringBuilder s = new StringBuilder();
            for (int n = random.nextInt(40); n > 0; n--) {
                s.appendCodePoint(ALPHABET.codePointAt(ALPHABET.offsetByCodePoints(0,
                        random.nextInt(ALPHABET.codePointCount(0, ALPHABET.length())))));
            }
            assertParsesOrRefusesWithAColumnInside(s.toString());
        }
        assertParsesOrRefusesWithAColumnInside("x = '" + "a".repeat(2000) + "'");
    }

    @Test
    void damagedFiltersGiveAFilterOrARefusalNamingAColumnInsideIt() {
        Random random = new Random(1602);
        for (int i = 0; i < 30_000; i++) {
            StringBuilder s = new StringBuilder(VALID.get(random.nextInt(VALID.size())));
            for (int k = 1 + random.nextInt(3); k > 0; k--) {
                int at = random.nextInt(s.length() + 1);
                char c = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
                switch (random.nextInt(3)) {
                    case 0:
                        s.insert(at, c);
                        break;
                    case 1:
                        if (at < s.length()) {
                            s.deleteCharAt(at);
                        }
                        break;
                    default:
                        if (at < s.length()) {
                            s.setCharAt(at, c);
                        }
                }
            }
            assertParsesOrRefusesWithAColumnInside(s.toString());
        }
    }

    @Test
    void randomBytesAndDamagedJsonNeverMakeMatchingThrow() {
        Random random = new Random(1603);
        RandomJson json = new RandomJson(random);
        List<ValueFilter> filters = new ArrayList<>();
        for (String text : VALID) {
            filters.add(ValueFilter.parse(text));
        }
        filters.add(ValueFilter.parse("not (a = 1)"));
        filters.add(ValueFilter.parse("q.q.a in [1, 'x', null] or bid > 0.5"));
        for (int i = 0; i < 10_000; i++) {
            byte[] value;
            if (random.nextBoolean()) {
                value = new byte[random.nextInt(48)];
                random.nextBytes(value);
                if (value.length > 0 && random.nextBoolean()) {
                    value[0] = '{';
                }
            } else {
                value = RandomJson.damaged(json.object(0).text.getBytes(StandardCharsets.UTF_8), random);
            }
            ValueFilter f = filters.get(random.nextInt(filters.size()));
            try {
                matches(f, value);
            } catch (Throwable t) {
                fail(f + " threw " + t + " on " + Arrays.toString(value), t);
            }
        }
    }

    @Test
    void onRandomValuesRandomFiltersDecideAsTheDocumentedSemantics() {
        Random random = new Random(1604);
        RandomJson json = new RandomJson(random);
        int matched = 0;
        for (int i = 0; i < 4_000; i++) {
            Expr expr = expr(random, 0);
            String text = expr.text(random);
            ValueFilter filter = ValueFilter.parse(text);
            for (int v = 0; v < 5; v++) {
                Obj value = json.object(0);
                boolean expected = expr.eval(value);
                assertThat(matches(filter, value.text)).as("%s on %s", RandomJson.printable(text), RandomJson.printable(value.text))
                        .isEqualTo(expected);
                matched += expected ? 1 : 0;
            }
        }
        assertThat(matched).as("the sample exercises matches too").isGreaterThan(2_000);
    }

    // ---- random filters and the documented semantics, computed on the generated value ----

    private abstract static class Expr {
        abstract String text(Random random);

        abstract boolean eval(Obj value);
    }

    private static Expr expr(Random random, int depth) {
        int r = random.nextInt(depth >= 3 ? 1 : 4);
        if (r == 0) {
            return comparison(random);
        }
        if (r == 1) {
            Expr inner = expr(random, depth + 1);
            return new Expr() {
                String text(Random rnd) {
                    return "not (" + inner.text(rnd) + ")";
                }

                boolean eval(Obj value) {
                    return !inner.eval(value);
                }
            };
        }
        boolean and = r == 2;
        Expr left = expr(random, depth + 1);
        Expr right = expr(random, depth + 1);
        return new Expr() {
            String text(Random rnd) {
                return "(" + left.text(rnd) + (and ? " and " : " or ") + right.text(rnd) + ")";
            }

            boolean eval(Obj value) {
                return and ? left.eval(value) && right.eval(value) : left.eval(value) || right.eval(value);
            }
        };
    }

    private static final String[] OPS = {"=", "!=", "<", "<=", ">", ">=", "in"};

    private static Expr comparison(Random random) {
        String path = PATHS[random.nextInt(PATHS.length)];
        List<Lit> literals = new ArrayList<>();
        String op;
        Lit first = literal(random);
        literals.add(first);
        boolean orderable = first.kind == Kind.NUMBER || first.kind == Kind.STRING;
        op = OPS[random.nextInt(orderable ? OPS.length : 2)];
        if (random.nextInt(4) == 0) {
            op = "in";
        }
        if (op.equals("in")) {
            for (int n = random.nextInt(4); n > 0; n--) {
                literals.add(literal(random));
            }
        }
        String operator = op;
        return new Expr() {
            String text(Random rnd) {
                // "in" is a keyword: it needs a space after a path; an operator does not
                StringBuilder t = new StringBuilder(path).append(operator.equals("in") || rnd.nextBoolean() ? " " : "")
                        .append(operator).append(' ');
                if (operator.equals("in")) {
                    t.append('[');
                    for (int i = 0; i < literals.size(); i++) {
                        t.append(i > 0 ? ", " : "").append(literals.get(i).text(rnd));
                    }
                    return t.append(']').toString();
                }
                return t.append(literals.get(0).text(rnd)).toString();
            }

            boolean eval(Obj value) {
                Node field = lookUp(value, path);
                if (operator.equals("in")) {
                    return literals.stream().map(l -> compare(field, l)).anyMatch(c -> c != null && c == 0);
                }
                Integer c = compare(field, literals.get(0));
                if (c == null) {
                    return false;
                }
                switch (operator) {
                    case "=": return c == 0;
                    case "!=": return c != 0;
                    case "<": return c < 0;
                    case "<=": return c <= 0;
                    case ">": return c > 0;
                    default: return c >= 0;
                }
            }
        };
    }

    /** The field {@code path} names: through objects only, the first occurrence of a key; null when missing. */
    private static Node lookUp(Obj root, String path) {
        Node node = root;
        for (String segment : path.split("\\.")) {
            if (!(node instanceof Obj)) {
                return null;
            }
            node = ((Obj) node).get(segment);
            if (node == null) {
                return null;
            }
        }
        return node;
    }

    /** The field against the literal; null when missing or of another type (every comparison false). */
    private static Integer compare(Node field, Lit literal) {
        if (!(field instanceof Scalar) || field instanceof Arr) {
            return null;
        }
        Scalar s = (Scalar) field;
        Kind type = s.kind == Kind.FALSE ? Kind.TRUE : s.kind;
        Kind literalType = literal.kind == Kind.FALSE ? Kind.TRUE : literal.kind;
        if (type != literalType) {
            return null;
        }
        switch (s.kind) {
            case NUMBER:
                return Integer.signum(new BigDecimal(s.value).compareTo(new BigDecimal(literal.value)));
            case STRING:
                return Integer.signum(Arrays.compare(s.value.codePoints().toArray(), literal.value.codePoints().toArray()));
            case NULL:
                return 0;
            default:
                return s.kind == literal.kind ? 0 : 1;
        }
    }

    private static final class Lit {
        final Kind kind;
        final String value;

        Lit(Kind kind, String value) {
            this.kind = kind;
            this.value = value;
        }

        String text(Random random) {
            if (kind != Kind.STRING) {
                return value;
            }
            char quote = random.nextBoolean() ? '\'' : '"';
            StringBuilder t = new StringBuilder().append(quote);
            for (char c : value.toCharArray()) {
                if (c == quote || c == '\\') {
                    t.append('\\').append(c);
                } else if (random.nextInt(4) == 0) {
                    t.append(String.format("\\u%04x", (int) c));
                } else {
                    t.append(c);
                }
            }
            return t.append(quote).toString();
        }
    }

    private static Lit literal(Random random) {
        switch (random.nextInt(8)) {
            case 0:
            case 1:
            case 2: {
                String[] small = {"-1", "0", "-0", "1", "1.0", "1e0", "10e-1", "2", "0.5", "2E0"};
                return new Lit(Kind.NUMBER, random.nextInt(3) == 0 ? RandomJson.number(random) : small[random.nextInt(small.length)]);
            }
            case 3:
            case 4:
                return new Lit(Kind.STRING, RandomJson.STRINGS[random.nextInt(RandomJson.STRINGS.length)]);
            case 5:
                return new Lit(Kind.TRUE, "true");
            case 6:
                return new Lit(Kind.FALSE, "false");
            default:
                return new Lit(Kind.NULL, "null");
        }
    }
}
