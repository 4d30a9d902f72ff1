package io.ringcast.server.internal;

import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code limits.outboundQueueBytes} on the fan-out path: a session that does not read is cut with
 * {@code SLOW_CONSUMER} once its unsent bytes pass the limit; nobody else waits or loses anything.
 */
@Timeout(30)
class SlowConsumerTest {
    /** A value of about 1 kB: a frame and Netty's entry overhead come to about 1.1 kB queued. */
    private static final String KB = "x".repeat(1000);
    /** Three such frames fit, a fourth passes the limit. */
    private static final long LIMIT_BYTES = 3_500;

    @Test
    void aSessionPastTheLimitGetsSlowConsumerAndNothingMoreWhileItsSiblingReceivesEverything() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.END_OF_BATCH, 0, LIMIT_BYTES)) {
            Peer slow = fx.session(0).stopReading();
            Peer sibling = fx.session(0);
            Topic t = fx.topic(1, "t");
            List<String> expected = new ArrayList<>();
            for (int i = 1; i <= 6; i++) {
                fx.update(t, i, i + KB).to(slow, sibling).publish();
                fx.drain(0); // a batch each: the sibling's frames leave, the slow one's stay
                expected.add("UPDATE 1 #" + i + " " + i + KB);
                assertThat(slow.session.closing).as("after update %d", i).isEqualTo(i >= 4);
            }

            assertThat(sibling.messages()).isEqualTo(expected);
            assertThat(fx.counters.slowConsumerDisconnects()).isEqualTo(1);
            assertThat(slow.session.closeReason).startsWith("SLOW_CONSUMER")
                    .contains("limits.outboundQueueBytes = " + LIMIT_BYTES);

            slow.startReading();
            assertThat(slow.messages()).containsExactly("UPDATE 1 #1 1" + KB, "UPDATE 1 #2 2" + KB,
                    "UPDATE 1 #3 3" + KB, "UPDATE 1 #4 4" + KB, "ERROR SLOW_CONSUMER", "CLOSE 1008 SLOW_CONSUMER");
            assertThat(slow.channel.isActive()).as("closed once its last frames left").isFalse();
        }
    }

    @Test
    void oneBatchLargerThanTheLimitDoesNotCutASessionThatReads() {
        for (FlushPolicy policy : new FlushPolicy[] {FlushPolicy.END_OF_BATCH, FlushPolicy.MAX_DELAY, FlushPolicy.ADAPTIVE}) {
            try (FanOutFixture fx = new FanOutFixture(1, policy, 1_000_000, LIMIT_BYTES)) {
                Peer reader = fx.session(0);
                Topic t = fx.topic(1, "t");
                List<String> expected = new ArrayList<>();
                for (int i = 1; i <= 10; i++) { // about 11 kB in one batch, three times the limit
                    fx.update(t, i, i + KB).to(reader).publish();
                    expected.add("UPDATE 1 #" + i + " " + i + KB);
                }
                fx.drain(0); // max-delay and adaptive too: a loop's first drain is not paced

                assertThat(reader.session.closing).as(policy.yamlName()).isFalse();
                assertThat(reader.messages()).as(policy.yamlName()).isEqualTo(expected);
                assertThat(fx.counters.slowConsumerDisconnects()).isZero();
            }
        }
    }

    @Test
    void aSlowConsumerThatNeverReadsIsClosedWhenTheGraceEnds() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.END_OF_BATCH, 0, LIMIT_BYTES)) {
            Peer slow = fx.session(0).stopReading();
            Topic t = fx.topic(1, "t");
            for (int i = 1; i <= 4; i++) {
                fx.update(t, i, KB).to(slow).publish();
            }
            fx.drain(0);
            assertThat(slow.session.closing).isTrue();

            slow.advanceTime(FanOutFixture.SLOW_CONSUMER_GRACE_MS - 1);
            assertThat(slow.channel.isActive()).as("the grace is not over").isTrue();
            slow.advanceTime(1);
            assertThat(slow.channel.isActive()).isFalse();
            assertThat(slow.messages()).as("what it never read was dropped with the channel").isEmpty();
        }
    }

    @Test
    void aPublisherThatReadsNoAcksIsASlowConsumerToo() {
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.END_OF_BATCH, 0, 1_000)) {
            Peer publisher = fx.session(0).stopReading();
            Peer subscriber = fx.session(0);
            Topic t = fx.topic(1, "t");
            int acks = 0;
            while (!publisher.session.closing && acks < 100) {
                acks++;
                fx.update(t, acks, "v").to(subscriber).ackingTo(publisher, acks).publish();
                fx.drain(0);
            }
            assertThat(publisher.session.closing).as("closed after %d unread acks", acks).isTrue();
            assertThat(acks).as("an ack and its queue entry take about 120 bytes").isBetween(5, 12);
            assertThat(publisher.session.closeReason).startsWith("SLOW_CONSUMER");
            assertThat(subscriber.messages()).hasSize(acks);
        }
    }

    @Test
    void aSlowConsumerOnOneLoopDoesNotHoldBackTheOtherLoop() {
        try (FanOutFixture fx = new FanOutFixture(2, FlushPolicy.END_OF_BATCH, 0, LIMIT_BYTES)) {
            Peer slow = fx.session(0).stopReading();
            Peer elsewhere = fx.session(1);
            Topic t = fx.topic(1, "t");
            for (int i = 1; i <= 10; i++) {
                fx.update(t, i, KB).to(slow, elsewhere).publish();
                fx.drainAll();
            }

            assertThat(slow.session.closing).isTrue();
            assertThat(elsewhere.session.closing).isFalse();
            assertThat(elsewhere.messages()).hasSize(10);
            assertThat(fx.counters.slowConsumerDisconnects()).isEqualTo(1);
        }
    }
}
