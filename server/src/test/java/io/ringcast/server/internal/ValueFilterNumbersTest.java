package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter's numbers ({@link NumberLiteral}): the comparison of a value's number text with a
 * literal gives {@link BigDecimal#compareTo}'s answer, for numbers spelled every way JSON allows
 * (checked on a fixed-seed random sample and on the edges), and a literal is accepted exactly when
 * it is a JSON number.
 */
@Timeout(30)
class ValueFilterNumbersTest {
    private static final Pattern JSON_NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");

    private final NumberLiteral.Scan scan = new NumberLiteral.Scan();

    /** The comparison as the filter makes it: the value's text inside a larger char array, as Jackson holds it. */
    private int compare(String value, String literal) {
        NumberLiteral l = NumberLiteral.parse(literal);
        assertThat(l).as(literal).isNotNull();
        char[] chars = ("x:" + value + ",").toCharArray();
        return Integer.signum(l.compareValue(chars, 2, value.length(), scan));
    }

    private static int reference(String value, String literal) {
        return Integer.signum(new BigDecimal(value).compareTo(new BigDecimal(literal)));
    }

    @Test
    void equalNumbersSpelledDifferentlyCompareEqual() {
        String[][] equal = {
                {"0.1", "0.10"}, {"1000", "1e3"}, {"1000", "1E+3"}, {"1000", "10000e-1"}, {"0", "-0"},
                {"0", "0.000e-5"}, {"-0", "-0.0"}, {"0.0005", "5e-4"}, {"0.0005", "50E-5"}, {"12.5", "1.25e1"},
                {"123456789012345678901234567890", "1.2345678901234567890123456789e29"}, {"-7", "-7.000"},
        };
        for (String[] pair : equal) {
            assertThat(compare(pair[0], pair[1])).as("%s = %s", pair[0], pair[1]).isZero();
            assertThat(compare(pair[1], pair[0])).as("%s = %s", pair[1], pair[0]).isZero();
        }
    }

    @Test
    void numbersThatDoublesWouldConfuseCompareExactly() {
        assertThat(compare("9007199254740993", "9007199254740992")).isPositive();
        assertThat(compare("1", "1.00000000000000001")).isNegative();
        assertThat(compare("0.30000000000000004", "0.3")).isPositive();
        assertThat(compare("1e400", "1e399")).isPositive();
        assertThat(compare("1e-400", "0")).isPositive();
        assertThat(compare("-1e-400", "0")).isNegative();
    }

    @Test
    void signsAndMagnitudesOrder() {
        assertThat(compare("-2", "-1")).isNegative();
        assertThat(compare("-1", "-2")).isPositive();
        assertThat(compare("-0.5", "0")).isNegative();
        assertThat(compare("0.5", "-0")).isPositive();
        assertThat(compare("99", "100")).isNegative();
        assertThat(compare("0.099", "0.1")).isNegative();
        assertThat(compare("0.11", "0.1")).isPositive();
        assertThat(compare("0.1", "0.11")).isNegative();
    }

    @Test
    void exponentsBeyondAnyLiteralsSaturateWithoutLosingTheOrder() {
        assertThat(compare("1e99999999999999999999999", "1e999999999")).isPositive();
        assertThat(compare("9e-99999999999999999999999", "1e-999999999")).isNegative();
        assertThat(compare("-1e99999999999999999999999", "-1e999999999")).isNegative();
        assertThat(compare("0e99999999999999999999999", "0")).isZero();
        assertThat(compare("1" + "0".repeat(999), "1e999")).isZero();
    }

    @Test
    void theComparisonIsBigDecimalsOnAFixedSeedRandomSample() {
        Random random = new Random(20_261_127L);
        for (int i = 0; i < 40_000; i++) {
            String literal = RandomJson.number(random);
            String value = random.nextInt(3) == 0 ? respell(new BigDecimal(literal), random) : RandomJson.number(random);
            assertThat(compare(value, literal)).as("%s vs %s", value, literal).isEqualTo(reference(value, literal));
        }
    }

    @Test
    void aLiteralIsAcceptedExactlyWhenItIsAJsonNumberWithAnExponentOfAtMostNineDigits() {
        Random random = new Random(7);
        String alphabet = "0123456789.-+eE";
        for (int i = 0; i < 40_000; i++) {
            StringBuilder s = new StringBuilder();
            for (int n = 1 + random.nextInt(8); n > 0; n--) {
                s.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String text = s.toString();
            assertThat(NumberLiteral.isJsonNumber(text)).as(text).isEqualTo(JSON_NUMBER.matcher(text).matches());
            assertThat(NumberLiteral.parse(text) != null).as(text).isEqualTo(JSON_NUMBER.matcher(text).matches());
        }
        assertThat(NumberLiteral.parse("1e999999999")).isNotNull();
        assertThat(NumberLiteral.parse("1E-0999999999")).isNotNull();
        assertThat(NumberLiteral.parse("1e1000000000")).isNull();
    }

    /** Another JSON spelling of {@code d}: plain, scientific, zeros added, the point moved into the exponent. */
    private static String respell(BigDecimal d, Random random) {
        List<String> spellings = new ArrayList<>();
        spellings.add(d.toPlainString());
        spellings.add(d.toString().replace("E+", random.nextBoolean() ? "e+" : "E"));
        BigInteger unscaled = d.unscaledValue();
        int shift = random.nextInt(5);
        spellings.add(unscaled.multiply(BigInteger.TEN.pow(shift)) + "e" + (-d.scale() - shift));
        if (d.signum() != 0) {
            spellings.add(d.stripTrailingZeros().toPlainString() + (d.stripTrailingZeros().scale() > 0 ? "000" : ""));
        }
        String s = spellings.get(random.nextInt(spellings.size()));
        if (d.signum() == 0 && random.nextBoolean()) {
            s = "-" + s.replace("-", "");
        }
        return JSON_NUMBER.matcher(s).matches() ? s : d.toPlainString();
    }
}
