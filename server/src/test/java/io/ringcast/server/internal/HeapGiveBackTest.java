package io.ringcast.server.internal;

import io.ringcast.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class HeapGiveBackTest {
    /** When each collection ran ({@link System#nanoTime()}). */
    private final LinkedBlockingQueue<Long> collections = new LinkedBlockingQueue<>();
    private final ServerCounters counters = new ServerCounters();

    private HeapGiveBack giveBack(long minIntervalMs, long settleMs) {
        return new HeapGiveBack(System::nanoTime, () -> collections.add(System.nanoTime()), counters, minIntervalMs,
                settleMs);
    }

    @Test
    void asksForOneCollectionOnceTheTopicsFellToHalfTheirMostAndCountsIt() throws InterruptedException {
        HeapGiveBack giveBack = giveBack(60_000, 0);
        for (int n = 0; n <= 40_000; n += 1_000) {
            giveBack.topics(n);
        }
        giveBack.topics(20_001);
        assertFalse(giveBack.pending(), "more than half the topics are still there");
        giveBack.topics(20_000);
        awaitCollection();
        awaitDone(giveBack);
        assertEquals(1, counters.heapGiveBacks());
    }

    @Test
    void fewerTopicsGoneThanTheMinimumAskForNothing() throws InterruptedException {
        HeapGiveBack giveBack = giveBack(60_000, 0);
        giveBack.topics(HeapGiveBack.MIN_TOPICS_GONE - 1);
        giveBack.topics(0);
        assertFalse(giveBack.pending());
        assertNull(collections.poll(200, TimeUnit.MILLISECONDS));
        assertEquals(0, counters.heapGiveBacks());
    }

    @Test
    void aSecondFallWithinTheIntervalIsCollectedOnlyOnceTheIntervalPassed() throws InterruptedException {
        HeapGiveBack giveBack = giveBack(700, 0);
        giveBack.topics(30_000);
        giveBack.topics(0);
        long first = awaitCollection();
        awaitDone(giveBack);
        giveBack.topics(30_000); // the high-water mark starts again from what was left
        giveBack.topics(0);
        assertTrue(giveBack.pending(), "asked again, to run later");
        long second = awaitCollection();
        assertTrue(second - first >= TimeUnit.MILLISECONDS.toNanos(700),
                "the second ran " + TimeUnit.NANOSECONDS.toMillis(second - first) + " ms after the first");
        awaitDone(giveBack);
        assertEquals(2, counters.heapGiveBacks());
    }

    @Test
    void theCollectionWaitsForTheRestOfASweepWhileTheCountKeepsFalling() throws InterruptedException {
        HeapGiveBack giveBack = giveBack(60_000, 300);
        long asked = System.nanoTime();
        giveBack.topics(50_000);
        giveBack.topics(25_000);
        for (int n = 24_000; n >= 0; n -= 1_000) {
            giveBack.topics(n); // the sweep goes on: no second request while the first waits
        }
        long ran = awaitCollection();
        assertTrue(ran - asked >= TimeUnit.MILLISECONDS.toNanos(300));
        awaitDone(giveBack);
        assertNull(collections.poll(200, TimeUnit.MILLISECONDS), "one collection for one fall");
    }

    /** When the next collection ran; fails when none ran within 10 s. */
    private long awaitCollection() throws InterruptedException {
        Long ran = collections.poll(10, TimeUnit.SECONDS);
        assertNotNull(ran, "a collection asked for");
        return ran;
    }

    /** The give-back thread's last steps after the collection (the count, the log line). */
    @Test
    void topicsMadeAgainAfterAFallAskForNothingUntilTheyFallAgain() throws InterruptedException {
        // the collection waits 300 ms, so the fall to 0 comes while it is pending (with none, the
        // give-back thread could run it first: then that fall was a second one, asked for 60 s later)
        HeapGiveBack giveBack = giveBack(60_000, 300);
        giveBack.topics(50_000);
        giveBack.topics(25_000);
        giveBack.topics(0); // while the first collection is pending
        awaitCollection();
        awaitDone(giveBack);
        giveBack.topics(1);
        assertFalse(giveBack.pending(), "a topic made is no fall");
        giveBack.topics(8_000);
        giveBack.topics(0);
        assertFalse(giveBack.pending(), "8,000 topics went since the last collection, not 25,000");
    }

    private static void awaitDone(HeapGiveBack giveBack) {
        Await.until(() -> !giveBack.pending(), Duration.ofSeconds(10), Duration.ofMillis(1),
                () -> "the give-back thread to finish");
    }
}
