package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lean subscriber of a run with view shapes, without sockets: it subscribes with its shape's
 * options, takes what comes through its view (projections of JSON values) as a plain subscriber
 * takes values, and fails on what a view of the run's shapes never sends.
 */
@Timeout(30)
class LeanSubscriberViewsTest {
    static final int RUN = 7;
    static final int TOPICS = 4;
    static final int SHAPES = 3;
    /** Subscriber 5 takes shape 5 mod 3 = 2. */
    static final int SUBSCRIBER = 5;
    static final int SHAPE = SUBSCRIBER % SHAPES;
    static final int VIEW = 9;
    static final int ALIAS = 100;

    final LoadSpec spec = new LoadSpec(List.of("ws://127.0.0.1:1/ws"), false, TOPICS, 200, 1000, 1, 6, "#", 1000, 0,
            1, "nio", Padding.ZEROS, List.of(), SubscriberClient.LEAN, ValueFormat.JSON, 10, SHAPES);
    final MeasurementWindow window = new MeasurementWindow();
    final LatencyRecorders latencies = new LatencyRecorders();
    final SubscriberTally tally = new SubscriberTally(SUBSCRIBER, RUN, TOPICS, window, latencies, ValueFormat.JSON);
    final AtomicLong disconnects = new AtomicLong();
    final LeanSubscriber subscriber = new LeanSubscriber(SUBSCRIBER, URI.create("ws://127.0.0.1:1/ws"), spec, RUN,
            tally, disconnects);
    final EmbeddedChannel channel = new EmbeddedChannel(subscriber);

    @AfterEach
    void releaseWhatIsLeft() {
        channel.finishAndReleaseAll();
    }

    @Test
    void itSubscribesWithItsShapeAndChecksTheProjectionsItsViewSends() {
        SubscribeOptions sent = subscribe(true);
        assertThat(sent).isEqualTo(JsonPayload.viewShape(SHAPE));
        long now = System.nanoTime();
        window.open(now - TimeUnit.SECONDS.toNanos(1), now + TimeUnit.SECONDS.toNanos(1));
        receive(frame -> {
            update(frame, 0, 2, 2, 0, now);
            update(frame, 1, 1, 7, 0, now);
            update(frame, 0, 3, 3, 0, now);
            update(frame, 0, 6, 6, UpdateFlags.CONFLATED, now); // a maxRate's held value: 4 and 5 skipped, said so
        });
        SubscriberCounts c = counts(6, 1);
        assertThat(c.violations()).isZero();
        assertThat(c.failures()).isZero();
        assertThat(c.snapshots()).as("the reply's snapshot through the view").isEqualTo(1);
        assertThat(c.conflated()).isEqualTo(2);
        assertThat(c.deliveries()).isEqualTo(4);
        assertThat(latencies.drain().getTotalCount()).isEqualTo(4);
    }

    @Test
    void aViewedUpdateThatSkipsACounterIsLost() {
        subscribe(true);
        receive(frame -> update(frame, 0, 4, 4, 0, 0)); // the snapshot had 1: 2 and 3 never came
        assertThat(counts(4).lost()).isEqualTo(2);
    }

    @Test
    void aReplyWithoutViewFailsTheSubscriptionsStart() {
        subscribe(false);
        assertThat(subscriber.subscribed()).isCompletedExceptionally();
        assertThat(subscriber.subscribed().handle((v, x) -> x).join()).isInstanceOf(LoadException.class)
                .hasMessageContaining("without a VIEW");
        assertThat(tally.stopped()).isTrue();
    }

    @Test
    void anUpdateThroughAnotherViewFailsTheSubscriber() {
        subscribe(true);
        ByteBuf p = projection(0, 2, 0);
        receive(frame -> WireCodec.writeUpdate(frame, ALIAS, 2, 0, VIEW + 1, p, 0, p.readableBytes()));
        assertThat(tally.stopped()).isTrue();
        assertThat(counts(2).failure()).contains("UPDATE through view " + (VIEW + 1)).contains("has view " + VIEW);
    }

    @Test
    void anUpdateWithoutAViewFailsASubscriberWithOne() {
        subscribe(true);
        byte[] full = JsonPayload.encode(200, Padding.ZEROS, 10, RUN, 0, 0, 2, 0);
        receive(frame -> WireCodec.writeUpdate(frame, ALIAS, 2, 0, Unpooled.wrappedBuffer(full), 0, full.length));
        assertThat(counts(2).failure()).contains("UPDATE without a view").contains("has view " + VIEW);
    }

    @Test
    void anUnmatchedFailsTheSubscriberForEveryValuePassesTheShapesFilters() {
        subscribe(true);
        receive(frame -> WireCodec.writeUnmatched(frame, VIEW, ALIAS + 1, 5));
        assertThat(tally.stopped()).isTrue();
        assertThat(channel.isOpen()).isFalse();
        assertThat(counts(0, 5).failure()).contains("UNMATCHED for " + spec.topicPath(1) + " #5");
    }

    /**
     * A frame of 1,000 projections decoded over and over: reading JSON in place allocates (next to)
     * nothing. Each topic's first is new and the rest are duplicates, so the tally's own work is
     * constant (LeanSubscriberTest measures it with new values) and what is measured is the reading.
     */
    @Test
    void decodingViewedJsonUpdatesAllocatesNothingPerUpdate() {
        subscribe(true);
        long now = System.nanoTime();
        window.open(now - TimeUnit.HOURS.toNanos(1), now + TimeUnit.HOURS.toNanos(1));
        int perFrame = 1000;
        ByteBuf written = Unpooled.buffer(perFrame * 64);
        for (int i = 0; i < perFrame; i++) {
            int t = i % TOPICS;
            long counter = t == 0 ? 2 : 1; // topic 0 had 1 in the reply
            update(written, t, counter, counter, 0, now - 1_000_000);
        }
        // an unpooled heap buffer wrapping an array: no leak tracking, whose records would allocate
        ByteBuf frame = Unpooled.wrappedBuffer(ByteBufUtil.getBytes(written));
        written.release();
        Runnable round = () -> {
            frame.readerIndex(0);
            try {
                WireCodec.decode(frame, subscriber);
            } catch (ProtocolException e) {
                throw new AssertionError(e);
            }
        };
        for (int i = 0; i < 100; i++) {
            round.run();
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        int rounds = 200;
        for (int i = 0; i < rounds; i++) {
            round.run();
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        SubscriberCounts c = counts(2, 1, 1, 1);
        assertThat(c.lost()).isZero();
        assertThat(c.outOfOrder()).isZero();
        assertThat(c.foreignValues()).isZero();
        assertThat(c.deliveries()).isEqualTo(TOPICS);
        assertThat(c.duplicated()).isEqualTo(300L * perFrame - TOPICS);
        assertThat(allocated).as("bytes allocated for %,d updates", rounds * perFrame).isLessThan(rounds * perFrame / 4);
    }

    // ------------------------------------------------------------------ the server's side

    /**
     * Opens the session as the server would: HELLO answered by WELCOME; SUBSCRIBE, whose options it
     * returns, by VIEW when {@code withView}, a TOPIC per topic, topic 0's value through the view
     * (counter 1), and SUBSCRIBED.
     */
    SubscribeOptions subscribe(boolean withView) {
        channel.pipeline().fireUserEventTriggered(ClientHandshakeStateEvent.HANDSHAKE_COMPLETE);
        expectSent(MessageType.HELLO);
        receive(frame -> WireCodec.writeWelcome(frame, WireCodec.VERSION, "s-1", 1 << 20, 120_000));
        subscriber.subscribe();
        channel.runPendingTasks();
        SubscribeOptions[] options = new SubscribeOptions[1];
        BinaryWebSocketFrame sent = channel.readOutbound();
        try {
            WireCodec.decode(sent.content(), new MessageHandler() {
                @Override
                public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume,
                                        SubscribeOptions o) {
                    assertThat(subscriptionId).isEqualTo(LeanSubscriber.SUBSCRIPTION_ID);
                    assertThat(selector).isEqualTo("#");
                    options[0] = o;
                }
            });
        } catch (ProtocolException e) {
            throw new AssertionError(e);
        } finally {
            sent.release();
        }
        receive(frame -> {
            if (withView) {
                WireCodec.writeView(frame, LeanSubscriber.SUBSCRIPTION_ID, VIEW);
            }
            for (int t = 0; t < TOPICS; t++) {
                WireCodec.writeTopic(frame, ALIAS + t, spec.topicPath(t));
            }
            if (withView) {
                ByteBuf p = projection(0, 1, 0);
                WireCodec.writeSnapshot(frame, LeanSubscriber.SUBSCRIPTION_ID, ALIAS, 1, 0, VIEW, p, 0,
                        p.readableBytes());
            }
            WireCodec.writeSubscribed(frame, LeanSubscriber.SUBSCRIPTION_ID, TOPICS);
        });
        assertThat(subscriber.subscribed().isDone()).isTrue();
        return options[0];
    }

    void expectSent(byte type) {
        BinaryWebSocketFrame sent = channel.readOutbound();
        try {
            assertThat(WireCodec.peekType(sent.content())).isEqualTo(type);
        } finally {
            sent.release();
        }
    }

    void receive(Consumer<ByteBuf> writer) {
        ByteBuf content = channel.alloc().buffer();
        writer.accept(content);
        BinaryWebSocketFrame frame = new BinaryWebSocketFrame(content);
        channel.writeInbound(frame);
        assertThat(frame.refCnt()).as("released by the subscriber").isZero();
    }

    /**
     * What the server's projection of this subscriber's shape makes of the run's value: the named
     * fields in the value's order, without spaces.
     */
    static ByteBuf projection(int topic, long counter, long intendedNs) {
        String own = JsonPayload.field(SHAPE);
        String json = "{\"r\":" + RUN + ",\"t\":" + topic + ",\"c\":" + counter + ",\"s\":" + intendedNs + ",\"" + own
                + "\":" + JsonPayload.fieldValue(SHAPE, topic, counter) + "}";
        return Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.US_ASCII));
    }

    static void update(ByteBuf frame, int topic, long counter, long sequence, int flags, long intendedNs) {
        ByteBuf p = projection(topic, counter, intendedNs);
        WireCodec.writeUpdate(frame, ALIAS + topic, sequence, flags, VIEW, p, 0, p.readableBytes());
    }

    SubscriberCounts counts(long... finalCounters) {
        boolean[] matched = new boolean[TOPICS];
        java.util.Arrays.fill(matched, true);
        long[] finals = new long[TOPICS];
        System.arraycopy(finalCounters, 0, finals, 0, finalCounters.length);
        return tally.counts(finals, matched, new UnackedValues(), System.nanoTime());
    }
}
