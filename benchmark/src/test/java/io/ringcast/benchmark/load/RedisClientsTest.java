package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.redis.RedisDecoder;
import io.netty.handler.codec.redis.RedisEncoder;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Redis target's clients without sockets: what a subscriber and a publisher write into an
 * {@link EmbeddedChannel} through Netty's RESP codec, what they make of the bytes Redis sends, and
 * what reaches the subscriber's tally. The bytes are written out here as Redis writes them.
 */
class RedisClientsTest {
    static final int RUN = 7;
    static final int TOPICS = 4;
    static final int VALUE_BYTES = 64;
    static final URI ADDRESS = URI.create("redis://127.0.0.1:1");

    final LoadSpec spec = redis(List.of("redis://127.0.0.1:1"), false, "#", 0);
    final RedisChannels channels = new RedisChannels(spec);
    final MeasurementWindow window = new MeasurementWindow();
    final LatencyRecorders latencies = new LatencyRecorders();
    final SubscriberTally tally = new SubscriberTally(0, RUN, TOPICS, window, latencies);
    final AtomicLong disconnects = new AtomicLong();
    EmbeddedChannel channel;

    static LoadSpec redis(List<String> servers, boolean embedded, String selector, int viewShapes) {
        // JSON values for views, and room for their fields
        return new LoadSpec(servers, embedded, TOPICS, viewShapes > 0 ? 200 : VALUE_BYTES, 1000, 1, 3, selector, 1000, 0,
                1, "nio",
                Padding.ZEROS, List.of(), SubscriberClient.LEAN, viewShapes > 0 ? ValueFormat.JSON : ValueFormat.BINARY,
                LoadSpec.DEFAULT_JSON_FIELDS, viewShapes, Target.REDIS);
    }

    @AfterEach
    void releaseWhatIsLeft() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void aRedisRunTakesRedisUrlsEveryTopicAndNoViewsAndSaysSoInItsName() {
        assertThat(spec.scenario()).isEqualTo("1n-1p-3s-4t-64B-redis-1000ps");
        assertThat(spec.withRate(200).target()).isEqualTo(Target.REDIS);
        assertThatThrownBy(() -> redis(List.of("ws://a:1/ws"), false, "#", 0)).hasMessageContaining("redis://");
        assertThatThrownBy(() -> redis(List.of("redis://a:1"), true, "#", 0)).hasMessageContaining("--embedded");
        assertThatThrownBy(() -> redis(List.of("redis://a:1"), false, "bench/t0001", 0))
                .hasMessageContaining("--selector");
        assertThatThrownBy(() -> redis(List.of("redis://a:1"), false, "#", 2))
                .hasMessageContaining("--view-shapes: views are Ringcast's; --target redis has none");
    }

    @Test
    void everyTopicIsTheChannelOfItsDottedNameAndOnlyThoseAreFound() {
        assertThat(channels.nameOf(0)).isEqualTo("bench.t0000");
        assertThat(channels.nameOf(3)).isEqualTo("bench.t0003").isEqualTo(JetStreamStream.subjects(spec)[3]);
        assertThat(channels.topicIndex(ascii("bench.t0003"))).isEqualTo(3);
        assertThat(channels.topicIndex(ascii("bench.t0000"))).isZero();
        for (String other : List.of("bench.t0004", "bench.t003", "bench.t00003", "bench.t", "bench.x0001",
                "bench.t00a1", "", "bench.t99999999999")) {
            assertThat(channels.topicIndex(ascii(other))).as(other).isEqualTo(RedisChannels.NOT_A_RUN_CHANNEL);
        }
    }

    @Test
    void aSubscriberSendsPsubscribeAndIsConfirmedByItsReply() throws Exception {
        RedisSubscriber subscriber = subscriber();
        assertThat(written()).isEqualTo("*2\r\n$10\r\nPSUBSCRIBE\r\n$7\r\nbench.*\r\n");
        assertThat(subscriber.subscribed()).isNotDone();
        receive(psubscribed());
        assertThat(subscriber.subscribed()).isCompleted();
    }

    @Test
    void everyValueReachesTheTallyWholeOrInPieces() {
        subscribe();
        long now = System.nanoTime();
        window.open(now - TimeUnit.SECONDS.toNanos(1), now + TimeUnit.SECONDS.toNanos(1));
        receive(concat(pmessage(0, value(0, 1, now)), pmessage(0, value(0, 2, now)), pmessage(2, value(2, 1, now))));
        // one byte at a time: the decoder hands the value over in chunks, which the subscriber gathers
        byte[] split = concat(pmessage(0, value(0, 3, now)), pmessage(3, value(3, 1, now)));
        for (byte b : split) {
            receive(new byte[] {b});
        }
        receive(pmessage(2, value(2, 2, now)));
        SubscriberCounts c = counts(3, 0, 2, 1);
        assertThat(c.deliveries()).isEqualTo(6);
        assertThat(c.violations()).isZero();
        assertThat(c.failures()).isZero();
        assertThat(latencies.drain().getTotalCount()).isEqualTo(6);
    }

    @Test
    void aLostOrDuplicatedValueIsCountedAndAnotherRunsValueIsForeign() {
        subscribe();
        receive(concat(pmessage(1, value(1, 1, 0)), pmessage(1, value(1, 1, 0)), pmessage(1, value(1, 4, 0)),
                pmessage(1, PayloadCodec.encode(VALUE_BYTES, Padding.ZEROS, RUN + 1, 0, 1, 9, 0)),
                pmessage(1, new byte[3])));
        SubscriberCounts c = counts(0, 4);
        assertThat(c.duplicated()).isEqualTo(1);
        assertThat(c.lost()).isEqualTo(2);
        assertThat(c.foreignValues()).isEqualTo(2);
    }

    @Test
    void aValueOnAnotherTopicsChannelFailsTheSubscriber() {
        subscribe();
        receive(pmessage(1, value(2, 1, 0)));
        assertThat(tally.stopped()).isTrue();
        assertThat(channel.isOpen()).as("it closes its connection").isFalse();
        assertThat(counts(0, 0, 1).failure()).contains("names topic index 2").contains("bench.t0001");
    }

    @Test
    void aLostConnectionFailsTheSubscriberAndSaysWhy() {
        subscribe();
        receive(pmessage(0, value(0, 1, 0)));
        channel.close();
        assertThat(disconnects.get()).isEqualTo(1);
        SubscriberCounts c = counts(1);
        assertThat(c.failures()).isEqualTo(1);
        assertThat(c.failure()).contains("lost its connection to " + ADDRESS).contains(RedisSubscriber.NO_RESEND);
    }

    @Test
    void anErrorReplyRefusesTheSubscription() {
        RedisSubscriber subscriber = subscriber();
        written();
        receive("-ERR max number of clients reached\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(subscriber.subscribed()).isCompletedExceptionally();
        assertThatThrownBy(() -> subscriber.subscribed().join()).hasMessageContaining("max number of clients");
        assertThat(tally.stopped()).isTrue();
    }

    @Test
    void aPublisherPipelinesItsPublishesAndEachReplyAcksTheOldest() {
        RedisPublication publication = new RedisPublication(0, ADDRESS, channels, disconnects);
        channel = new EmbeddedChannel(new RedisDecoder(), new RedisEncoder(), publication);
        byte[] v1 = value(1, 1, 0);
        CompletableFuture<?> first = publication.publish(1, 1, v1);
        CompletableFuture<?> second = publication.publish(3, 1, value(3, 1, 0));
        CompletableFuture<?> third = publication.publish(1, 2, value(1, 2, 0));
        // all three written before any reply
        assertThat(written()).startsWith("*3\r\n$7\r\nPUBLISH\r\n$11\r\nbench.t0001\r\n$" + VALUE_BYTES + "\r\n"
                + new String(v1, StandardCharsets.ISO_8859_1) + "\r\n*3\r\n$7\r\nPUBLISH\r\n$11\r\nbench.t0003\r\n");
        receive(":3\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(first).isCompleted();
        assertThat(second).isNotDone();
        receive("-ERR something\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(second).isCompletedExceptionally();
        assertThat(third).isNotDone();

        channel.close(); // lost: the one unanswered fails, and every later one at once
        assertThat(third).isCompletedExceptionally();
        assertThatThrownBy(third::join).hasMessageContaining("redis publisher 0 lost its connection to " + ADDRESS);
        assertThat(publication.publish(1, 3, value(1, 3, 0))).isCompletedExceptionally();
        assertThat(publication.lostConnection()).contains("lost its connection");
        assertThat(disconnects.get()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ helpers

    private RedisSubscriber subscriber() {
        RedisSubscriber subscriber = new RedisSubscriber(0, ADDRESS, channels, RUN, spec, tally, disconnects);
        channel = new EmbeddedChannel(new RedisDecoder(), new RedisEncoder(), subscriber);
        return subscriber;
    }

    private void subscribe() {
        RedisSubscriber subscriber = subscriber();
        written();
        receive(psubscribed());
        assertThat(subscriber.subscribed()).isCompleted();
    }

    /** Everything the client wrote so far, as one string; the buffers are released. */
    private String written() {
        StringBuilder s = new StringBuilder();
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            s.append(b.toString(StandardCharsets.ISO_8859_1));
            b.release();
        }
        return s.toString();
    }

    private void receive(byte[] bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
    }

    private SubscriberCounts counts(long... finalCounters) {
        long[] last = new long[TOPICS];
        System.arraycopy(finalCounters, 0, last, 0, finalCounters.length);
        boolean[] matched = {true, true, true, true};
        return tally.counts(last, matched, new UnackedValues(), System.nanoTime());
    }

    private static byte[] value(int topic, long counter, long intendedSendNs) {
        return PayloadCodec.encode(VALUE_BYTES, Padding.ZEROS, RUN, 0, topic, counter, intendedSendNs);
    }

    private static byte[] psubscribed() {
        return "*3\r\n$10\r\npsubscribe\r\n$7\r\nbench.*\r\n:1\r\n".getBytes(StandardCharsets.US_ASCII);
    }

    /** A {@code pmessage} push of {@code value} on topic {@code topic}'s channel, as Redis writes it. */
    private static byte[] pmessage(int topic, byte[] value) {
        String channelName = String.format("bench.t%04d", topic);
        return concat(("*4\r\n$8\r\npmessage\r\n$7\r\nbench.*\r\n$" + channelName.length() + "\r\n" + channelName
                + "\r\n$" + value.length + "\r\n").getBytes(StandardCharsets.US_ASCII), value,
                "\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            all.writeBytes(p);
        }
        return all.toByteArray();
    }

    private static ByteBuf ascii(String s) {
        return Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.US_ASCII));
    }
}
