package io.ringcast.server.internal;

import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code pipeline.flushPolicy} as the poller applies it, counted where it matters: the flushes
 * that reach each session's channel. Each policy gives a different count for the same batches, so
 * a poller that ignored the policy (or applied another) fails here, whatever it sends.
 */
@Timeout(30)
class FanOutFlushPolicyTest {
    private static final long MAX_DELAY_NS = TimeUnit.SECONDS.toNanos(10);

    /**
     * Two sessions, one batch: three updates to both, a publish ack to the first; a third session
     * gets nothing. Each update has a set of its own, so they do not travel in one frame.
     */
    private static void oneBatch(FanOutFixture fx, Peer a, Peer b, int firstSequence) {
        batch(fx, () -> fx.subscribers(a, b), a, firstSequence);
    }

    /** Three updates of one topic to the sets {@code sets} gives, the last acked to {@code acked}; then a drain. */
    private static void batch(FanOutFixture fx, Supplier<SubscriberSet> sets, Peer acked, int firstSequence) {
        Topic t = fx.topic(1, "t");
        for (int i = firstSequence; i < firstSequence + 3; i++) {
            FanOutFixture.Update u = fx.update(t, i, "v" + i).to(sets.get());
            if (i == firstSequence + 2) {
                u.ackingTo(acked, i);
            }
            u.publish();
        }
        fx.drain(0);
    }

    /**
     * The batches from sequence 4 and 7 ({@link #batch}, acked to {@code acked}) were written in one
     * drain: {@code other} got their six updates in one gathered frame, {@code acked} them and both
     * acks, and no drain waits on the loop.
     */
    private static void assertSecondAndThirdBatchInOneFrame(FanOutFixture fx, Peer acked, Peer other) {
        List<ReceivedFrames.Frame> frames = other.frames();
        assertThat(frames).as("six updates for the same sessions: one gathered frame").hasSize(1);
        assertThat(frames.get(0).messages()).containsExactly("UPDATE 1 #4 v4", "UPDATE 1 #5 v5",
                "UPDATE 1 #6 v6", "UPDATE 1 #7 v7", "UPDATE 1 #8 v8", "UPDATE 1 #9 v9");
        assertThat(acked.messages()).containsExactly("UPDATE 1 #4 v4", "UPDATE 1 #5 v5", "UPDATE 1 #6 v6",
                "UPDATE 1 #7 v7", "UPDATE 1 #8 v8", "UPDATE 1 #9 v9", "PUBLISH_ACK 6 #6", "PUBLISH_ACK 9 #9");
        assertThat(fx.hasPendingTasks(0)).as("no drain left behind").isFalse();
    }

    @Test
    void immediateFlushesAfterEveryWrite() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.IMMEDIATE, 0, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            Peer idle = fx.session(0);
            oneBatch(fx, a, b, 1);

            assertThat(a.flushes()).as("three updates and an ack").isEqualTo(4);
            assertThat(b.flushes()).isEqualTo(3);
            assertThat(idle.flushes()).isZero();
            assertThat(a.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 v2", "UPDATE 1 #3 v3",
                    "PUBLISH_ACK 3 #3");
            assertThat(b.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 v2", "UPDATE 1 #3 v3");
        }
    }

    @Test
    void endOfBatchFlushesEachSessionWrittenToOncePerBatch() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.END_OF_BATCH, 0, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            Peer idle = fx.session(0);
            oneBatch(fx, a, b, 1);

            assertThat(a.flushes()).isEqualTo(1);
            assertThat(b.flushes()).isEqualTo(1);
            assertThat(idle.flushes()).isZero();
            assertThat(a.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 v2", "UPDATE 1 #3 v3",
                    "PUBLISH_ACK 3 #3");
            assertThat(b.messages()).hasSize(3);

            oneBatch(fx, a, b, 4);
            assertThat(a.flushes()).as("one more for the next batch").isEqualTo(2);
            assertThat(b.flushes()).isEqualTo(2);
            assertThat(b.messages()).containsExactly("UPDATE 1 #4 v4", "UPDATE 1 #5 v5", "UPDATE 1 #6 v6");
            a.messages();
        }
    }

    @Test
    void maxDelayDrainsAtOnceAfterAQuietSpell() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.MAX_DELAY, MAX_DELAY_NS, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            oneBatch(fx, a, b, 1);
            assertThat(a.flushes()).as("the loop's first drain waits for nothing").isEqualTo(1);
            assertThat(a.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 v2", "UPDATE 1 #3 v3",
                    "PUBLISH_ACK 3 #3");
            b.messages();

            fx.advanceTime(0, MAX_DELAY_NS);
            oneBatch(fx, a, b, 4);
            assertThat(a.flushes()).as("a whole delay after the last drain: at once again").isEqualTo(2);
            assertThat(b.messages()).containsExactly("UPDATE 1 #4 v4", "UPDATE 1 #5 v5", "UPDATE 1 #6 v6");
            a.messages();
        }
    }

    @Test
    void maxDelayPacesADrainThatFollowsTheLastWithinTheDelayAndGathersItsUpdatesIntoOneFrame() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.MAX_DELAY, MAX_DELAY_NS, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            Peer idle = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            batch(fx, () -> both, a, 1);
            a.messages();
            b.messages();

            fx.advanceTime(0, MAX_DELAY_NS / 10);
            batch(fx, () -> both, a, 4);
            batch(fx, () -> both, a, 7); // the sequencer's second wake finds the poller waiting: no second timer
            assertThat(a.flushes()).as("nothing written before the delay is up").isEqualTo(1);
            assertThat(b.frames()).isEmpty();

            fx.advanceTime(0, MAX_DELAY_NS - MAX_DELAY_NS / 10 - 1);
            assertThat(b.frames()).as("not a nanosecond early").isEmpty();

            fx.advanceTime(0, 1);
            assertThat(a.flushes()).as("both batches in one drain and one flush").isEqualTo(2);
            assertThat(b.flushes()).isEqualTo(2);
            assertThat(idle.flushes()).isZero();
            assertSecondAndThirdBatchInOneFrame(fx, a, b);
        }
    }

    @Test
    void adaptiveDrainsAtOnceWhileItsDrainsAreQuick() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.ADAPTIVE, MAX_DELAY_NS, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            // the two flushes of a drain: a wait of half the least worth a timer
            fx.eachFlushTakes(0, FanOutPoller.ADAPTIVE_MIN_WAIT_NS / (4 * FanOutPoller.ADAPTIVE_INTERVAL_PER_FLUSH));
            for (int round = 0; round < 3; round++) {
                oneBatch(fx, a, b, 1 + 3 * round);
                assertThat(b.flushes()).as("round %d: no timer for a wait that short", round).isEqualTo(round + 1);
                assertThat(fx.hasPendingTasks(0)).isFalse();
            }
            assertThat(b.messages()).hasSize(9);
            a.messages();
        }
    }

    @Test
    void adaptiveWaitsAMultipleOfWhatTheLastDrainsFlushesTookAndGathersTheUpdatesMeanwhileIntoOneFrame() {
        long flushNs = TimeUnit.MILLISECONDS.toNanos(1);
        long intervalNs = FanOutPoller.ADAPTIVE_INTERVAL_PER_FLUSH * 2 * flushNs; // two sessions flushed
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.ADAPTIVE, MAX_DELAY_NS, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            fx.eachFlushTakes(0, flushNs);
            batch(fx, () -> both, a, 1); // at once: two flushes, so this drain took 2 ms
            assertThat(b.flushes()).as("the loop's first drain waits for nothing").isEqualTo(1);
            a.messages();
            b.messages();

            batch(fx, () -> both, a, 4);
            batch(fx, () -> both, a, 7);
            assertThat(b.frames()).as("the next drain starts %d ns after the last started", intervalNs).isEmpty();
            fx.advanceTime(0, intervalNs - 2 * flushNs - 1); // the last drain's flushes took 2 ms of it
            assertThat(b.frames()).as("not a nanosecond early").isEmpty();

            fx.advanceTime(0, 1);
            assertSecondAndThirdBatchInOneFrame(fx, a, b);

            fx.eachFlushTakes(0, 0);
            fx.advanceTime(0, 2 * intervalNs); // quiet: the next update goes out at once
            batch(fx, () -> both, a, 10);
            assertThat(b.messages()).containsExactly("UPDATE 1 #10 v10", "UPDATE 1 #11 v11", "UPDATE 1 #12 v12");
            a.messages();
        }
    }

    @Test
    void adaptiveTimesItsWaitOnTheFlushesNotOnTheWritesSoItsWaitDoesNotFeedOnWhatItGathers() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.ADAPTIVE, MAX_DELAY_NS, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            // handling the updates (writes) takes long, the system calls (flushes) little: more
            // updates gathered per drain would make the drain longer, not its flushes
            fx.eachWriteTakes(0, TimeUnit.MILLISECONDS.toNanos(1));
            fx.eachFlushTakes(0, TimeUnit.MICROSECONDS.toNanos(100));
            batch(fx, () -> both, a, 1); // a drain of 2.2 ms, of which 0.2 ms flushing
            a.messages();
            b.messages();

            batch(fx, () -> both, a, 4); // 0.4 ms after the last drain started is long past: at once
            assertThat(b.messages()).as("no wait of twice the whole drain's 2.2 ms")
                    .containsExactly("UPDATE 1 #4 v4", "UPDATE 1 #5 v5", "UPDATE 1 #6 v6");
            assertThat(fx.hasPendingTasks(0)).isFalse();
            a.messages();
        }
    }

    @Test
    void adaptiveWaitsNoLongerThanFlushMaxDelay() {
        long ceilingNs = TimeUnit.MILLISECONDS.toNanos(10);
        long flushNs = TimeUnit.MILLISECONDS.toNanos(4);
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.ADAPTIVE, ceilingNs, Long.MAX_VALUE)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            fx.eachFlushTakes(0, flushNs);
            batch(fx, () -> both, a, 1); // took 8 ms: twice that is past the ceiling
            a.messages();
            b.messages();

            batch(fx, () -> both, a, 4);
            fx.advanceTime(0, ceilingNs - 2 * flushNs - 1);
            assertThat(b.frames()).as("before the ceiling").isEmpty();
            fx.advanceTime(0, 1);
            assertThat(b.messages()).as("10 ms after the last drain started, not 16")
                    .containsExactly("UPDATE 1 #4 v4", "UPDATE 1 #5 v5", "UPDATE 1 #6 v6");
            a.messages();
        }
    }
}
