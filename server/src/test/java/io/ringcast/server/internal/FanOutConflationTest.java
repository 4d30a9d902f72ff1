package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.internal.FanOutFixture.Peer;
import io.ringcast.server.internal.ReceivedFrames.Frame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static io.ringcast.server.config.Conflation.ALWAYS;
import static io.ringcast.server.config.Conflation.OFF;
import static io.ringcast.server.config.Conflation.ON_BACKPRESSURE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@link Conflation} policy through the poller's hold and drain path: what a session is
 * sent at once, what is held, what is merged when it drains, and that each topic's updates keep
 * their order whatever happens.
 */
@Timeout(30)
class FanOutConflationTest {
    /**
     * A high-water mark that makes a channel unwritable once two frames of a short value are queued:
     * each is about 20 bytes, plus Netty's overhead of 96 bytes per queued entry.
     */
    private static final int TWO_FRAMES = 200;

    // ------------------------------------------------------------------ off

    @Test
    void offSendsEveryUpdateEvenToASessionThatCannotTakeMore() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading().highWaterMark(TWO_FRAMES);
            Topic a = fx.topic(1, "a");
            for (int i = 1; i <= 5; i++) {
                fx.update(a, i, "a" + i).to(s).conflation(OFF).publish();
                fx.drain(0);
            }
            assertThat(s.channel.isWritable()).isFalse();

            s.startReading();
            assertThat(s.messages()).containsExactly("UPDATE 1 #1 a1", "UPDATE 1 #2 a2", "UPDATE 1 #3 a3",
                    "UPDATE 1 #4 a4", "UPDATE 1 #5 a5");
            assertThat(s.session.conflation).as("never held anything").isNull();
            assertThat(fx.counters.conflatedUpdates()).isZero();
        }
    }

    // ------------------------------------------------------------------ always

    @Test
    void alwaysMergesEachTopicsUpdatesOfABatchIntoItsNewestValueInTheOrderTheTopicsCameIn() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            Topic c = fx.topic(3, "c");
            fx.update(a, 1, "a1").to(s).conflation(ALWAYS).publish();
            fx.update(b, 1, "b1").to(s).conflation(ALWAYS).publish();
            fx.update(a, 2, "a2").to(s).conflation(ALWAYS).publish();
            fx.update(a, 3, "a3").to(s).conflation(ALWAYS).publish();
            fx.update(c, 1, "c1").to(s).conflation(ALWAYS).publish();
            fx.drain(0);

            assertThat(s.frames()).extracting(Frame::messages).containsExactly(
                    List.of("TOPIC 1 a", "UPDATE 1 #3 CONFLATED a3"),
                    List.of("UPDATE 2 #1 b1"),
                    List.of("UPDATE 3 #1 c1"));
            assertThat(fx.counters.conflatedUpdates()).as("a1 and a2 were never sent").isEqualTo(2);
            assertThat(fx.counters.deliveries()).isEqualTo(3);
        }
    }

    @Test
    void alwaysSendsAnUpdateThatReplacedNothingAsTheSharedFrameCompressedOrNot() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer plain = fx.session(0);
            Peer deflating = fx.session(0, true);
            String value = FanOutFixture.COMPRESSIBLE_VALUE;
            ByteBuf frame = fx.update(fx.topic(1, "a"), 1, value).to(plain, deflating).conflation(ALWAYS)
                    .compressed().publish();
            fx.drain(0);

            assertThat(frame.refCnt()).as("ring, value slice and one write of the plain frame").isEqualTo(3);
            Frame p = plain.frames().get(0);
            Frame d = deflating.frames().get(0);
            assertThat(p.compressed()).isFalse();
            assertThat(d.compressed()).isTrue();
            assertThat(p.messages()).isEqualTo(d.messages()).containsExactly("UPDATE 1 #1 " + value);
            assertThat(fx.counters.conflatedUpdates()).isZero();
        }
    }

    @Test
    void aMergedUpdateIsSentPlainWithTheFullValueEvenToACompressingSessionOrForADelta() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer deflating = fx.session(0, true);
            Topic a = fx.topic(1, "a");
            String v1 = FanOutFixture.COMPRESSIBLE_VALUE;
            String v2 = "{\"bid\":1.08413,\"ask\":1.08416}".repeat(20);
            fx.update(a, 1, v1).to(deflating).conflation(ALWAYS).compressed().publish();
            fx.update(a, 2, v2).asDelta("d2").to(deflating).conflation(ALWAYS).publish();
            fx.drain(0);

            List<Frame> frames = deflating.frames();
            assertThat(frames).hasSize(1);
            assertThat(frames.get(0).compressed()).isFalse();
            assertThat(frames.get(0).messages()).containsExactly("TOPIC 1 a", "UPDATE 1 #2 CONFLATED " + v2);
        }
    }

    @Test
    void aDeltaThatReplacedNothingIsSentAsTheSharedDeltaFrame() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            fx.update(a, 1, "v1").to(s).conflation(ALWAYS).publish();
            fx.drain(0);
            fx.update(a, 2, "v2").asDelta("d2").to(s).conflation(ALWAYS).publish();
            fx.drain(0);

            assertThat(s.messages()).containsExactly("UPDATE 1 #1 v1", "UPDATE 1 #2 DELTA d2");
        }
    }

    @Test
    void alwaysHoldsUpdatesWhileTheChannelIsUnwritableAndSendsTheNewestOnceItDrains() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading().highWaterMark(TWO_FRAMES);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            fx.update(a, 1, "a1").to(s).conflation(ALWAYS).publish();
            fx.update(b, 1, "b1").to(s).conflation(ALWAYS).publish();
            fx.drain(0);
            fx.update(a, 2, "a2").to(s).conflation(ALWAYS).publish();
            fx.drain(0);
            fx.update(a, 3, "a3").to(s).conflation(ALWAYS).publish();
            fx.drain(0);
            assertThat(s.channel.isWritable()).isFalse();
            assertThat(s.session.conflation.holds(a)).isTrue();

            s.startReading(); // writable again: the poller is told, and drains on its loop
            fx.runTasks(0);

            assertThat(s.frames()).extracting(Frame::messages).containsExactly(
                    List.of("UPDATE 1 #1 a1"),
                    List.of("UPDATE 2 #1 b1"),
                    List.of("TOPIC 1 a", "UPDATE 1 #3 CONFLATED a3"));
            assertThat(s.session.conflation.isEmpty()).isTrue();
        }
    }

    @Test
    void aDrainStopsWhenTheChannelTurnsUnwritableAndGoesOnWhenItIsWritableAgain() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading().highWaterMark(TWO_FRAMES);
            Topic[] topics = new Topic[5];
            for (int i = 0; i < topics.length; i++) {
                topics[i] = fx.topic(i + 1, "t" + (i + 1));
                fx.update(topics[i], 1, "v").to(s).conflation(ALWAYS).publish();
            }
            fx.drain(0);
            assertThat(s.channel.isWritable()).isFalse();
            assertThat(s.session.conflation.holds(topics[0])).isFalse();
            assertThat(s.session.conflation.holds(topics[4])).as("still held").isTrue();

            s.startReading();
            fx.runTasks(0);
            assertThat(s.messages()).containsExactly("UPDATE 1 #1 v", "UPDATE 2 #1 v", "UPDATE 3 #1 v",
                    "UPDATE 4 #1 v", "UPDATE 5 #1 v");
        }
    }

    // ------------------------------------------------------------------ on-backpressure

    @Test
    void onBackpressureSendsEveryUpdateWhileTheChannelIsWritable() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            fx.update(a, 1, "a1").to(s).conflation(ON_BACKPRESSURE).publish();
            fx.update(a, 2, "a2").to(s).conflation(ON_BACKPRESSURE).publish();
            fx.update(a, 3, "a3").to(s).conflation(ON_BACKPRESSURE).publish();
            fx.drain(0);

            assertThat(s.messages()).containsExactly("UPDATE 1 #1 a1", "UPDATE 1 #2 a2", "UPDATE 1 #3 a3");
            assertThat(fx.counters.conflatedUpdates()).isZero();
            assertThat(s.session.conflation).isNull();
        }
    }

    @Test
    void onBackpressureMergesWhileTheChannelIsUnwritableAndKeepsEachTopicsOrderWhenItDrains() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading().highWaterMark(TWO_FRAMES);
            Peer sibling = fx.session(0);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            long[] sequences = {1, 2, 3, 4};
            for (long seq : sequences) {
                fx.update(a, seq, "a" + seq).to(s, sibling).conflation(ON_BACKPRESSURE).publish();
                if (seq == 3) {
                    fx.update(b, 1, "b1").to(s, sibling).conflation(ON_BACKPRESSURE).publish();
                }
                fx.drain(0);
            }
            assertThat(s.session.conflation.holds(a)).isTrue();
            assertThat(s.session.conflation.holds(b)).isTrue();

            s.startReading();
            fx.runTasks(0);
            assertThat(s.messages()).containsExactly(
                    "UPDATE 1 #1 a1", "UPDATE 1 #2 a2", // queued before the channel turned unwritable
                    "TOPIC 1 a", "UPDATE 1 #4 CONFLATED a4", // 3 and 4 held, merged
                    "UPDATE 2 #1 b1"); // held, replaced nothing
            assertThat(sibling.messages()).containsExactly("UPDATE 1 #1 a1", "UPDATE 1 #2 a2",
                    "UPDATE 1 #3 a3", "UPDATE 2 #1 b1", "UPDATE 1 #4 a4");
            assertThat(fx.counters.conflatedUpdates()).isEqualTo(1);
        }
    }

    // ------------------------------------------------------------------ a policy changed by a reload

    @Test
    void anUpdateOfAHeldTopicJoinsItWhateverItsPolicySoItCannotOvertakeIt() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            fx.update(a, 1, "a1").to(s).conflation(ALWAYS).publish();
            // reloaded to on-backpressure: the channel is writable, but a1 is still held
            fx.update(a, 2, "a2").to(s).conflation(ON_BACKPRESSURE).publish();
            fx.update(b, 1, "b1").to(s).conflation(ON_BACKPRESSURE).publish();
            fx.drain(0);

            assertThat(s.messages()).containsExactly("UPDATE 2 #1 b1", "TOPIC 1 a", "UPDATE 1 #2 CONFLATED a2");
        }
    }

    @Test
    void conflationReloadedOffDropsAHeldUpdateForTheFullValueThatFollows() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            ByteBuf heldFrame = fx.update(a, 1, "a1").to(s).conflation(ALWAYS).publish();
            int refsBeforeDrain = heldFrame.refCnt();
            fx.update(a, 2, "a2").to(s).conflation(OFF).publish();
            fx.drain(0);

            assertThat(s.messages()).containsExactly("UPDATE 1 #2 a2");
            assertThat(s.session.conflation.isEmpty()).isTrue();
            assertThat(heldFrame.refCnt()).as("the held update's references were given back")
                    .isEqualTo(refsBeforeDrain);
        }
    }

    @Test
    void conflationReloadedOffStillMergesADeltaIntoAHeldUpdateSinceTheSessionLacksItsBase() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            fx.update(a, 1, "a1").to(s).conflation(ALWAYS).publish();
            fx.update(a, 2, "a2").asDelta("d2").to(s).conflation(OFF).publish();
            fx.drain(0);

            assertThat(s.messages()).containsExactly("TOPIC 1 a", "UPDATE 1 #2 CONFLATED a2");
        }
    }

    // ------------------------------------------------------------------ closing

    @Test
    void whatAClosedSessionHeldIsReleasedByItsPoller() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading().highWaterMark(TWO_FRAMES);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            fx.update(a, 1, "a1").to(s).conflation(ALWAYS).publish();
            fx.drain(0);
            fx.update(a, 2, "a2").to(s).conflation(ALWAYS).publish();
            fx.drain(0);
            assertThat(s.channel.isWritable()).isFalse();
            ByteBuf frame = fx.update(b, 1, "b1").to(s).conflation(ALWAYS).publish();
            ByteBuf value = fx.ring.get(fx.ring.getCursor()).value;
            int refsBeforeDrain = frame.refCnt();
            fx.drain(0);
            assertThat(s.session.conflation.holds(b)).isTrue();
            assertThat(frame.refCnt()).as("held: a duplicate of the frame").isEqualTo(refsBeforeDrain + 1);
            assertThat(value.refCnt()).as("and the value").isEqualTo(2);

            s.disconnect();
            fx.drain(0);
            assertThat(s.session.conflation.isEmpty()).isTrue();
            assertThat(frame.refCnt()).isEqualTo(refsBeforeDrain);
            assertThat(value.refCnt()).isEqualTo(1);
            assertThat(s.messages()).isEmpty();
        }
    }
}
