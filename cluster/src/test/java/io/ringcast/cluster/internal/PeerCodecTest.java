package io.ringcast.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

class PeerCodecTest {

    @Test
    void everyMessageSurvivesTheRoundTrip() {
        byte[] value = "ünïcode value".getBytes(StandardCharsets.UTF_8);
        List<PeerMessage> messages = List.of(
                new PeerMessage.Hello("node-1"),
                new PeerMessage.Forward(7, "node-2", 13, "fx/EURUSD", value, 0, 0),
                new PeerMessage.Forward(8, "node-3", 13, "fx/EURUSD", value, 0x0123456789ABCDEFL, 1 << 30),
                new PeerMessage.ForwardResult(7, PeerMessage.ForwardResult.NOT_OWNER, 99),
                new PeerMessage.Update(13, 1000, 42, "node-2", 7, "fx/EURUSD", value, true, 0, 0),
                new PeerMessage.Update(13, 1001, 43, "node-3", 8, "fx/EURUSD", value, false, -5L, 77),
                new PeerMessage.Replicated(13, 1000),
                new PeerMessage.Fetch(13, 990),
                new PeerMessage.OwnerState(5, new int[] {1, 2, 270}, new long[] {10, 0, Long.MAX_VALUE}),
                new PeerMessage.Handoff(13, 1000),
                new PeerMessage.PartitionSnapshot(13, 1000, List.of(
                        new PeerMessage.TopicValue("fx/EURUSD", 42, value),
                        new PeerMessage.TopicValue("fx/GBPUSD", 1, new byte[0]))));
        for (PeerMessage m : messages) {
            ByteBuf encoded = PeerCodec.encode(ByteBufAllocator.DEFAULT, m);
            try {
                PeerMessage decoded = PeerCodec.decode(encoded);
                assertThat(decoded).usingRecursiveComparison().isEqualTo(m);
                assertThat(encoded.readableBytes()).as("whole message read").isZero();
            } finally {
                encoded.release();
            }
        }
    }

    @Test
    void truncatedOrUnknownMessagesAreRefusedNamingTheProblem() {
        ByteBuf whole = PeerCodec.encode(ByteBufAllocator.DEFAULT, new PeerMessage.Update(1, 2, 3, "n", 4, "a/b",
                new byte[100], false, 0, 0));
        try {
            ByteBuf cut = whole.slice(0, whole.readableBytes() - 50);
            assertThatThrownBy(() -> PeerCodec.decode(cut)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("value of 100 bytes");
        } finally {
            whole.release();
        }
        assertThatThrownBy(() -> PeerCodec.decode(Unpooled.wrappedBuffer(new byte[] {99})))
                .hasMessageContaining("unknown peer message type 99");
        assertThatThrownBy(() -> PeerCodec.decode(Unpooled.wrappedBuffer(new byte[] {5, 0, 0})))
                .hasMessageContaining("ends early");
    }
}
