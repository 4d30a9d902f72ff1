package io.ringcast.server.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random JSON values with their exact text, for the randomized tests: each generated node keeps the
 * bytes it was written as (spacing and escapes included) and what they mean (keys and strings
 * decoded, numbers as text), so a test can compute by hand what a projection must copy and what a
 * filter must decide. Keys and strings come from small pools so that paths and literals meet them.
 */
final class RandomJson {
    static final String[] KEYS = {"a", "b", "q", "bid", "é", "価"};
    static final String[] STRINGS = {"", "x", "LSE", "é", "e\u0301", "😀", "東京", "a\"b", "a\\b", "\n", "/", "\u0000", "\uffff"};

    /** A generated node: an object, an array or a scalar, and its exact text. */
    abstract static class Node {
        String text;
    }

    static final class Obj extends Node {
        final List<String> keys = new ArrayList<>();
        final List<Node> values = new ArrayList<>();

        /** The value of the first occurrence of {@code key}, or null. */
        Node get(String key) {
            int i = keys.indexOf(key);
            return i < 0 ? null : values.get(i);
        }
    }

    static final class Arr extends Node {
    }

    enum Kind { NUMBER, STRING, TRUE, FALSE, NULL }

    static final class Scalar extends Node {
        final Kind kind;
        /** The number's text, or the string decoded. */
        final String value;

        Scalar(Kind kind, String value, String text) {
            this.kind = kind;
            this.value = value;
            this.text = text;
        }
    }

    private final Random random;

    RandomJson(Random random) {
        this.random = random;
    }

    Obj object(int depth) {
        Obj o = new Obj();
        StringBuilder t = new StringBuilder("{").append(space());
        int n = random.nextInt(depth == 0 ? 6 : 4);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                t.append(space()).append(',').append(space());
            }
            String key = KEYS[random.nextInt(KEYS.length)];
            Node value = value(depth + 1);
            o.keys.add(key);
            o.values.add(value);
            t.append(stringText(key)).append(space()).append(':').append(space()).append(value.text);
        }
        o.text = t.append(space()).append('}').toString();
        return o;
    }

    Node value(int depth) {
        int r = random.nextInt(10);
        if (r < 3 && depth < 4) {
            return object(depth);
        }
        if (r == 3 && depth < 4) {
            Arr a = new Arr();
            StringBuilder t = new StringBuilder("[").append(space());
            for (int i = random.nextInt(3); i > 0; i--) {
                t.append(value(depth + 1).text).append(i > 1 ? space() + "," + space() : "");
            }
            a.text = t.append(space()).append(']').toString();
            return a;
        }
        switch (random.nextInt(6)) {
            case 0:
            case 1: {
                String n = random.nextInt(3) == 0 ? number(random) : Integer.toString(random.nextInt(4) - 1);
                return new Scalar(Kind.NUMBER, n, n);
            }
            case 2: {
                String s = STRINGS[random.nextInt(STRINGS.length)];
                return new Scalar(Kind.STRING, s, stringText(s));
            }
            case 3:
                return new Scalar(Kind.TRUE, "true", "true");
            case 4:
                return new Scalar(Kind.FALSE, "false", "false");
            default:
                return new Scalar(Kind.NULL, "null", "null");
        }
    }

    /** {@code s} as a JSON string, each character raw or escaped at random (raw only where JSON allows). */
    String stringText(String s) {
        StringBuilder t = new StringBuilder("\"");
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            boolean mustEscape = c == '"' || c == '\\' || c < 0x20;
            if (mustEscape || random.nextInt(5) == 0) {
                if (c == '"' || c == '\\' || c == '/' && random.nextBoolean()) {
                    t.append('\\').append((char) c);
                } else if (c == '\n' && random.nextBoolean()) {
                    t.append("\\n");
                } else {
                    // a code point above U+FFFF is escaped as its two surrogates, never half of it
                    for (char unit : Character.toChars(c)) {
                        t.append(String.format(random.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) unit));
                    }
                }
            } else {
                t.appendCodePoint(c);
            }
        }
        return t.append('"').toString();
    }

    private String space() {
        int r = random.nextInt(8);
        return r < 5 ? "" : r == 5 ? " " : r == 6 ? "\n  " : "\t";
    }

    /** A JSON number: a sign, 0 or up to 30 digits, maybe a fraction with zeros, maybe an exponent. */
    static String number(Random random) {
        StringBuilder s = new StringBuilder();
        if (random.nextBoolean()) {
            s.append('-');
        }
        if (random.nextInt(4) == 0) {
            s.append('0');
        } else {
            s.append((char) ('1' + random.nextInt(9)));
            digits(s, random, random.nextInt(random.nextInt(4) == 0 ? 30 : 4));
        }
        if (random.nextBoolean()) {
            s.append('.');
            digits(s, random, 1 + random.nextInt(random.nextInt(4) == 0 ? 25 : 4));
        }
        if (random.nextInt(3) == 0) {
            s.append(random.nextBoolean() ? 'e' : 'E');
            int r = random.nextInt(3);
            s.append(r == 0 ? "" : r == 1 ? "+" : "-");
            s.append(random.nextInt(4) == 0 ? random.nextInt(400) : random.nextInt(5));
        }
        return s.toString();
    }

    private static void digits(StringBuilder s, Random random, int n) {
        for (int i = 0; i < n; i++) {
            // zeros are common, so that runs of leading and trailing zeros happen
            s.append(random.nextInt(3) == 0 ? '0' : (char) ('0' + random.nextInt(10)));
        }
    }

    /** {@code s} for a failure message: non-ASCII and control characters as {@code <U+XXXX>}, so reports stay readable. */
    static String printable(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c > 0x7e) {
                out.append(String.format("<U+%04X>", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** {@code text}'s bytes damaged a few times: a byte replaced, inserted or dropped, or the end cut. */
    static byte[] damaged(byte[] text, Random random) {
        List<Byte> b = new ArrayList<>();
        for (byte x : text) {
            b.add(x);
        }
        byte[] tokens = "{}[]\",:\\ 0-.etnu".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int k = 1 + random.nextInt(3); k > 0; k--) {
            int at = b.isEmpty() ? 0 : random.nextInt(b.size());
            byte x = random.nextBoolean() ? tokens[random.nextInt(tokens.length)] : (byte) random.nextInt(256);
            switch (random.nextInt(4)) {
                case 0:
                    if (!b.isEmpty()) {
                        b.set(at, x);
                    }
                    break;
                case 1:
                    b.add(at, x);
                    break;
                case 2:
                    if (!b.isEmpty()) {
                        b.remove(at);
                    }
                    break;
                default:
                    b.subList(at, b.size()).clear();
            }
        }
        byte[] out = new byte[b.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = b.get(i);
        }
        return out;
    }
}
