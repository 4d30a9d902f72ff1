package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;

/**
 * A number of a filter, compared exactly with the number text of a value: the result is
 * {@link java.math.BigDecimal#compareTo}'s on the two texts ({@code 0.10 = 0.1}, {@code 1e3 = 1000},
 * {@code -0 = 0}, {@code 0.1 + 0.2} style rounding never enters), computed on the characters Jackson
 * already holds, without building a BigDecimal, a double or a String per comparison.
 *
 * <p>Why not double: two decimals that differ only past the 15th or 17th significant digit, or
 * integers past 2^53 (ids, nanosecond timestamps), would compare equal. Why not BigDecimal: it would
 * allocate a BigDecimal (and Jackson a String) per number per update. The comparison here normalises
 * both numbers to {@code 0.d1d2...dn × 10^e} (no leading or trailing zeros in the digits) and
 * compares sign, then {@code e}, then the digits.
 *
 * <p>A value's exponent is read up to {@link #EXPONENT_CAP} and saturates there; a literal's is
 * limited to {@link #MAX_LITERAL_EXPONENT_DIGITS} digits, so a saturated value's magnitude still
 * compares exactly against every literal. Immutable; any thread.
 */
final class NumberLiteral {
    /** Digits of a literal's exponent: {@code 1e999999999} is accepted, {@code 1e1000000000} is not. */
    static final int MAX_LITERAL_EXPONENT_DIGITS = 9;
    /** A value's exponent beyond this is read as this; far beyond any literal's (see the class javadoc). */
    static final long EXPONENT_CAP = 1_000_000_000_000_000L;

    private final String text;
    /** -1, 0 or 1. */
    private final int signum;
    /** The significant digits, '1'..'9' first and last; empty for zero. */
    private final char[] digits;
    /** The value is {@code 0.digits × 10^exponent}. */
    private final long exponent;

    private NumberLiteral(String text, int signum, char[] digits, long exponent) {
        this.text = text;
        this.signum = signum;
        this.digits = digits;
        this.exponent = exponent;
    }

    /**
     * The number {@code text} writes in JSON's grammar
     * ({@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}), or null when it is not one or
     * its exponent has more than {@link #MAX_LITERAL_EXPONENT_DIGITS} digits (see {@link #exponentTooLong}).
     */
    static NumberLiteral parse(String text) {
        if (!isJsonNumber(text) || exponentTooLong(text)) {
            return null;
        }
        char[] chars = text.toCharArray();
        Scan s = new Scan();
        s.scan(chars, 0, chars.length);
        if (s.signum == 0) {
            return new NumberLiteral(text, 0, new char[0], 0);
        }
        StringBuilder d = new StringBuilder();
        for (int i = s.first; i <= s.last; i++) {
            if (chars[i] != '.') {
                d.append(chars[i]);
            }
        }
        return new NumberLiteral(text, s.signum, d.toString().toCharArray(), s.exponent);
    }

    /** Whether {@code text} is a number in JSON's grammar, all of it: Jackson's reading of it as one number token. */
    static boolean isJsonNumber(String text) {
        try (JsonParser parser = JsonValueInput.JSON.createParser(text)) {
            JsonToken token = parser.nextToken();
            return (token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT)
                    && parser.currentTokenLocation().getCharOffset() == 0 // no whitespace before
                    && parser.getTextLength() == text.length() // nor after
                    && parser.nextToken() == null;
        } catch (IOException notOne) {
            return false;
        }
    }

    /** Whether the exponent of JSON number {@code text} has more than {@link #MAX_LITERAL_EXPONENT_DIGITS} digits (leading zeros aside). */
    static boolean exponentTooLong(String text) {
        int e = Math.max(text.indexOf('e'), text.indexOf('E'));
        if (e < 0) {
            return false;
        }
        int i = e + 1;
        if (text.charAt(i) == '+' || text.charAt(i) == '-') {
            i++;
        }
        while (i < text.length() - 1 && text.charAt(i) == '0') {
            i++;
        }
        return text.length() - i > MAX_LITERAL_EXPONENT_DIGITS;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** The literal as the filter wrote it. */
    String text() {
        return text;
    }

    /**
     * Compares the number Jackson holds as {@code length} characters of {@code value} from
     * {@code offset} (a JSON number's text) with this literal: negative, zero or positive as the
     * value is less than, equal to or greater than it. Allocates nothing.
     *
     * @param scan reused scratch of the calling evaluator
     */
    int compareValue(char[] value, int offset, int length, Scan scan) {
        scan.scan(value, offset, length);
        if (scan.signum != signum) {
            return Integer.compare(scan.signum, signum);
        }
        if (signum == 0) {
            return 0;
        }
        int magnitude = scan.exponent != exponent ? Long.compare(scan.exponent, exponent)
                : compareDigits(value, scan.first, scan.last);
        return signum * magnitude;
    }

    /** The value's significant digits, from {@code first} to {@code last} (skipping the point), against {@link #digits}. */
    private int compareDigits(char[] value, int first, int last) {
        int k = 0;
        for (int i = first; i <= last; i++) {
            char c = value[i];
            if (c == '.') {
                continue;
            }
            if (k == digits.length) {
                return 1; // the value has a non-zero digit more
            }
            if (c != digits[k]) {
                return c < digits[k] ? -1 : 1;
            }
            k++;
        }
        return k == digits.length ? 0 : -1;
    }

    @Override
    public String toString() {
        return text;
    }

    /**
     * Where the significant digits of a number's text are and its exponent, as
     * {@code 0.d1d2...dn × 10^exponent}. Reused by one evaluator; not thread-safe. Reads any text
     * without throwing: a character it does not expect ends the part it was reading.
     */
    static final class Scan {
        int signum;
        /** Index of the first and last non-zero digit (the digits between may include the point). */
        int first;
        int last;
        long exponent;

        void scan(char[] t, int offset, int length) {
            int end = offset + length;
            int i = offset;
            boolean negative = i < end && t[i] == '-';
            if (negative) {
                i++;
            }
            int mantissaStart = i;
            int point = -1;
            while (i < end && (isDigit(t[i]) || t[i] == '.' && point < 0)) {
                if (t[i] == '.') {
                    point = i;
                }
                i++;
            }
            int mantissaEnd = i;
            if (point < 0) {
                point = mantissaEnd;
            }
            long exp = 0;
            if (i < end && (t[i] == 'e' || t[i] == 'E')) {
                i++;
                boolean negativeExp = i < end && t[i] == '-';
                if (i < end && (t[i] == '-' || t[i] == '+')) {
                    i++;
                }
                for (; i < end && isDigit(t[i]); i++) {
                    // saturate instead of overflowing: the class javadoc says why that stays exact
                    exp = Math.min(EXPONENT_CAP, exp * 10 + (t[i] - '0'));
                }
                if (negativeExp) {
                    exp = -exp;
                }
            }
            int f = mantissaStart;
            while (f < mantissaEnd && (t[f] == '0' || t[f] == '.')) {
                f++;
            }
            if (f == mantissaEnd) {
                signum = 0;
                return;
            }
            int l = mantissaEnd - 1;
            while (t[l] == '0' || t[l] == '.') {
                l--;
            }
            signum = negative ? -1 : 1;
            first = f;
            last = l;
            // digits before the point count up, zeros between the point and the first digit down
            exponent = (f < point ? point - f : -(f - point - 1)) + exp;
        }
    }
}
