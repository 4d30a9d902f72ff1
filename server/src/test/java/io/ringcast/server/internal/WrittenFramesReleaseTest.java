package io.ringcast.server.internal;

import io.ringcast.protocol.MessageType;
import io.ringcast.server.internal.FanOutFixture.Peer;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the fan-out ring holds of the updates it carried: a frame is released once every poller has
 * written it, not when its slot is reused a whole ring later, so a publisher of large values pins
 * the history's frames and those not yet written, whatever the ring's size (issue 29: 1 MB values
 * grew direct memory by 1 MB a publish until the node died); and only between two inbound
 * batches, since the sequencer may still use a frame it has put on the ring while it handles the
 * event that made it.
 */
@Timeout(30)
class WrittenFramesReleaseTest {
    private static final int VALUE_BYTES = 64 * 1024;
    private static final int HISTORY = 4;
    private static final String CONFIG = "history: {length: " + HISTORY + "}";

    private final TrackingAllocator allocator = new TrackingAllocator();

    private static String value(int i) {
        return (i + ":").repeat(VALUE_BYTES).substring(0, VALUE_BYTES);
    }

    /** Buffers of at least one value's size still referenced: frames, history, held values. */
    private long largeBuffersHeld() {
        return allocator.unreleased().stream().filter(b -> b.capacity() >= VALUE_BYTES).count();
    }

    @Test
    void aWrittenFrameIsReleasedBeforeItsSlotIsReused() {
        int publishes = 200; // a fifth of the embedded node's ring: no slot is reused
        try (EmbeddedNode node = EmbeddedNode.allocatingFrom(CONFIG, allocator)) {
            Session sub = node.session(0);
            Session pub = node.session(1);
            node.subscribe(sub, 1, "big");
            node.received(sub);
            for (int i = 0; i < publishes; i++) {
                node.publish(pub, i + 1, "big", value(i));
                List<Received> got = node.received(sub); // the first comes after the topic's definition
                assertThat(got).filteredOn(m -> m.type() == MessageType.UPDATE).hasSize(1);
                node.received(pub);
            }
            assertThat(largeBuffersHeld()).as("the history's %d frames and the last one written, of %d published",
                    HISTORY, publishes).isLessThanOrEqualTo(HISTORY + 2);
        }
        allocator.assertAllReleased();
    }

    @Test
    void aFrameIsHeldUntilTheLoopItIsForWroteIt() {
        try (EmbeddedNode node = EmbeddedNode.allocatingFrom(CONFIG, allocator)) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "big");
            node.received(sub);
            int unwritten = 20;
            for (int i = 0; i < unwritten; i++) {
                node.publish(null, 0, "big", value(i)); // nothing delivered meanwhile
            }
            assertThat(largeBuffersHeld()).as("the pollers have not written them").isGreaterThanOrEqualTo(unwritten);

            assertThat(node.received(sub)).filteredOn(m -> m.type() == MessageType.UPDATE).hasSize(unwritten);
            node.publish(null, 0, "big", value(unwritten)); // the sequencer's next wake releases them
            assertThat(largeBuffersHeld()).isLessThanOrEqualTo(HISTORY + 2);
        }
        allocator.assertAllReleased();
    }

    @Test
    void nothingIsReleasedInTheMiddleOfABatch() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            FanOutProxy proxy = new FanOutProxy(fx.ring, fx.pollers);
            Peer sub = fx.session(0);
            Topic t = fx.topic(1, "t");
            t.subscribers = fx.subscribers(sub);
            proxy.update(encoded(t, 1), t, new InboundEvent(), 1);
            proxy.endOfBatch(); // wakes the poller
            UpdateEncoder.Encoded kept = encoded(t, 2);
            proxy.update(kept, t, new InboundEvent(), 2);
            fx.runTasks(0); // the poller, awake, writes it at once: as one on another thread may
            for (int seq = 3; seq < 3 + 300; seq++) { // long enough for a wake within the batch
                proxy.update(encoded(t, seq), t, new InboundEvent(), seq);
            }
            assertThat(kept.frame.refCnt()).as("a frame of the batch being handled, written already").isPositive();

            proxy.endOfBatch();
            assertThat(kept.frame.refCnt()).as("released at the end of the batch").isZero();
            fx.drainAll();
            assertThat(sub.messages()).hasSize(302);
        }
    }

    private static UpdateEncoder.Encoded encoded(Topic t, long sequence) {
        UpdateEncoder.Encoded u = new UpdateEncoder.Encoded();
        u.frame = FanOutFixture.updateFrame(t, sequence, "v" + sequence);
        return u;
    }
}
