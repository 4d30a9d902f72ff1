package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.server.config.Conflation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/** A fan-out ring slot gives back what its previous use held when the sequencer reuses it. */
@Timeout(10)
class FanOutEventTest {

    @Test
    void recycleReleasesTheFramesAndValueOfThePreviousUseAndForgetsEveryReference() {
        FanOutEvent ev = new FanOutEvent();
        ev.frame = FanOutFixture.ALLOC.directBuffer(16).writeZero(16);
        ev.compressedFrame = FanOutFixture.ALLOC.directBuffer(8).writeZero(8);
        ev.value = ev.frame.retainedSlice(4, 4);
        ev.updateFor(SubscriberSet.empty(1), null);
        ev.conflation = Conflation.ALWAYS;
        ev.receivedNanos = 123;
        ByteBuf frame = ev.frame;
        ByteBuf compressed = ev.compressedFrame;

        ev.recycle();

        assertThat(frame.refCnt()).isZero();
        assertThat(compressed.refCnt()).isZero();
        assertThat(ev.frame).isNull();
        assertThat(ev.compressedFrame).isNull();
        assertThat(ev.value).isNull();
        assertThat(ev.subscribers).isNull();
        assertThat(ev.conflation).isNull();
        assertThat(ev.audience).isNull();
        assertThat(ev.target).isNull();
        assertThat(ev.publisher).isNull();
        assertThat(ev.subscriberLoops).isNull();
        assertThat(ev.isFor(0)).as("a recycled slot is for no loop").isFalse();
        assertThat(ev.sessionLoop).isEqualTo(-1);
        assertThat(ev.receivedNanos).isZero();

        ev.recycle(); // an empty slot: nothing to release twice
    }
}
