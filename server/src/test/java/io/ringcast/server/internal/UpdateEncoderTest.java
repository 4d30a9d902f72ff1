package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.DeltaFormatException;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.Features;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The encoder on its own: the frame it builds for an update (layout and offsets), when it sends a
 * delta, what it holds for the topic and the ring and with how many references, when it
 * compresses, and the reply and restore frames it makes. Every buffer it allocates comes from a
 * {@link TrackingAllocator}, and each test ends with all of them released.
 */
@Timeout(10)
class UpdateEncoderTest {
    private static final String QUOTE = "{\"symbol\":\"EURUSD\",\"bid\":1.08412,\"ask\":1.08415,\"venue\":\"XLON\",\"n\":1}";
    private static final TopicFeatures PLAIN = new TopicFeatures(true, false, false, Conflation.OFF);
    private static final TopicFeatures DELTAS = new TopicFeatures(true, true, false, Conflation.OFF);
    private static final TopicFeatures COMPRESSED = new TopicFeatures(true, false, true, Conflation.OFF);

    private final TrackingAllocator alloc = new TrackingAllocator();
    private final ServerCounters counters = new ServerCounters();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final List<ByteBuf> owned = new ArrayList<>();
    private final List<Topic> topics = new ArrayList<>();
    private UpdateEncoder encoder;

    @AfterEach
    void releaseAndCheck() {
        owned.forEach(ByteBuf::release);
        topics.forEach(Topic::releaseHistory);
        if (encoder != null) {
            encoder.close();
        }
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        alloc.assertAllReleased();
    }

    private static Features features(String yaml) {
        return ConfigLoader.fromYaml(yaml).features();
    }

    private UpdateEncoder encoder(String featuresYaml) {
        encoder = new UpdateEncoder(alloc, features(featuresYaml), counters);
        return encoder;
    }

    private Session session(boolean compressed) {
        return EmbeddedNode.session(channels, 0, compressed);
    }

    private Topic topic(int alias, String path, TopicFeatures features, Session... subscribers) {
        Topic topic = new Topic(alias, path, path.split("/"), SubscriberSet.of(List.of(subscribers), 1), 8, features);
        topics.add(topic);
        return topic;
    }

    private static ByteBuf value(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    }

    /** Sequences and encodes the topic's next update, as the sequencer does; the ring's references are released after the test. */
    private UpdateEncoder.Encoded next(Topic topic, String text) {
        ByteBuf value = value(text);
        boolean created = topic.sequence == 0;
        UpdateEncoder.Encoded u = encoder.encode(topic, created, ++topic.sequence, value);
        assertThat(value.readerIndex()).as("the value is not consumed").isZero();
        value.release();
        owned.add(u.frame);
        if (u.compressedFrame != null) {
            owned.add(u.compressedFrame);
        }
        if (u.heldValue != null) {
            owned.add(u.heldValue);
        }
        return u;
    }

    /** {@link #next}, then the topic keeps the update, as the sequencer does with the cache on. */
    private UpdateEncoder.Encoded nextKept(Topic topic, String text) {
        UpdateEncoder.Encoded u = next(topic, text);
        topic.record(u.frame.retain(), u.updateOffset, u.fullValueOfDelta);
        return u;
    }

    private static String text(ByteBuf buf, int index, int length) {
        return buf.toString(index, length, StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ layout

    @Test
    void aCreatingUpdateCarriesTheTopicDefinitionThenTheUpdateInOneFrame() {
        encoder("{}");
        Topic topic = topic(3, "fx/eur", PLAIN);
        UpdateEncoder.Encoded u = next(topic, "1.08");

        List<Received> messages = ReceivedFrames.messagesOf(u.frame);
        assertThat(messages).extracting(Received::type).containsExactly(MessageType.TOPIC, MessageType.UPDATE);
        assertThat(messages.get(0).alias()).isEqualTo(3);
        assertThat(messages.get(0).text()).isEqualTo("fx/eur");
        assertThat(messages.get(1).alias()).isEqualTo(3);
        assertThat(messages.get(1).sequence()).isEqualTo(1);
        assertThat(messages.get(1).flags()).isZero();
        assertThat(messages.get(1).text()).isEqualTo("1.08");

        assertThat(u.updateOffset).isEqualTo(OutboundFrame.HEADER_RESERVE_BYTES + WireCodec.topicBytes("fx/eur"));
        assertThat(u.frame.getByte(u.updateOffset)).isEqualTo(MessageType.UPDATE);
        assertThat(u.valueIndex).isEqualTo(u.updateOffset + WireCodec.UPDATE_OVERHEAD_BYTES);
        assertThat(text(u.frame, u.valueIndex, u.valueLength)).isEqualTo("1.08");
        assertThat(u.frame.writerIndex()).as("the value ends the frame").isEqualTo(u.valueIndex + u.valueLength);
        assertThat(u.frame.refCnt()).as("one reference, for the ring").isEqualTo(1);
    }

    @Test
    void anUpdateOfAnExistingTopicIsTheUpdateMessageAlone() {
        encoder("{}");
        Topic topic = topic(3, "fx/eur", PLAIN);
        nextKept(topic, "1.08");
        UpdateEncoder.Encoded u = next(topic, "1.09");

        assertThat(ReceivedFrames.messagesOf(u.frame)).extracting(Received::type, Received::sequence, Received::text)
                .containsExactly(tuple(MessageType.UPDATE, 2L, "1.09"));
        assertThat(u.updateOffset).isEqualTo(OutboundFrame.HEADER_RESERVE_BYTES);
        assertThat(u.frame.readerIndex()).as("a 2-byte header just in front of the message")
                .isEqualTo(OutboundFrame.HEADER_RESERVE_BYTES - 2);
    }

    @Test
    void theOffsetsPointAtTheValueWhateverTheLengthOfTheFrameHeader() {
        encoder("{}");
        Topic topic = topic(1, "t", PLAIN);
        int[] lengths = {50, 1000, 70_000}; // 2-, 4- and 10-byte WebSocket headers
        int[] headerStarts = {OutboundFrame.HEADER_RESERVE_BYTES - 2, OutboundFrame.HEADER_RESERVE_BYTES - 4, 0};
        for (int i = 0; i < lengths.length; i++) {
            String value = String.valueOf((char) ('a' + i)).repeat(lengths[i]);
            UpdateEncoder.Encoded u = next(topic, value);
            assertThat(u.frame.readerIndex()).as("header of a %d-byte value", lengths[i]).isEqualTo(headerStarts[i]);
            assertThat(text(u.frame, u.valueIndex, u.valueLength)).isEqualTo(value);
            List<Received> messages = ReceivedFrames.messagesOf(u.frame);
            assertThat(messages.get(messages.size() - 1).text()).isEqualTo(value);
        }
    }

    // ------------------------------------------------------------------ deltas

    @Test
    void withDeltasOnASmallerDeltaIsSentAndTheFullValueIsCopiedForTheTopicAndTheRing() throws DeltaFormatException {
        encoder("features: {deltas: true}");
        Topic topic = topic(1, "fx/eur", DELTAS, session(false), session(false));
        UpdateEncoder.Encoded first = nextKept(topic, QUOTE);
        assertThat(first.flags).as("a first value has nothing to be a delta of").isZero();
        assertThat(first.fullValueOfDelta).isNull();

        String v2 = QUOTE.replace("1.08415", "1.08416");
        UpdateEncoder.Encoded u = next(topic, v2);
        assertThat(u.flags).isEqualTo(UpdateFlags.DELTA);
        Received update = ReceivedFrames.messagesOf(u.frame).get(0);
        assertThat(update.flags()).isEqualTo(UpdateFlags.DELTA);
        byte[] delta = update.bytes();
        assertThat(delta.length).isLessThan(v2.length());
        ByteBuf rebuilt = Unpooled.buffer();
        try {
            Delta.apply(value(QUOTE), Unpooled.wrappedBuffer(delta), rebuilt);
            assertThat(rebuilt.toString(StandardCharsets.UTF_8)).isEqualTo(v2);
        } finally {
            rebuilt.release();
        }

        assertThat(u.fullValueOfDelta.toString(StandardCharsets.UTF_8)).isEqualTo(v2);
        assertThat(u.fullValueOfDelta.isDirect()).isTrue();
        assertThat(u.heldValue).as("even with conflation off: a session holding the topic needs the full value")
                .isSameAs(u.fullValueOfDelta);
        assertThat(u.fullValueOfDelta.refCnt()).as("one for the topic, one for the ring").isEqualTo(2);
        topic.record(u.frame.retain(), u.updateOffset, u.fullValueOfDelta);
        assertThat(text(topic.lastValueBuffer(), topic.lastValueIndex(), topic.lastValueLength())).isEqualTo(v2);

        assertThat(counters.deltasSent()).isEqualTo(1);
        assertThat(counters.deltaBytesSaved()).as("per subscriber").isEqualTo(2L * (v2.length() - delta.length));
    }

    @Test
    void aDeltaThatWouldNotBeSmallerIsNotSentTheValueIs() {
        encoder("features: {deltas: true}");
        Topic topic = topic(1, "t", DELTAS);
        nextKept(topic, "abcdefghijklmnopqrstuvwxyz");
        UpdateEncoder.Encoded u = next(topic, "0123456789-unrelated-bytes");

        assertThat(u.flags).isZero();
        assertThat(ReceivedFrames.messagesOf(u.frame).get(0).text()).isEqualTo("0123456789-unrelated-bytes");
        assertThat(u.fullValueOfDelta).isNull();
        assertThat(counters.deltasSent()).isZero();
    }

    @Test
    void withDeltasOffAnUpdateIsSentWholeHoweverSmallItsChange() {
        encoder("{}");
        Topic topic = topic(1, "t", PLAIN);
        nextKept(topic, QUOTE);
        UpdateEncoder.Encoded u = next(topic, QUOTE.replace("\"n\":1", "\"n\":2"));

        assertThat(u.flags).isZero();
        assertThat(u.fullValueOfDelta).isNull();
        assertThat(u.heldValue).as("conflation off and the frame holds the full value: nothing held").isNull();
        assertThat(counters.deltasSent()).isZero();
    }

    // ------------------------------------------------------------------ the held value

    @Test
    void withConflationOnTheHeldValueIsASliceOfTheFrameNotACopy() {
        encoder("features: {conflation: always}");
        Topic topic = topic(1, "t", new TopicFeatures(true, false, false, Conflation.ALWAYS));
        int before = alloc.allocations();
        UpdateEncoder.Encoded u = next(topic, "held");

        assertThat(u.heldValue.toString(StandardCharsets.UTF_8)).isEqualTo("held");
        assertThat(u.frame.refCnt()).as("the slice holds a reference to the frame").isEqualTo(2);
        assertThat(alloc.allocations() - before).as("the frame only").isEqualTo(1);
        u.heldValue.release();
        owned.remove(u.heldValue);
        assertThat(u.frame.refCnt()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ compression

    @Test
    void anUpdateIsCompressedOnlyForATopicThatCompressesWithACompressedSubscriber() {
        encoder("features: {compression: true, compressionMinBytes: 16}");
        String value = "abcdefgh".repeat(50);
        assertThat(next(topic(1, "plain", PLAIN, session(true)), value).compressedFrame)
                .as("the topic does not compress").isNull();
        assertThat(next(topic(2, "nobody", COMPRESSED, session(false)), value).compressedFrame)
                .as("no subscriber negotiated compression").isNull();
        assertThat(counters.compressionBytesIn()).as("neither was offered to the compressor").isZero();

        UpdateEncoder.Encoded u = next(topic(3, "both", COMPRESSED, session(false), session(true)), value);
        assertThat(u.compressedFrame).isNotNull();
        assertThat(ReceivedFrames.isCompressed(u.compressedFrame)).isTrue();
        assertThat(ReceivedFrames.isCompressed(u.frame)).isFalse();
        assertThat(ReceivedFrames.payload(u.compressedFrame)).as("inflates back to the plain frame")
                .isEqualTo(ReceivedFrames.payload(u.frame));
        assertThat(u.compressedFrame.readableBytes()).isLessThan(u.frame.readableBytes());
        assertThat(u.frame.refCnt()).isEqualTo(1);
        assertThat(u.compressedFrame.refCnt()).isEqualTo(1);
        assertThat(counters.compressedFrames()).isEqualTo(1);
    }

    @Test
    void anUpdateIsCompressedFromCompressionMinBytesOfFramePayloadOn() {
        encoder("features: {compression: true, compressionMinBytes: 200}");
        Topic topic = topic(1, "t", COMPRESSED, session(true));
        nextKept(topic, "create"); // the next frames are the UPDATE alone
        int valueAtThreshold = 200 - WireCodec.updateBytes(0);

        assertThat(next(topic, "a".repeat(valueAtThreshold - 1)).compressedFrame).as("one byte short").isNull();
        UpdateEncoder.Encoded u = next(topic, "a".repeat(valueAtThreshold));
        assertThat(OutboundFrame.payloadBytes(u.frame)).isEqualTo(200);
        assertThat(u.compressedFrame).isNotNull();
    }

    @Test
    void aReloadChangesTheCompressionThreshold() {
        encoder("features: {compression: true, compressionMinBytes: 4096}");
        Topic topic = topic(1, "t", COMPRESSED, session(true));
        String value = "abcdefgh".repeat(125);
        assertThat(next(topic, value).compressedFrame).isNull();

        encoder.reload(features("features: {compression: true, compressionMinBytes: 64}"));
        assertThat(next(topic, value).compressedFrame).isNotNull();
    }

    // ------------------------------------------------------------------ replies

    private ByteBuf replyFrame(int payloadRepeats) {
        ByteBuf frame = OutboundFrame.allocate(alloc, 64);
        for (int i = 0; i < payloadRepeats; i++) {
            WireCodec.writeSubscribed(frame, 7, 0);
        }
        return OutboundFrame.finish(frame);
    }

    @Test
    void aReplyIsCompressedForACompressedTargetWhenAnyTopicCompresses() {
        encoder("features: {compression: false, compressionMinBytes: 16, overrides: [{selector: \"slow/#\", compression: true}]}");
        ByteBuf plain = replyFrame(20);
        byte[] payload = ReceivedFrames.payload(plain);

        ByteBuf sent = encoder.compressedFor(session(true), plain);
        owned.add(sent);
        assertThat(sent).isNotSameAs(plain);
        assertThat(plain.refCnt()).as("the plain frame is given up").isZero();
        assertThat(ReceivedFrames.isCompressed(sent)).isTrue();
        assertThat(ReceivedFrames.payload(sent)).isEqualTo(payload);
        assertThat(counters.compressedFrames()).isEqualTo(1);
    }

    @Test
    void aReplyIsSentAsItIsToAPlainTargetWhenNothingCompressesOrWhenItIsSmall() {
        encoder("features: {compression: true, compressionMinBytes: 64}");
        ByteBuf frame = replyFrame(20);
        owned.add(frame);
        assertThat(encoder.compressedFor(session(false), frame)).as("the target did not negotiate it").isSameAs(frame);
        ByteBuf small = replyFrame(1);
        owned.add(small);
        assertThat(encoder.compressedFor(session(true), small)).as("below compressionMinBytes").isSameAs(small);
        assertThat(frame.refCnt()).isEqualTo(1);
        assertThat(small.refCnt()).isEqualTo(1);

        encoder.reload(features("features: {compression: false, compressionMinBytes: 64}"));
        assertThat(encoder.compressedFor(session(true), frame)).as("compression is off everywhere now").isSameAs(frame);
        assertThat(frame.refCnt()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ restore and copies

    @Test
    void aSavedUpdateFrameHoldsTheUpdateMessageAloneRightAfterTheHeaderReserve() {
        encoder("{}");
        byte[] payload = "a delta".getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = encoder.savedUpdateFrame(9, 41, UpdateFlags.DELTA, payload);
        owned.add(frame);

        assertThat(frame.getByte(OutboundFrame.HEADER_RESERVE_BYTES)).isEqualTo(MessageType.UPDATE);
        List<Received> messages = ReceivedFrames.messagesOf(frame);
        assertThat(messages).hasSize(1);
        Received update = messages.get(0);
        assertThat(update.alias()).isEqualTo(9);
        assertThat(update.sequence()).isEqualTo(41);
        assertThat(update.flags()).isEqualTo(UpdateFlags.DELTA);
        assertThat(update.bytes()).isEqualTo(payload);
        assertThat(frame.writerIndex())
                .isEqualTo(OutboundFrame.HEADER_RESERVE_BYTES + WireCodec.updateBytes(payload.length));
    }

    @Test
    void aCopyIsADirectBufferOfTheReadableBytesIndependentOfItsSource() {
        encoder("{}");
        ByteBuf source = Unpooled.buffer().writeBytes("xxvaluexx".getBytes(StandardCharsets.UTF_8));
        source.readerIndex(2).writerIndex(7);
        ByteBuf copy = encoder.copyOf(source);
        owned.add(copy);

        assertThat(copy.isDirect()).isTrue();
        assertThat(copy.toString(StandardCharsets.UTF_8)).isEqualTo("value");
        assertThat(source.readerIndex()).isEqualTo(2);
        source.setByte(2, 'V');
        assertThat(copy.toString(StandardCharsets.UTF_8)).isEqualTo("value");
        source.release();
    }
}
