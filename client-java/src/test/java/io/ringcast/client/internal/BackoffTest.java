package io.ringcast.client.internal;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class BackoffTest {

    @Test
    void delaysDoubleWithinTheUpperHalfOfTheCeilingUpToTheMaximum() {
        Backoff backoff = new Backoff(100, 5000, new SplittableRandom(42));
        long[] ceilings = {100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000};
        for (int round = 0; round < 200; round++) {
            for (long ceiling : ceilings) {
                assertThat(backoff.nextDelayMs()).isBetween(ceiling / 2, ceiling);
            }
            backoff.reset();
        }
    }

    @Test
    void jitterSpreadsTheDelays() {
        Backoff backoff = new Backoff(1000, 1000, new SplittableRandom(7));
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 1000; i++) {
            long d = backoff.nextDelayMs();
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertThat(min).isLessThan(600);
        assertThat(max).isGreaterThan(900);
    }

    @Test
    void equalInitialAndMaximumStillWorks() {
        Backoff backoff = new Backoff(1, 1, new SplittableRandom(1));
        for (int i = 0; i < 10; i++) {
            assertThat(backoff.nextDelayMs()).isBetween(0L, 1L);
        }
    }
}
