package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** Many publishes go out in few frames, each within the server's limit, in call order. */
@Timeout(30)
class BatchingTest {

    @Test
    void hundredThousandPublishesFillFramesUpToTheServersLimitWithinThePublishWindow() {
        int maxFrameBytes = 4096; // the smallest a server announces: a window of publishes fills several frames
        int count = 100_000;
        try (EmbeddedConnection c = new EmbeddedConnection()) {
            c.open(maxFrameBytes, 0);
            List<CompletableFuture<Long>> futures = new ArrayList<>(count);
            long messageBytes = 0;
            for (int i = 0; i < count; i++) {
                String topic = "load/" + (i % 100);
                String value = "value-" + i;
                messageBytes += WireCodec.publishBytes(topic.length(), value.length());
                futures.add(enqueue(c, topic, value));
            }
            // one offer per publish, yet one drain per window (plus reschedules when the socket backs up); the
            // server acks what each round sent, which opens the window for the next
            int frames = 0;
            int next = 0;
            while (next < count) {
                c.runTasks();
                int sentBefore = next;
                for (ByteBuf frame : c.sentFrames()) {
                    frames++;
                    assertThat(frame.readableBytes()).isLessThanOrEqualTo(maxFrameBytes);
                    // decoded from an untracked copy: paranoid leak detection records every read of the original
                    for (String line : Wire.decodeClientFrame(Unpooled.wrappedBuffer(ByteBufUtil.getBytes(frame)))) {
                        assertThat(line).isEqualTo("PUBLISH " + (PublishWindow.FIRST_CORRELATION_ID + next)
                                + " load/" + (next % 100) + " value-" + next);
                        next++;
                    }
                    frame.release();
                }
                assertThat(next).as("publishes sent in this round, after %d", sentBefore).isGreaterThan(sentBefore);
                assertThat(c.session.unackedPublishes()).as("publishes sent and not acked")
                        .isEqualTo(next - sentBefore).isLessThanOrEqualTo(PublishWindow.MAX_UNACKED);
                int from = sentBefore;
                int to = next;
                c.fromServer(b -> {
                    for (int i = from; i < to; i++) {
                        WireCodec.writePublishAck(b, PublishWindow.FIRST_CORRELATION_ID + i, i + 1);
                    }
                });
            }
            long fullFrames = (messageBytes + maxFrameBytes - 1) / maxFrameBytes;
            long windows = (count + PublishWindow.MAX_UNACKED - 1) / PublishWindow.MAX_UNACKED;
            // each window ends in one frame that is not full
            assertThat(frames).isBetween((int) fullFrames, (int) (fullFrames + windows + 2));
            assertThat(futures.get(count - 1)).isCompletedWithValue((long) count);
            assertThat(c.inFlight).hasValue(0);
        }
    }

    @Test
    void aPublishLargerThanTheServersFrameLimitFailsLocally() {
        try (EmbeddedConnection c = new EmbeddedConnection()) {
            c.open(1024, 0);
            CompletableFuture<Long> big = c.publish("a", "x".repeat(1024));
            CompletableFuture<Long> fits = c.publish("a", "x".repeat(1024 - 12));
            assertThat(big).isCompletedExceptionally();
            assertThat(c.sent()).singleElement().asString().startsWith("PUBLISH");
            assertThat(fits).isNotDone();
        }
    }

    private static CompletableFuture<Long> enqueue(EmbeddedConnection c, String topic, String value) {
        PublishRequest p = new PublishRequest(topic, topic.length(), value.getBytes(), c.inFlight);
        c.inFlight.incrementAndGet();
        c.commands.offer(p);
        return p.future;
    }
}
