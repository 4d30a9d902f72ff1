package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.internal.FanOutFixture.Peer;
import io.ringcast.server.internal.ReceivedFrames.Frame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Replies written while one read is decoded, gathered into as few frames as they need. */
@Timeout(30)
class ReplyFramesTest {
    private static final int PONG_BYTES = WireCodec.PONG_BYTES;

    private static void pongs(ReplyFrames replies, int from, int count) {
        for (int i = from; i < from + count; i++) {
            WireCodec.writePong(replies.room(PONG_BYTES), i);
        }
    }

    private static List<String> expectedPongs(int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add("PONG " + i);
        }
        return out;
    }

    @Test
    void theRepliesOfOneReadGoOutInOneFrame() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            ReplyFrames replies = new ReplyFrames(s.session.ctx, 1 << 20);
            pongs(replies, 0, 3);
            assertThat(s.channel.outboundMessages()).as("nothing handed to the channel before write()").isEmpty();
            replies.write();
            s.channel.flush();

            List<Frame> frames = s.frames();
            assertThat(frames).hasSize(1);
            assertThat(frames.get(0).messages()).isEqualTo(expectedPongs(3));
        }
    }

    @Test
    void aFrameIsWrittenWhenTheNextReplyWouldTakeItPast64KiB() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            ReplyFrames replies = new ReplyFrames(s.session.ctx, 1 << 20);
            pongs(replies, 0, 10_000);
            replies.write();
            s.channel.flush();

            List<Frame> frames = s.frames();
            int perFrame = OutboundFrame.GATHERED_PAYLOAD_BYTES / PONG_BYTES;
            assertThat(frames).extracting(f -> f.messages().size()).containsExactly(perFrame, 10_000 - perFrame);
            assertThat(frames.get(0).wireBytes()).isEqualTo(4 + perFrame * PONG_BYTES);
            List<String> all = new ArrayList<>();
            frames.forEach(f -> all.addAll(f.messages()));
            assertThat(all).isEqualTo(expectedPongs(10_000));
        }
    }

    @Test
    void noFrameIsLargerThanLimitsMaxFrameBytes() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            int maxFrameBytes = 1_000;
            ReplyFrames replies = new ReplyFrames(s.session.ctx, maxFrameBytes);
            pongs(replies, 0, 200);
            replies.write();
            s.channel.flush();

            List<Frame> frames = s.frames();
            int perFrame = (maxFrameBytes - OutboundFrame.HEADER_RESERVE_BYTES) / PONG_BYTES;
            assertThat(frames).hasSize((200 + perFrame - 1) / perFrame);
            assertThat(frames).allSatisfy(f -> assertThat(f.wireBytes()).isLessThanOrEqualTo(maxFrameBytes));
            assertThat(frames.get(0).messages()).hasSize(perFrame);
        }
    }

    @Test
    void gatheredBytesCountsThePayloadNotYetHandedToTheChannel() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            ReplyFrames replies = new ReplyFrames(s.session.ctx, 1 << 20);
            assertThat(replies.gatheredBytes()).isZero();
            pongs(replies, 0, 2);
            assertThat(replies.gatheredBytes()).as("two PONGs, without the header reserve").isEqualTo(2 * PONG_BYTES);
            replies.write();
            assertThat(replies.gatheredBytes()).isZero();
            s.channel.flush();
            s.frames();
        }
    }

    @Test
    void writeWithNothingGatheredWritesNothing() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            ReplyFrames replies = new ReplyFrames(s.session.ctx, 1 << 20);
            replies.write();
            pongs(replies, 0, 1);
            replies.write();
            replies.write();
            s.channel.flush();
            assertThat(s.frames()).hasSize(1);
        }
    }

    @Test
    void releaseDropsWhatWasGathered() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer s = fx.session(0);
            ReplyFrames replies = new ReplyFrames(s.session.ctx, 1 << 20);
            ByteBuf open = replies.room(PONG_BYTES);
            WireCodec.writePong(open, 1);
            replies.release();
            assertThat(open.refCnt()).isZero();
            assertThat(replies.gatheredBytes()).isZero();
            replies.write();
            s.channel.flush();
            assertThat(s.frames()).isEmpty();
        }
    }
}
