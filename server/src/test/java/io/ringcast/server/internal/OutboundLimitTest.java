package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code limits.outboundQueueBytes}, measured as the channel's own count of unsent bytes. */
@Timeout(10)
class OutboundLimitTest {

    /** Queues one frame of {@code payloadBytes} on a peer that does not read; returns the pending bytes. */
    private static long queueOneFrame(Peer peer, int payloadBytes) {
        ByteBuf frame = OutboundFrame.allocate(peer.session.ctx.alloc(), payloadBytes);
        frame.writeZero(payloadBytes);
        peer.session.ctx.write(OutboundFrame.finish(frame), peer.session.ctx.voidPromise());
        peer.session.ctx.flush();
        return peer.pendingBytes();
    }

    @Test
    void aSessionAtTheLimitStaysAndOneByteOverIsClosedAsASlowConsumer() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer atLimit = fx.session(0).stopReading();
            Peer over = fx.session(0).stopReading();
            long pending = queueOneFrame(atLimit, 500);
            assertThat(queueOneFrame(over, 500)).isEqualTo(pending);
            assertThat(pending).as("the frame and the queue's overhead").isGreaterThan(500);

            OutboundLimit limit = new OutboundLimit(pending, 1_000, fx.counters);
            assertThat(limit.closeIfOver(atLimit.session)).isFalse();
            assertThat(atLimit.session.closing).isFalse();

            OutboundLimit lower = new OutboundLimit(pending - 1, 1_000, fx.counters);
            assertThat(lower.closeIfOver(over.session)).isTrue();
            assertThat(over.session.closing).isTrue();
            assertThat(over.session.closeReason).startsWith("SLOW_CONSUMER").contains(pending + " bytes unsent");
            assertThat(fx.counters.slowConsumerDisconnects()).isEqualTo(1);
        }
    }

    @Test
    void gatheredRepliesCountAsUnsent() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading();
            long pending = queueOneFrame(s, 100);
            OutboundLimit limit = new OutboundLimit(pending + 13, 1_000, fx.counters);
            ReplyFrames replies = new ReplyFrames(s.session.ctx, 1 << 20);
            try {
                WireCodec.writePong(replies.room(13), 1);
                assertThat(limit.closeIfOver(s.session, replies.gatheredBytes())).as("exactly at the limit").isFalse();
                WireCodec.writePong(replies.room(13), 2);
                assertThat(limit.closeIfOver(s.session, replies.gatheredBytes())).isTrue();
            } finally {
                replies.release();
            }
        }
    }

    @Test
    void aSessionAlreadyClosingIsNotClosedOrCountedAgain() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading();
            queueOneFrame(s, 100);
            OutboundLimit limit = new OutboundLimit(10, 1_000, fx.counters);
            assertThat(limit.closeIfOver(s.session)).isTrue();
            assertThat(limit.closeIfOver(s.session)).isFalse();
            assertThat(fx.counters.slowConsumerDisconnects()).isEqualTo(1);
        }
    }

    @Test
    void closeSendsSlowConsumerAndThe1008CloseFrameAfterWhatWasQueued() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            ByteBuf frame = OutboundFrame.allocate(s.session.ctx.alloc(), 32);
            WireCodec.writePong(frame, 5);
            s.session.ctx.write(OutboundFrame.finish(frame), s.session.ctx.voidPromise());

            new OutboundLimit(1 << 20, 1_000, fx.counters).close(s.session, "a reason of our own");

            assertThat(s.messages()).containsExactly("PONG 5", "ERROR SLOW_CONSUMER", "CLOSE 1008 SLOW_CONSUMER");
            assertThat(s.session.closeReason).isEqualTo("SLOW_CONSUMER: slow consumer: a reason of our own");
            assertThat(s.channel.isActive()).isFalse();
        }
    }

    @Test
    void outboundQueuesSumsEveryChannelsUnsentBytesAndFindsTheLargest() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer small = fx.session(0).stopReading();
            Peer large = fx.session(0).stopReading();
            Peer reading = fx.session(0);
            Peer closed = fx.session(0);
            long smallBytes = queueOneFrame(small, 100);
            long largeBytes = queueOneFrame(large, 5_000);
            queueOneFrame(reading, 100);
            closed.disconnect();

            OutboundQueues queues = OutboundQueues.of(List.of(small.channel, large.channel, reading.channel,
                    closed.channel));
            assertThat(queues.totalBytes()).isEqualTo(smallBytes + largeBytes);
            assertThat(queues.largestBytes()).isEqualTo(largeBytes);
            assertThat(OutboundQueues.of(List.of())).isEqualTo(new OutboundQueues(0, 0));
        }
    }
}
