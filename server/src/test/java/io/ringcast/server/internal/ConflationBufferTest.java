package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.internal.FanOutFixture.Peer;
import io.ringcast.server.internal.ReceivedFrames.Frame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One session's held updates on their own, without a poller: at most one per topic, in the order
 * the topics first came, the shared frame when nothing was skipped, a frame of its own when
 * something was, and every reference given back.
 */
@Timeout(10)
class ConflationBufferTest {

    /** Puts an update of {@code topic} on the ring as the sequencer would for a conflated topic, and returns its event. */
    private static FanOutEvent held(FanOutFixture fx, Topic topic, long sequence, String value) {
        fx.update(topic, sequence, value).conflation(Conflation.ALWAYS).publish();
        return fx.lastEvent();
    }

    @Test
    void putTellsWhetherItReplacedAnUpdateOfTheSameTopic() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            ConflationBuffer buffer = new ConflationBuffer();
            assertThat(buffer.isEmpty()).isTrue();

            assertThat(buffer.put(held(fx, a, 1, "a1"), false)).isFalse();
            assertThat(buffer.put(held(fx, b, 1, "b1"), false)).isFalse();
            assertThat(buffer.put(held(fx, a, 2, "a2"), false)).isTrue();
            assertThat(buffer.holds(a)).isTrue();
            assertThat(buffer.holds(b)).isTrue();
            assertThat(buffer.holds(fx.topic(3, "c"))).isFalse();
            assertThat(buffer.isEmpty()).isFalse();
            buffer.release();
        }
    }

    @Test
    void drainToWritesOneFramePerTopicInTheOrderTheTopicsCameAndCountsTheirBytes() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            ConflationBuffer buffer = new ConflationBuffer();
            buffer.put(held(fx, a, 1, "a1"), false);
            buffer.put(held(fx, b, 1, "b1"), false);
            buffer.put(held(fx, a, 2, "a2"), false);
            buffer.put(held(fx, a, 3, "a3"), false);

            assertThat(buffer.drainTo(s.session)).isEqualTo(2);
            assertThat(buffer.isEmpty()).isTrue();
            s.channel.flush();
            List<Frame> frames = s.frames();
            assertThat(frames).extracting(Frame::messages).containsExactly(
                    List.of("TOPIC 1 a", "UPDATE 1 #3 CONFLATED a3"),
                    List.of("UPDATE 2 #1 b1"));
            assertThat(buffer.drainedBytes()).isEqualTo(frames.get(0).wireBytes() + frames.get(1).wireBytes());
        }
    }

    @Test
    void aTopicHeldAgainAfterADrainStartsAfreshAndIsSentAsTheSharedFrame() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            ConflationBuffer buffer = new ConflationBuffer();
            buffer.put(held(fx, a, 1, "a1"), false);
            buffer.put(held(fx, a, 2, "a2"), false);
            buffer.drainTo(s.session);
            assertThat(buffer.put(held(fx, a, 3, "a3"), false)).as("nothing held any more to replace").isFalse();
            buffer.drainTo(s.session);
            s.channel.flush();

            assertThat(s.messages()).containsExactly("TOPIC 1 a", "UPDATE 1 #2 CONFLATED a2", "UPDATE 1 #3 a3");
        }
    }

    @Test
    void aCompressingSessionHoldsTheCompressedFrame() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0, true);
            String value = FanOutFixture.COMPRESSIBLE_VALUE;
            fx.update(fx.topic(1, "a"), 1, value).conflation(Conflation.ALWAYS).compressed().publish();
            ConflationBuffer buffer = new ConflationBuffer();
            buffer.put(fx.lastEvent(), true);
            buffer.drainTo(s.session);
            s.channel.flush();

            Frame frame = s.frames().get(0);
            assertThat(frame.compressed()).isTrue();
            assertThat(frame.messages()).containsExactly("UPDATE 1 #1 " + value);
        }
    }

    @Test
    void drainToWritesNothingWhileTheChannelIsUnwritable() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0).stopReading().highWaterMark(100);
            Topic a = fx.topic(1, "a");
            ConflationBuffer buffer = new ConflationBuffer();
            buffer.put(held(fx, a, 1, "a1"), false);
            assertThat(buffer.drainTo(s.session)).isEqualTo(1);
            s.channel.flush();
            assertThat(s.channel.isWritable()).isFalse();

            buffer.put(held(fx, a, 2, "a2"), false);
            assertThat(buffer.drainTo(s.session)).isZero();
            assertThat(buffer.drainedBytes()).isZero();
            assertThat(buffer.holds(a)).isTrue();
            buffer.release();
        }
    }

    @Test
    void discardDropsOnlyThatTopicAndGivesBackItsReferences() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            Topic a = fx.topic(1, "a");
            Topic b = fx.topic(2, "b");
            FanOutEvent ev = held(fx, a, 1, "a1");
            ByteBuf frame = ev.frame;
            ByteBuf value = ev.value;
            int frameRefs = frame.refCnt();
            ConflationBuffer buffer = new ConflationBuffer();
            buffer.put(ev, false);
            buffer.put(held(fx, b, 1, "b1"), false);
            assertThat(frame.refCnt()).isEqualTo(frameRefs + 1);
            assertThat(value.refCnt()).isEqualTo(2);

            buffer.discard(a);
            buffer.discard(fx.topic(3, "never held"));

            assertThat(buffer.holds(a)).isFalse();
            assertThat(frame.refCnt()).isEqualTo(frameRefs);
            assertThat(value.refCnt()).isEqualTo(1);
            buffer.drainTo(s.session);
            s.channel.flush();
            assertThat(s.messages()).containsExactly("UPDATE 2 #1 b1");
        }
    }

    @Test
    void releaseGivesBackEveryReferenceHeldAndReplaced() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Topic a = fx.topic(1, "a");
            FanOutEvent first = held(fx, a, 1, "a1");
            ByteBuf firstFrame = first.frame;
            ByteBuf firstValue = first.value;
            int firstFrameRefs = firstFrame.refCnt();
            ConflationBuffer buffer = new ConflationBuffer();
            buffer.put(first, false);
            FanOutEvent second = held(fx, a, 2, "a2");
            ByteBuf secondFrame = second.frame;
            ByteBuf secondValue = second.value;
            int secondFrameRefs = secondFrame.refCnt();
            buffer.put(second, false);
            assertThat(firstFrame.refCnt()).as("replaced: its frame given back at once").isEqualTo(firstFrameRefs);
            assertThat(firstValue.refCnt()).isEqualTo(1);
            assertThat(secondFrame.refCnt()).as("skipped: the shared frame is not held").isEqualTo(secondFrameRefs);
            assertThat(secondValue.refCnt()).isEqualTo(2);

            buffer.release();
            assertThat(buffer.isEmpty()).isTrue();
            assertThat(secondValue.refCnt()).isEqualTo(1);
        }
    }
}
