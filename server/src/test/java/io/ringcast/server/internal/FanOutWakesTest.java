package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which pollers {@link FanOutProxy#wakePollers} wakes: those with something on the ring since the
 * last wake, and every one once the ring is half full, so that a poller left asleep gives its slots
 * back. Three loops, each the {@code EmbeddedEventLoop} of the fixture: a woken poller is a task
 * queued on its loop.
 */
@Timeout(30)
class FanOutWakesTest {
    private static final int LOOPS = 3;

    private static ByteBuf subscribedFrame(int id) {
        ByteBuf frame = OutboundFrame.allocate(ByteBufAllocator.DEFAULT, WireCodec.SUBSCRIBED_BYTES);
        WireCodec.writeSubscribed(frame, id, 0);
        return OutboundFrame.finish(frame);
    }

    private static boolean[] woken(FanOutFixture fx) {
        boolean[] woken = new boolean[LOOPS];
        for (int i = 0; i < LOOPS; i++) {
            woken[i] = fx.hasPendingTasks(i);
        }
        return woken;
    }

    @Test
    void anUpdateWakesTheLoopsOfItsSubscribersAndOfItsPublisherOnly() {
        try (FanOutFixture fx = new FanOutFixture(LOOPS)) {
            FanOutProxy proxy = new FanOutProxy(fx.ring, fx.pollers);
            Peer subscriber = fx.session(2);
            Peer publisher = fx.session(0);
            Topic t = fx.topic(1, "t");
            t.subscribers = fx.subscribers(subscriber);
            UpdateEncoder.Encoded encoded = new UpdateEncoder.Encoded();
            encoded.frame = FanOutFixture.updateFrame(t, 1, "v1");
            InboundEvent publish = new InboundEvent();
            publish.session = publisher.session;
            publish.id = 7;

            proxy.update(encoded, t, publish, 1);
            proxy.wakePollers();

            assertThat(woken(fx)).as("the publisher's loop (for its ack) and the subscriber's").containsExactly(true, false, true);
            fx.runTasks(0);
            fx.runTasks(2);
            assertThat(subscriber.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(publisher.messages()).containsExactly("PUBLISH_ACK 7 #1");
        }
    }

    @Test
    void aDirectedFrameOrAnAckWakesOnlyItsSessionsLoop() {
        try (FanOutFixture fx = new FanOutFixture(LOOPS)) {
            FanOutProxy proxy = new FanOutProxy(fx.ring, fx.pollers);
            Peer target = fx.session(1);
            proxy.directed(target.session, subscribedFrame(5));
            proxy.wakePollers();
            assertThat(woken(fx)).containsExactly(false, true, false);
            fx.runTasks(1);
            assertThat(target.messages()).containsExactly("SUBSCRIBED 5 0");

            Peer publisher = fx.session(2);
            proxy.ack(publisher.session, 9, 3);
            proxy.wakePollers();
            assertThat(woken(fx)).as("the last wake's marks are gone").containsExactly(false, false, true);
            fx.runTasks(2);
            assertThat(publisher.messages()).containsExactly("PUBLISH_ACK 9 #3");
        }
    }

    @Test
    void pollersLeftAsleepAreWokenOnceTheRingIsHalfFullAndGiveTheirSlotsBack() {
        try (FanOutFixture fx = new FanOutFixture(LOOPS)) {
            FanOutProxy proxy = new FanOutProxy(fx.ring, fx.pollers);
            Peer target = fx.session(0);
            int half = FanOutFixture.RING_SIZE / 2;
            for (int i = 1; i <= half; i++) {
                proxy.directed(target.session, subscribedFrame(i));
                proxy.wakePollers();
                assertThat(woken(fx)).as("event %d", i).containsExactly(true, false, false);
                fx.runTasks(0);
                target.messages();
            }
            assertThat(fx.ring.remainingCapacity()).as("loops 1 and 2 hold half the ring").isEqualTo(half);

            proxy.directed(target.session, subscribedFrame(half + 1));
            proxy.wakePollers();
            assertThat(woken(fx)).as("past half: everyone").containsExactly(true, true, true);
            fx.drainAll();
            assertThat(fx.ring.remainingCapacity()).as("every slot back").isEqualTo(FanOutFixture.RING_SIZE);
            assertThat(target.messages()).containsExactly("SUBSCRIBED " + (half + 1) + " 0");
        }
    }
}
