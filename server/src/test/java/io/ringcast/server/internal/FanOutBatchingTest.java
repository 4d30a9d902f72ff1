package io.ringcast.server.internal;

import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Smart batching in the fan-out poller: consecutive updates of one drained batch that go to the
 * same sessions leave in one gathered frame per session, in ring order, while every session still
 * gets exactly its messages in order, acks after their updates, and a slow consumer is cut at its limit.
 */
@Timeout(30)
class FanOutBatchingTest {
    private static final String KB = "x".repeat(1000);

    @Test
    void updatesOfSeveralTopicsForTheSameSessionsDrainedTogetherTravelInOneFramePerSession() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a0 = fx.session(0);
            Peer b0 = fx.session(0);
            Peer a1 = fx.session(1);
            SubscriberSet everyone = fx.subscribers(a0, b0, a1);
            Topic eur = fx.topic(1, "fx/eur");
            Topic gbp = fx.topic(2, "fx/gbp");

            fx.update(eur, 1, "e1").definingTopic().to(everyone).publish();
            fx.update(gbp, 1, "g1").definingTopic().to(everyone).publish();
            fx.update(eur, 2, "e2").asDelta("d2").to(everyone).publish();
            fx.update(gbp, 2, "g2").to(everyone).publish();
            fx.drainAll();

            for (Peer p : List.of(a0, b0, a1)) {
                List<ReceivedFrames.Frame> frames = p.frames();
                assertThat(frames).as("one frame for the four updates").hasSize(1);
                assertThat(frames.get(0).messages()).containsExactly("TOPIC 1 fx/eur", "UPDATE 1 #1 e1",
                        "TOPIC 2 fx/gbp", "UPDATE 2 #1 g1", "UPDATE 1 #2 DELTA d2", "UPDATE 2 #2 g2");
            }
            assertThat(fx.counters.deliveries()).isEqualTo(12);
            assertThat(fx.counters.deliveredFrames()).isEqualTo(3);
        }
    }

    @Test
    void anUpdateDrainedAloneGoesOutAsItsOwnSharedFrameWithoutACopy() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            Topic t = fx.topic(1, "t");
            var frame = fx.update(t, 1, "v1").to(both).publish();

            fx.drain(0);

            assertThat(frame.refCnt()).as("the ring's reference and one duplicate per session").isEqualTo(3);
            assertThat(a.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(b.messages()).containsExactly("UPDATE 1 #1 v1");
            assertThat(frame.refCnt()).isEqualTo(1);
        }
    }

    @Test
    void updatesForDifferentSessionsAreNotGatheredAndEachSessionKeepsRingOrder() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            SubscriberSet onlyA = fx.subscribers(a);
            Topic t = fx.topic(1, "t");
            Topic u = fx.topic(2, "u");

            fx.update(t, 1, "t1").to(both).publish();
            fx.update(t, 2, "t2").to(both).publish();
            fx.update(u, 1, "u1").to(onlyA).publish();
            fx.update(t, 3, "t3").to(both).publish();
            fx.drain(0);

            List<ReceivedFrames.Frame> framesOfA = a.frames();
            assertThat(framesOfA).extracting(ReceivedFrames.Frame::messages).containsExactly(
                    List.of("UPDATE 1 #1 t1", "UPDATE 1 #2 t2"), List.of("UPDATE 2 #1 u1"), List.of("UPDATE 1 #3 t3"));
            assertThat(b.frames()).extracting(ReceivedFrames.Frame::messages).containsExactly(
                    List.of("UPDATE 1 #1 t1", "UPDATE 1 #2 t2"), List.of("UPDATE 1 #3 t3"));
        }
    }

    @Test
    void aDirectedReplyBetweenUpdatesEndsTheRunSoItArrivesBetweenThem() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            Topic t = fx.topic(1, "t");

            fx.update(t, 1, "v1").to(both).publish();
            fx.update(t, 2, "v2").to(both).publish();
            fx.directed(a, f -> WireCodec.writeSubscribed(f, 7, 1));
            fx.update(t, 3, "v3").to(both).publish();
            fx.drain(0);

            assertThat(a.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 v2", "SUBSCRIBED 7 1", "UPDATE 1 #3 v3");
            assertThat(b.frames()).hasSize(2);
        }
    }

    @Test
    void aReplyOrAnAckForAnotherLoopsSessionDoesNotEndThisLoopsRun() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer onLoop0 = fx.session(0);
            Peer onLoop1 = fx.session(1);
            Peer publisherOnLoop1 = fx.session(1);
            SubscriberSet loop0Only = fx.subscribers(onLoop0);
            Topic t = fx.topic(1, "t");
            Topic other = fx.topic(2, "other");

            fx.update(t, 1, "v1").to(loop0Only).publish();
            fx.directed(onLoop1, f -> WireCodec.writeSubscribed(f, 3, 0));
            fx.update(other, 1, "o1").to(fx.subscribers()).ackingTo(publisherOnLoop1, 9).publish();
            fx.update(t, 2, "v2").to(loop0Only).publish();
            fx.drainAll();

            assertThat(onLoop0.frames()).extracting(ReceivedFrames.Frame::messages)
                    .containsExactly(List.of("UPDATE 1 #1 v1", "UPDATE 1 #2 v2"));
            assertThat(onLoop1.messages()).containsExactly("SUBSCRIBED 3 0");
            assertThat(publisherOnLoop1.messages()).containsExactly("PUBLISH_ACK 9 #1");
        }
    }

    @Test
    void theAcksOfARunFollowTheirUpdatesInOrder() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer publisherAndSubscriber = fx.session(0);
            Peer other = fx.session(0);
            SubscriberSet both = fx.subscribers(publisherAndSubscriber, other);
            Topic t = fx.topic(1, "t");

            fx.update(t, 1, "v1").to(both).ackingTo(publisherAndSubscriber, 11).publish();
            fx.update(t, 2, "v2").to(both).ackingTo(publisherAndSubscriber, 12).publish();
            fx.drain(0);

            assertThat(publisherAndSubscriber.messages()).containsExactly(
                    "UPDATE 1 #1 v1", "UPDATE 1 #2 v2", "PUBLISH_ACK 11 #1", "PUBLISH_ACK 12 #2");
            assertThat(other.frames()).extracting(ReceivedFrames.Frame::messages)
                    .containsExactly(List.of("UPDATE 1 #1 v1", "UPDATE 1 #2 v2"));
        }
    }

    @Test
    void aGatheredFrameStopsAtItsBoundAndTheNextUpdatesStartAnother() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            SubscriberSet onlyA = fx.subscribers(a);
            Topic t = fx.topic(1, "t");
            String large = "y".repeat(OutboundFrame.GATHERED_PAYLOAD_BYTES / 3); // two fit, a third does not
            for (int i = 1; i <= 5; i++) {
                fx.update(t, i, i + large).to(onlyA).publish();
            }
            fx.drain(0);

            List<ReceivedFrames.Frame> frames = a.frames();
            assertThat(frames).extracting(f -> f.messages().size()).containsExactly(2, 2, 1);
            assertThat(frames).allSatisfy(f ->
                    assertThat(f.wireBytes()).isLessThanOrEqualTo(OutboundFrame.GATHERED_PAYLOAD_BYTES + OutboundFrame.HEADER_RESERVE_BYTES));
            assertThat(frames.stream().flatMap(f -> f.messages().stream()))
                    .extracting(m -> m.substring(0, 12)).containsExactly(
                            "UPDATE 1 #1 ", "UPDATE 1 #2 ", "UPDATE 1 #3 ", "UPDATE 1 #4 ", "UPDATE 1 #5 ");
        }
    }

    @Test
    void aCompressedSessionGetsEachUpdateDeflatedApartWhileTheOthersShareOneFrame() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer deflating = fx.session(0, true);
            Peer plain = fx.session(0);
            SubscriberSet both = fx.subscribers(deflating, plain);
            Topic t = fx.topic(1, "t");
            String v = FanOutFixture.COMPRESSIBLE_VALUE;

            fx.update(t, 1, "1" + v).compressed().to(both).publish();
            fx.update(t, 2, "2" + v).compressed().to(both).publish();
            fx.drain(0);

            List<ReceivedFrames.Frame> deflated = deflating.frames();
            assertThat(deflated).hasSize(2).allSatisfy(f -> assertThat(f.compressed()).isTrue());
            assertThat(deflated).extracting(f -> f.messages().get(0)).containsExactly("UPDATE 1 #1 1" + v, "UPDATE 1 #2 2" + v);
            List<ReceivedFrames.Frame> shared = plain.frames();
            assertThat(shared).hasSize(1);
            assertThat(shared.get(0).messages()).containsExactly("UPDATE 1 #1 1" + v, "UPDATE 1 #2 2" + v);
        }
    }

    @Test
    void aConflatedTopicsUpdateEndsTheRunAndASessionHoldingUpdatesTakesTheRunOneByOne() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSet both = fx.subscribers(a, b);
            Topic always = fx.topic(1, "always");
            Topic plain = fx.topic(2, "plain");

            fx.update(plain, 1, "p1").to(both).publish();
            fx.update(always, 1, "a1").conflation(Conflation.ALWAYS).to(both).publish();
            fx.update(plain, 2, "p2").to(both).publish();
            fx.update(plain, 3, "p3").to(both).publish();
            fx.drain(0);

            // ALWAYS holds its update until the end of the drain; the plain updates after it are not
            // held, and go one by one to the sessions that hold something
            for (Peer p : List.of(a, b)) {
                assertThat(p.frames()).extracting(ReceivedFrames.Frame::messages).containsExactly(
                        List.of("UPDATE 2 #1 p1"), List.of("UPDATE 2 #2 p2"), List.of("UPDATE 2 #3 p3"),
                        List.of("UPDATE 1 #1 a1"));
            }
        }
    }

    @Test
    void aSlowConsumerInsideARunIsCutAtItsLimitWhileItsSiblingReceivesEverything() {
        long limit = 3_500;
        try (FanOutFixture fx = new FanOutFixture(1, FlushPolicy.END_OF_BATCH, 0, limit)) {
            Peer slow = fx.session(0).stopReading();
            Peer sibling = fx.session(0);
            SubscriberSet both = fx.subscribers(slow, sibling);
            Topic t = fx.topic(1, "t");
            List<String> expected = new ArrayList<>();
            for (int batch = 0; batch < 3; batch++) {
                for (int i = 1; i <= 2; i++) { // two updates a batch: one gathered frame of about 2 kB
                    int seq = batch * 2 + i;
                    fx.update(t, seq, seq + KB).to(both).publish();
                    expected.add("UPDATE 1 #" + seq + " " + seq + KB);
                }
                fx.drain(0);
                assertThat(slow.session.closing).as("after batch %d", batch + 1).isEqualTo(batch >= 1);
                assertThat(slow.pendingBytes()).as("bounded by one gathered frame past the limit")
                        .isLessThan(limit + OutboundFrame.GATHERED_PAYLOAD_BYTES);
            }

            assertThat(sibling.messages()).isEqualTo(expected);
            assertThat(fx.counters.slowConsumerDisconnects()).isEqualTo(1);
            slow.startReading();
            assertThat(slow.messages()).containsExactly("UPDATE 1 #1 1" + KB, "UPDATE 1 #2 2" + KB,
                    "UPDATE 1 #3 3" + KB, "UPDATE 1 #4 4" + KB, "ERROR SLOW_CONSUMER", "CLOSE 1008 SLOW_CONSUMER");
        }
    }
}
