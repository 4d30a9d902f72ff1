package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class PublishRateLimitTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private static int acquired(PublishRateLimit limit, long at, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (limit.tryAcquire(at)) {
                n++;
            }
        }
        return n;
    }

    @Test
    void newSessionMayBurstOneSecondOfPublishesThenIsRefused() {
        PublishRateLimit limit = new PublishRateLimit(100, 0);
        assertThat(acquired(limit, 0, 150)).isEqualTo(100);
    }

    @Test
    void bucketRefillsAtTheRateAndNeverHoldsMoreThanOneSecond() {
        PublishRateLimit limit = new PublishRateLimit(100, 0);
        acquired(limit, 0, 100);
        assertThat(acquired(limit, SECOND / 10, 50)).as("a tenth of a second later").isEqualTo(10);
        assertThat(acquired(limit, 60 * SECOND, 500)).as("after a long pause").isEqualTo(100);
    }

    @Test
    void steadyPublisherAtTheRateIsNeverRefused() {
        PublishRateLimit limit = new PublishRateLimit(1000, 0);
        acquired(limit, 0, 1000);
        for (long i = 1; i <= 10_000; i++) {
            assertThat(limit.tryAcquire(i * SECOND / 1000)).as("publish %d", i).isTrue();
        }
    }

    /** At 10/s, a publish every 50 ms earns half a token each: every second one is served, not none. */
    @Test
    void refillAccumulatesFractionsOfAPublish() {
        PublishRateLimit limit = new PublishRateLimit(10, 0);
        acquired(limit, 0, 10);

        int served = 0;
        for (long i = 1; i <= 200; i++) {
            if (limit.tryAcquire(i * SECOND / 20)) {
                served++;
            }
        }

        assertThat(served).as("of 200 tries over 10 s at 20/s").isBetween(99, 100);
    }

    @Test
    void aRateOfOneServesOnePublishPerSecond() {
        PublishRateLimit limit = new PublishRateLimit(1, 0);

        assertThat(acquired(limit, 0, 5)).isEqualTo(1);
        assertThat(limit.tryAcquire(SECOND * 9 / 10)).as("short of a second").isFalse();
        assertThat(limit.tryAcquire(SECOND * 11 / 10)).as("past a second").isTrue();
        assertThat(limit.tryAcquire(SECOND * 12 / 10)).as("the next needs another second").isFalse();
        assertThat(acquired(limit, 5 * SECOND, 5)).as("a long pause still earns one second's worth").isEqualTo(1);
    }
}
