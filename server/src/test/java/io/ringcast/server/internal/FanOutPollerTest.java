package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fan-out pollers of two event loops reading one ring: who gets which frame, in which order,
 * and what happens to the references of the frame encoded once for everyone.
 */
@Timeout(30)
class FanOutPollerTest {

    @Test
    void eachSessionOnEitherLoopReceivesExactlyItsFramesInRingOrder() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a0 = fx.session(0);
            Peer b0 = fx.session(0);
            Peer a1 = fx.session(1);
            Peer b1 = fx.session(1);
            Topic prices = fx.topic(1, "prices/eur");
            Topic news = fx.topic(2, "news/today");

            fx.update(prices, 1, "p1").to(a0, a1, b1).publish();
            fx.update(news, 1, "n1").to(b0, b1).publish();
            fx.update(prices, 2, "p2").to(a0, a1, b1).publish();
            fx.directed(b0, f -> WireCodec.writeSubscribed(f, 9, 0));
            fx.update(news, 2, "n2").to(b0, b1).publish();
            fx.drainAll();

            assertThat(a0.messages()).containsExactly("UPDATE 1 #1 p1", "UPDATE 1 #2 p2");
            assertThat(b0.messages()).containsExactly("UPDATE 2 #1 n1", "SUBSCRIBED 9 0", "UPDATE 2 #2 n2");
            assertThat(a1.messages()).containsExactly("UPDATE 1 #1 p1", "UPDATE 1 #2 p2");
            assertThat(b1.messages())
                    .containsExactly("UPDATE 1 #1 p1", "UPDATE 2 #1 n1", "UPDATE 1 #2 p2", "UPDATE 2 #2 n2");
        }
    }

    @Test
    void aPollerWritesOnlyToTheSessionsOfItsOwnLoop() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer onLoop0 = fx.session(0);
            Peer onLoop1 = fx.session(1);
            Topic t = fx.topic(1, "t");
            fx.update(t, 1, "v1").to(onLoop0, onLoop1).publish();

            fx.drain(1);
            assertThat(onLoop0.messages()).isEmpty();
            assertThat(onLoop1.messages()).containsExactly("UPDATE 1 #1 v1");

            fx.drain(0);
            assertThat(onLoop0.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(onLoop1.messages()).as("loop 1 wrote its frame once").isEmpty();
        }
    }

    @Test
    void theSharedFrameIsRetainedOncePerSubscriberAndReleasedWhenEachHasIt() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a0 = fx.session(0);
            Peer b0 = fx.session(0);
            Peer a1 = fx.session(1);
            Peer notSubscribed = fx.session(1);
            ByteBuf frame = fx.update(fx.topic(1, "t"), 1, "v1").to(a0, b0, a1).publish();
            assertThat(frame.refCnt()).as("the ring slot's reference").isEqualTo(1);

            fx.drain(0);
            assertThat(frame.refCnt()).as("one more per subscriber of loop 0").isEqualTo(3);
            fx.drain(1);
            assertThat(frame.refCnt()).as("and of loop 1").isEqualTo(4);

            assertThat(a0.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(frame.refCnt()).isEqualTo(3);
            assertThat(b0.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(a1.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(notSubscribed.messages()).isEmpty();
            assertThat(frame.refCnt()).as("each subscriber's copy released once read").isEqualTo(1);

            fx.releaseRing();
            assertThat(frame.refCnt()).isZero();
        }
    }

    @Test
    void aDirectedFrameReachesOnlyItsTargetThroughThePollerOfItsLoop() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer other = fx.session(0);
            Peer target = fx.session(1);
            Peer sibling = fx.session(1);
            ByteBuf frame = fx.directed(target, f -> {
                WireCodec.writeTopic(f, 5, "a/b");
                WireCodec.writeSubscribed(f, 3, 1);
            });

            fx.drain(0);
            assertThat(frame.refCnt()).as("loop 0 wrote nothing").isEqualTo(1);
            fx.drain(1);
            assertThat(frame.refCnt()).as("the slot's reference handed over to the target's channel").isEqualTo(1);

            assertThat(target.frames()).extracting(ReceivedFrames.Frame::messages)
                    .containsExactly(List.of("TOPIC 5 a/b", "SUBSCRIBED 3 1"));
            assertThat(other.messages()).isEmpty();
            assertThat(sibling.messages()).isEmpty();
            assertThat(frame.refCnt()).as("released once written: no slot keeps a reply a ring long").isZero();
        }
    }

    @Test
    void thePublisherIsAckedOnceByThePollerOfItsLoopAfterItsOwnCopyOfTheUpdate() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer subscriber = fx.session(0);
            Peer publisher = fx.session(1);
            fx.update(fx.topic(1, "t"), 7, "v7").to(subscriber, publisher).ackingTo(publisher, 42).publish();
            fx.drainAll();

            assertThat(subscriber.messages()).containsExactly("UPDATE 1 #7 v7");
            assertThat(publisher.messages()).containsExactly("UPDATE 1 #7 v7", "PUBLISH_ACK 42 #7");
        }
    }

    @Test
    void aPublisherThatIsNotSubscribedIsAckedAndGetsNothingElse() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer publisher = fx.session(0);
            Peer subscriber = fx.session(1);
            fx.update(fx.topic(1, "t"), 1, "v1").to(subscriber).ackingTo(publisher, 5).publish();
            fx.update(fx.topic(1, "t"), 2, "v2").to(subscriber).publish();
            fx.drainAll();

            assertThat(publisher.messages()).containsExactly("PUBLISH_ACK 5 #1");
            assertThat(subscriber.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 v2");
        }
    }

    @Test
    void sessionsThatNegotiatedCompressionGetTheCompressedFrameAndTheOthersThePlainOne() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer plain = fx.session(0);
            Peer deflating0 = fx.session(0, true);
            Peer deflating1 = fx.session(1, true);
            String value = FanOutFixture.COMPRESSIBLE_VALUE;
            fx.update(fx.topic(1, "fx/eur"), 1, value).to(plain, deflating0, deflating1).compressed().publish();
            fx.drainAll();

            ReceivedFrames.Frame plainFrame = plain.frames().get(0);
            ReceivedFrames.Frame compressed0 = deflating0.frames().get(0);
            ReceivedFrames.Frame compressed1 = deflating1.frames().get(0);
            assertThat(plainFrame.compressed()).isFalse();
            assertThat(compressed0.compressed()).isTrue();
            assertThat(compressed1.compressed()).isTrue();
            assertThat(compressed0.wireBytes()).isLessThan(plainFrame.wireBytes() / 4);
            assertThat(compressed0.messages()).isEqualTo(plainFrame.messages())
                    .containsExactly("UPDATE 1 #1 " + value);
            assertThat(compressed1.messages()).isEqualTo(plainFrame.messages());
        }
    }

    @Test
    void aSessionThatIsClosingOrClosedIsWrittenNothingMore() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer closing = fx.session(0);
            Peer gone = fx.session(0);
            Peer open = fx.session(0);
            closing.session.closeWithError(ErrorCode.SERVER_SHUTDOWN, "stopping", 1);
            gone.disconnect();
            ByteBuf frame = fx.update(fx.topic(1, "t"), 1, "v1").to(closing, gone, open).ackingTo(closing, 3).publish();
            fx.drain(0);

            assertThat(closing.messages()).containsExactly("ERROR SERVER_SHUTDOWN", "CLOSE 1001 SERVER_SHUTDOWN");
            assertThat(gone.messages()).isEmpty();
            assertThat(open.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(frame.refCnt()).as("no reference taken for the closed ones").isEqualTo(1);
        }
    }

    @Test
    void aRunHandlesAtMost4096EventsThenReschedulesItselfForTheRest() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic t = fx.topic(1, "t");
            SubscriberSet subscribers = fx.subscribers(s);
            for (int i = 1; i <= 5000; i++) {
                fx.update(t, i, "v").to(subscribers).publish();
            }

            fx.pollers[0].run();
            List<String> first = s.messages();
            assertThat(first.size()).isEqualTo(4096);
            assertThat(first.get(4095)).isEqualTo("UPDATE 1 #4096 v");
            assertThat(fx.hasPendingTasks(0)).as("the poller woke itself again").isTrue();

            fx.runTasks(0);
            List<String> rest = s.messages();
            assertThat(rest.size()).isEqualTo(5000 - 4096);
            assertThat(rest.get(0)).isEqualTo("UPDATE 1 #4097 v");
            assertThat(fx.hasPendingTasks(0)).isFalse();
        }
    }

    @Test
    void deliveriesAndTheirBytesAreCountedOncePerWrite() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a0 = fx.session(0);
            Peer a1 = fx.session(1);
            Peer b1 = fx.session(1);
            ByteBuf first = fx.update(fx.topic(1, "t"), 1, "v1").to(a0, a1, b1).publish();
            ByteBuf second = fx.update(fx.topic(2, "u"), 1, "longer value").to(a1).publish();
            long bytes = 3L * first.readableBytes() + second.readableBytes();
            fx.drainAll();

            assertThat(fx.counters.deliveries()).isEqualTo(4);
            assertThat(fx.counters.deliveredBytes()).isEqualTo(bytes);
            a0.messages();
            a1.messages();
            b1.messages();
        }
    }
}
