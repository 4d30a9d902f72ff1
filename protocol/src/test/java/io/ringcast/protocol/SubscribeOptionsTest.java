package io.ringcast.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link SubscribeOptions}: the value, what its builder refuses, and with which message. */
class SubscribeOptionsTest {

    private static void refused(Executable setter, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, setter);
        assertThat(e.getMessage()).isEqualTo(message);
    }

    @Test
    void nothingSetIsNone() {
        assertThat(SubscribeOptions.builder().build()).isSameAs(SubscribeOptions.NONE);
        assertThat(SubscribeOptions.NONE.isEmpty()).isTrue();
        assertThat(SubscribeOptions.NONE.names()).isEmpty();
        assertThat(SubscribeOptions.NONE.toString()).isEqualTo("{}");
        assertThat(SubscribeOptions.NONE.maxRate()).isZero();
        assertThat(SubscribeOptions.NONE.maxRateThousandths()).isZero();
        assertThat(SubscribeOptions.NONE.fields()).isEmpty();
        assertThat(SubscribeOptions.NONE.filter()).isEmpty();
        assertThat(SubscribeOptions.NONE.rewind()).isZero();
        assertThat(SubscribeOptions.NONE.rewindSince()).isEqualTo(-1);
    }

    @Test
    void maxRateFieldsOrFilterMakeAViewAndRewindAloneDoesNot() {
        assertThat(SubscribeOptions.NONE.makesView()).isFalse();
        assertThat(SubscribeOptions.builder().rewind(5).rewindSince(0).build().makesView()).isFalse();
        assertThat(SubscribeOptions.builder().maxRate(0.001).build().makesView()).isTrue();
        assertThat(SubscribeOptions.builder().fields("bid").build().makesView()).isTrue();
        assertThat(SubscribeOptions.builder().filter("x = 1").rewind(2).build().makesView()).isTrue();
    }

    @Test
    void everyOptionReadsBackAndIsNamedInTheOrderOfItsKind() {
        SubscribeOptions o = SubscribeOptions.builder().rewindSince(0).rewind(60).filter("spread < 0.0005")
                .fields("bid", "ask").maxRate(4).build();

        assertThat(o.isEmpty()).isFalse();
        assertThat(o.maxRate()).isEqualTo(4.0);
        assertThat(o.maxRateThousandths()).isEqualTo(4000);
        assertThat(o.fields()).containsExactly("bid", "ask");
        assertThat(o.filter()).isEqualTo("spread < 0.0005");
        assertThat(o.rewind()).isEqualTo(60);
        assertThat(o.rewindSince()).isZero();
        assertThat(o.names()).containsExactly("maxRate", "fields", "filter", "rewind", "rewindSince");
        assertThat(o).hasToString(
                "{maxRate=4, fields=[bid, ask], filter='spread < 0.0005', rewind=60, rewindSince=0}");
    }

    @Test
    void maxRateTravelsInThousandthsRoundedToTheNearest() {
        assertThat(SubscribeOptions.builder().maxRate(0.001).build().maxRateThousandths()).isEqualTo(1);
        assertThat(SubscribeOptions.builder().maxRate(100_000).build().maxRateThousandths()).isEqualTo(100_000_000);
        assertThat(SubscribeOptions.builder().maxRate(2.5).build().maxRateThousandths()).isEqualTo(2500);
        assertThat(SubscribeOptions.builder().maxRate(0.0014).build().maxRateThousandths()).isEqualTo(1);
        assertThat(SubscribeOptions.builder().maxRate(0.0016).build().maxRateThousandths()).isEqualTo(2);
        assertThat(SubscribeOptions.builder().maxRate(1.0 / 3).build()).hasToString("{maxRate=0.333}");
        assertThat(SubscribeOptions.builder().maxRate(1.0 / 3).build().maxRate()).isEqualTo(0.333);
    }

    @Test
    void maxRateOutOfRangeIsRefused() {
        for (double rate : new double[] {0, 0.0009, -1, 100_000.001, Double.NaN, Double.POSITIVE_INFINITY}) {
            refused(() -> SubscribeOptions.builder().maxRate(rate),
                    "maxRate: " + rate + " updates per second is out of range (0.001 to 100000)");
        }
    }

    @Test
    void fieldsKeepTheirOrderAndAreACopy() {
        List<String> paths = new ArrayList<>(List.of("b", "a", "quote.bid"));
        SubscribeOptions o = SubscribeOptions.builder().fields(paths).build();
        paths.set(0, "changed");

        assertThat(o.fields()).containsExactly("b", "a", "quote.bid");
        assertThatThrownBy(() -> o.fields().add("x")).isInstanceOf(UnsupportedOperationException.class);
        assertThat(SubscribeOptions.builder().fields(Collections.nCopies(32, "a")).build().fields()).hasSize(32);
    }

    @Test
    void fieldsOutOfRangeAreRefused() {
        refused(() -> SubscribeOptions.builder().fields(), "fields: no paths given; name at least one");
        refused(() -> SubscribeOptions.builder().fields(List.of()), "fields: no paths given; name at least one");
        refused(() -> SubscribeOptions.builder().fields(Collections.nCopies(33, "a")), "fields: 33 paths, more than 32");
        refused(() -> SubscribeOptions.builder().fields("p".repeat(65_533)),
                "fields: 65536 bytes on the wire, more than the 65535 an option holds");
        refused(() -> SubscribeOptions.builder().fields(Collections.nCopies(32, "€".repeat(700))),
                "fields: 67265 bytes on the wire, more than the 65535 an option holds");
        assertThatThrownBy(() -> SubscribeOptions.builder().fields(Arrays.asList("a", null)))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void filterOutOfRangeIsRefused() {
        refused(() -> SubscribeOptions.builder().filter(""), "filter: empty");
        refused(() -> SubscribeOptions.builder().filter("x".repeat(1025)), "filter: longer than 1024 characters (1025)");
        refused(() -> SubscribeOptions.builder().filter("😀".repeat(513)), "filter: longer than 1024 characters (1026)");
        assertThat(SubscribeOptions.builder().filter("€".repeat(1024)).build().filter()).hasSize(1024);
        assertThat(SubscribeOptions.builder().filter(" ").build().filter()).isEqualTo(" "); // the server's to refuse
    }

    @Test
    void rewindAndRewindSinceOutOfRangeAreRefused() {
        refused(() -> SubscribeOptions.builder().rewind(0), "rewind: 0 updates; rewind at least 1");
        refused(() -> SubscribeOptions.builder().rewind(-3), "rewind: -3 updates; rewind at least 1");
        refused(() -> SubscribeOptions.builder().rewindSince(-1), "rewindSince: -1 is before the epoch");
        assertThat(SubscribeOptions.builder().rewind(Integer.MAX_VALUE).rewindSince(Long.MAX_VALUE).build())
                .hasToString("{rewind=2147483647, rewindSince=9223372036854775807}");
    }

    @Test
    void aRefusedValueLeavesTheBuilderAsItWas() {
        SubscribeOptions.Builder b = SubscribeOptions.builder().rewind(5);
        assertThatThrownBy(() -> b.rewind(0)).isInstanceOf(IllegalArgumentException.class);

        assertThat(b.build().rewind()).isEqualTo(5);
    }

    @Test
    void equalOptionsAreEqualAndEachOptionTells() {
        SubscribeOptions a = SubscribeOptions.builder().maxRate(4).fields("bid", "ask").filter("x = 1").rewind(3).build();
        SubscribeOptions same = SubscribeOptions.builder().rewind(3).filter("x = 1").fields("bid", "ask").maxRate(4.0001)
                .build();

        assertThat(a).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().maxRate(4).fields("ask", "bid").filter("x = 1").rewind(3)
                .build());
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().maxRate(5).fields("bid", "ask").filter("x = 1").rewind(3)
                .build());
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().maxRate(4).fields("bid", "ask").filter("x = 2").rewind(3)
                .build());
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().maxRate(4).fields("bid", "ask").filter("x = 1").rewind(4)
                .build());
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().maxRate(4).fields("bid", "ask").filter("x = 1").rewind(3)
                .rewindSince(0).build());
        assertThat(a).isNotEqualTo(SubscribeOptions.NONE).isNotEqualTo(null).isNotEqualTo("{}");
    }

    // ---------------------------------------------------------------- incarnations

    @Test
    void incarnationsReadBackInOrderAreNamedLastAndCountedInTheText() {
        SubscribeOptions o = SubscribeOptions.builder().incarnations(new int[] {7, 0, 0xFFFFFFFF}).rewind(2).build();

        assertThat(o.isEmpty()).isFalse();
        assertThat(o.incarnations()).containsExactly(7, 0, 0xFFFFFFFF);
        assertThat(o.names()).containsExactly("rewind", "incarnations");
        assertThat(o).hasToString("{rewind=2, incarnations=3}");
        assertThat(SubscribeOptions.NONE.incarnations()).isEmpty();
    }

    @Test
    void incarnationsAloneMakeNoView() {
        // they only qualify resume positions: the subscription is a plain one
        assertThat(SubscribeOptions.builder().incarnations(new int[] {1}).build().makesView()).isFalse();
    }

    @Test
    void incarnationsAreCopiedInAndOut() {
        int[] given = {1, 2};
        SubscribeOptions o = SubscribeOptions.builder().incarnations(given).build();
        SubscribeOptions with = SubscribeOptions.NONE.withIncarnations(given);
        given[0] = 99;
        o.incarnations()[1] = 99;

        assertThat(o.incarnations()).containsExactly(1, 2);
        assertThat(with.incarnations()).containsExactly(1, 2);
    }

    @Test
    void noIncarnationsIsNoOption() {
        // an empty array is the option not given: the writer then sends no kind 6
        assertThat(SubscribeOptions.builder().incarnations(new int[0]).build()).isSameAs(SubscribeOptions.NONE);
        assertThat(SubscribeOptions.NONE.withIncarnations(new int[0])).isSameAs(SubscribeOptions.NONE);
        assertThat(SubscribeOptions.builder().incarnations(new int[] {3}).build().withIncarnations(new int[0]))
                .isSameAs(SubscribeOptions.NONE);
    }

    @Test
    void withIncarnationsKeepsTheOtherOptionsAndReplacesEarlierIncarnations() {
        SubscribeOptions rewind = SubscribeOptions.builder().rewind(5).filter("x = 1").incarnations(new int[] {1}).build();

        SubscribeOptions with = rewind.withIncarnations(new int[] {4, 5});

        assertThat(with).isEqualTo(SubscribeOptions.builder().rewind(5).filter("x = 1").incarnations(new int[] {4, 5})
                .build());
        assertThat(with.withIncarnations(new int[0])).isEqualTo(SubscribeOptions.builder().rewind(5).filter("x = 1")
                .build());
    }

    @Test
    void moreIncarnationsThanAU16OfBytesHoldsAreRefused() {
        assertThat(SubscribeOptions.builder().incarnations(new int[WireCodec.MAX_RESUME_INCARNATIONS]).build()
                .incarnations()).hasSize(16_383);
        refused(() -> SubscribeOptions.builder().incarnations(new int[16_384]),
                "incarnations: 16384 of them, more than the 16383 an option holds");
        refused(() -> SubscribeOptions.NONE.withIncarnations(new int[16_384]),
                "incarnations: 16384 of them, more than the 16383 an option holds");
    }

    @Test
    void incarnationsCountInEqualityByTheirValuesAndOrder() {
        SubscribeOptions a = SubscribeOptions.builder().rewind(3).incarnations(new int[] {1, 2}).build();
        SubscribeOptions same = SubscribeOptions.builder().incarnations(new int[] {1, 2}).rewind(3).build();

        assertThat(a).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().rewind(3).incarnations(new int[] {2, 1}).build());
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().rewind(3).incarnations(new int[] {1, 2, 0}).build());
        assertThat(a).isNotEqualTo(SubscribeOptions.builder().rewind(3).build());
    }
}
