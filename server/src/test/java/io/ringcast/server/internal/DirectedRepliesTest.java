package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageType;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.ringcast.server.internal.OutboundFrame.GATHERED_PAYLOAD_BYTES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The sequencer's replies to one session: how they are cut into frames (read back through an
 * {@link EmbeddedNode}), when they are compressed, and, on a fan-out ring with no pollers where
 * each frame it was given can be inspected, what a refusal sends and what {@code close} releases.
 */
@Timeout(10)
class DirectedRepliesTest {

    /** The payload size of each frame the messages came in, by frame index. */
    private static Map<Integer, Integer> frameSizes(List<Received> messages) {
        Map<Integer, Integer> sizes = new TreeMap<>();
        for (Received m : messages) {
            sizes.put(m.frame(), m.frameBytes());
        }
        return sizes;
    }

    // ------------------------------------------------------------------ frames, through a node

    @Test
    void aSubscribeToManyLargeValuesIsCutIntoFullFramesOfAtMostTheTarget() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            int topics = 30;
            for (int i = 0; i < topics; i++) {
                node.publish(null, 0, String.format("big/%02d", i), String.valueOf((char) ('A' + i % 26)).repeat(5000));
            }
            Session sub = node.session(1);
            node.subscribe(sub, 4, "big/#");
            List<Received> got = node.received(sub);

            assertThat(got).hasSize(2 * topics + 1);
            for (int i = 0; i < topics; i++) {
                Received topic = got.get(2 * i);
                Received snapshot = got.get(2 * i + 1);
                assertThat(topic.type()).isEqualTo(MessageType.TOPIC);
                assertThat(snapshot.type()).isEqualTo(MessageType.SNAPSHOT);
                assertThat(snapshot.alias()).as("each snapshot right after its topic").isEqualTo(topic.alias());
                assertThat(snapshot.bytes()).hasSize(5000);
            }
            Received subscribed = got.get(got.size() - 1);
            assertThat(subscribed).extracting(Received::type, Received::id, Received::sequence)
                    .containsExactly(MessageType.SUBSCRIBED, 4, (long) topics);

            Map<Integer, Integer> frames = frameSizes(got);
            assertThat(frames).as("about 150 kB of replies").hasSizeGreaterThanOrEqualTo(3);
            assertThat(frames.values()).allSatisfy(bytes -> assertThat(bytes).isLessThanOrEqualTo(GATHERED_PAYLOAD_BYTES));
            assertThat(frames.values().stream().mapToInt(Integer::intValue).sum())
                    .as("the frames hold these messages and nothing else")
                    .isEqualTo(got.stream().mapToInt(Received::wireBytes).sum());
            for (int i = 1; i < got.size(); i++) {
                Received previous = got.get(i - 1);
                Received m = got.get(i);
                if (m.frame() != previous.frame()) {
                    // a streamed reply's window, one frame, ends before a topic whose messages do not fit
                    int topicBytes = m.wireBytes() + (m.type() == MessageType.TOPIC ? got.get(i + 1).wireBytes() : 0);
                    assertThat(previous.frameBytes() + topicBytes).as("frame %d was cut only when full", previous.frame())
                            .isGreaterThan(GATHERED_PAYLOAD_BYTES);
                }
            }
        }
    }

    @Test
    void aReplyMessageLargerThanTheTargetGoesInAFrameOfItsOwn() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            String large = "x".repeat(GATHERED_PAYLOAD_BYTES + 1000);
            node.publish(null, 0, "large", large);
            Session sub = node.session(0);
            node.subscribe(sub, 1, "large");
            List<Received> got = node.received(sub);

            assertThat(got).extracting(Received::type)
                    .containsExactly(MessageType.TOPIC, MessageType.SNAPSHOT, MessageType.SUBSCRIBED);
            assertThat(got).extracting(Received::frame).containsExactly(0, 1, 2);
            assertThat(got.get(1).frameBytes()).isEqualTo(got.get(1).wireBytes());
            assertThat(got.get(1).text()).isEqualTo(large);
        }
    }

    @Test
    void repliesAndTheUpdatesAfterThemReachTheSessionInOrder() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "t", "v1");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            node.publish(null, 0, "t", "v2");
            node.subscribe(sub, 2, "t");
            node.publish(null, 0, "t", "v3");

            assertThat(node.received(sub)).extracting(Received::type, Received::text).containsExactly(
                    tuple(MessageType.TOPIC, "t"), tuple(MessageType.SNAPSHOT, "v1"), tuple(MessageType.SUBSCRIBED, ""),
                    tuple(MessageType.UPDATE, "v2"),
                    tuple(MessageType.SNAPSHOT, "v2"), tuple(MessageType.SUBSCRIBED, ""),
                    tuple(MessageType.UPDATE, "v3"));
        }
    }

    @Test
    void aReplyToACompressedSessionIsCompressedWhenAnyTopicCompresses() {
        String features = "features: {compression: false, compressionMinBytes: 64,"
                + " overrides: [{selector: \"slow/#\", compression: true}]}";
        try (EmbeddedNode node = new EmbeddedNode(features)) {
            String value = "0123456789".repeat(100);
            node.publish(null, 0, "fast/t", value);
            Session deflating = node.session(0, true);
            Session plain = node.session(1, false);
            node.subscribe(deflating, 1, "fast/t");
            node.subscribe(plain, 1, "fast/t");

            List<Received> compressedReply = node.received(deflating);
            assertThat(compressedReply).extracting(Received::compressed).containsOnly(true);
            assertThat(compressedReply.get(1).text()).isEqualTo(value);
            assertThat(node.received(plain)).extracting(Received::compressed).containsOnly(false);

            node.publish(null, 0, "fast/t", value + "!");
            assertThat(node.received(deflating)).as("the topic's own updates are not compressed")
                    .extracting(Received::compressed).containsExactly(false);
        }
    }

    @Test
    void aReplyToACompressedSessionIsPlainWhenNoTopicCompresses() {
        try (EmbeddedNode node = new EmbeddedNode("features: {compression: false, compressionMinBytes: 64}")) {
            node.publish(null, 0, "t", "0123456789".repeat(100));
            Session deflating = node.session(0, true);
            node.subscribe(deflating, 1, "t");
            assertThat(node.received(deflating)).extracting(Received::compressed).containsOnly(false);
            assertThat(node.counters.compressionBytesIn()).isZero();
        }
    }

    // ------------------------------------------------------------------ on a ring without pollers

    /** Replies on a fan-out ring nobody reads: each frame put on it stays in its slot to be inspected. */
    private static final class Bench implements AutoCloseable {
        final TrackingAllocator alloc = new TrackingAllocator();
        final ServerCounters counters = new ServerCounters();
        final RingBuffer<FanOutEvent> ring = RingBuffer.createSingleProducer(FanOutEvent::new, 16);
        final FanOutProxy fanOut = new FanOutProxy(ring, new FanOutPoller[0]);
        final UpdateEncoder encoder = new UpdateEncoder(alloc, ConfigLoader.fromYaml("{}").features(), counters);
        final DirectedReplies replies = new DirectedReplies(alloc, fanOut, encoder, counters);
        private final List<EmbeddedChannel> channels = new ArrayList<>();

        Session session() {
            return EmbeddedNode.session(channels, 0, false);
        }

        /** How many frames were put on the ring. */
        int framesSent() {
            return (int) (ring.getCursor() + 1);
        }

        @Override
        public void close() {
            replies.close();
            fanOut.releaseAll();
            encoder.close();
            channels.forEach(EmbeddedChannel::finishAndReleaseAll);
            alloc.assertAllReleased();
        }
    }

    @Test
    void aRefusalWithoutAPublisherIsCountedAndSendsNothing() {
        try (Bench bench = new Bench()) {
            int allocated = bench.alloc.allocations();
            bench.replies.refuse(null, ErrorCode.TOO_MANY_TOPICS, 3, "refused");
            bench.replies.flush();

            assertThat(bench.counters.errors(ErrorCode.TOO_MANY_TOPICS)).isEqualTo(1);
            assertThat(bench.framesSent()).isZero();
            assertThat(bench.alloc.allocations()).isEqualTo(allocated);
        }
    }

    @Test
    void aRefusalGoesOutAtOnceInTheFrameOfTheAcksBeforeIt() {
        try (Bench bench = new Bench()) {
            Session publisher = bench.session();
            bench.replies.publishAck(publisher, 1, 10);
            bench.replies.publishAck(publisher, 2, 11);
            assertThat(bench.framesSent()).as("acks wait for the end of the command").isZero();

            bench.replies.refuse(publisher, ErrorCode.REPUBLISH_CONFLICT, 3, "why");
            assertThat(bench.framesSent()).isEqualTo(1);
            FanOutEvent ev = bench.ring.get(0);
            assertThat(ev.kind).isEqualTo(FanOutEvent.DIRECTED);
            assertThat(ev.target).isSameAs(publisher);
            assertThat(ReceivedFrames.messagesOf(ev.frame)).extracting(Received::type, Received::id, Received::code)
                    .containsExactly(tuple(MessageType.PUBLISH_ACK, 1, 0), tuple(MessageType.PUBLISH_ACK, 2, 0),
                            tuple(MessageType.ERROR, 3, ErrorCode.REPUBLISH_CONFLICT.code()));
            assertThat(bench.counters.errors(ErrorCode.REPUBLISH_CONFLICT)).isEqualTo(1);
        }
    }

    @Test
    void aFlushWithNothingBuiltPutsNothingOnTheRingAndEachFlushEndsAFrame() {
        try (Bench bench = new Bench()) {
            Session a = bench.session();
            Session b = bench.session();
            bench.replies.flush();
            assertThat(bench.framesSent()).isZero();

            bench.replies.subscribed(a, 1, 0);
            bench.replies.flush();
            bench.replies.flush();
            bench.replies.subscribed(b, 1, 0);
            bench.replies.flush();
            assertThat(bench.framesSent()).isEqualTo(2);
            assertThat(bench.ring.get(0).target).isSameAs(a);
            assertThat(bench.ring.get(1).target).isSameAs(b);
        }
    }

    @Test
    void closeReleasesAFrameLeftUnflushedAndMayBeCalledTwice() {
        try (Bench bench = new Bench()) {
            bench.replies.publishAck(bench.session(), 1, 1);
            assertThat(bench.alloc.unreleased()).as("the scratch buffer and the frame being built").hasSize(2);
            bench.replies.close();
            assertThat(bench.alloc.unreleased()).hasSize(1);
            assertThat(bench.framesSent()).isZero();
        } // closes the replies again, then checks every buffer was released
    }
}
