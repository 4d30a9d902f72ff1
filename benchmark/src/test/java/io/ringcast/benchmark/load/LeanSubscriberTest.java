package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lean subscriber without sockets: frames written into an {@link EmbeddedChannel} as the server
 * writes them, each released by the subscriber, and what reaches its tally.
 */
class LeanSubscriberTest {
    static final int RUN = 7;
    static final int TOPICS = 4;
    static final int VALUE_BYTES = 64;
    /** Topic t has alias ALIAS + t on this connection; ALIAS - 1 names a topic of no run. */
    static final int ALIAS = 100;

    final LoadSpec spec = new LoadSpec(List.of("ws://127.0.0.1:1/ws"), false, TOPICS, VALUE_BYTES, 1000, 1, 1, "#",
            1000, 0, 1, "nio", Padding.ZEROS, List.of(), SubscriberClient.LEAN);
    final MeasurementWindow window = new MeasurementWindow();
    final LatencyRecorders latencies = new LatencyRecorders();
    final SubscriberTally tally = new SubscriberTally(0, RUN, TOPICS, window, latencies);
    final AtomicLong disconnects = new AtomicLong();
    final LeanSubscriber subscriber = new LeanSubscriber(0, URI.create("ws://127.0.0.1:1/ws"), spec, RUN, tally,
            disconnects);
    final EmbeddedChannel channel = new EmbeddedChannel(subscriber);

    @AfterEach
    void releaseWhatIsLeft() {
        channel.finishAndReleaseAll();
    }

    @Test
    void itSaysHelloSubscribesOnWelcomeAndIsConfirmedBySubscribed() throws Exception {
        subscribe();
        assertThat(tally.stopped()).isFalse();
    }

    @Test
    void aFrameOfSeveralUpdatesIsCheckedMessageByMessage() {
        subscribe();
        long now = System.nanoTime();
        window.open(now - TimeUnit.SECONDS.toNanos(1), now + TimeUnit.SECONDS.toNanos(1));
        receive(frame -> {
            update(frame, 0, 1, 1, 0, now);
            update(frame, 0, 2, 2, 0, now);
            update(frame, 1, 1, 3, 0, now);
            WireCodec.writeTopic(frame, ALIAS + 3, spec.topicPath(3)); // the same TOPIC again: harmless
            update(frame, 0, 3, 4, 0, now);
            update(frame, 3, 1, 5, 0, now);
        });
        SubscriberCounts c = counts(3, 1, 0, 1);
        assertThat(c.deliveries()).isEqualTo(5);
        assertThat(c.violations()).isZero();
        assertThat(c.failures()).isZero();
        assertThat(c.measuredDeliveries()).isEqualTo(5);
        assertThat(latencies.drain().getTotalCount()).isEqualTo(5);
    }

    @Test
    void snapshotsConflatedUpdatesAndForeignValuesAreCountedAsTheJavaListenerCountsThem() {
        subscribe();
        receive(frame -> {
            snapshot(frame, 0, 1, 1, 0);
            update(frame, 0, 5, 9, UpdateFlags.CONFLATED, 0); // 2..4 skipped by conflation, said so
            // an earlier run's value, and a value of a topic of no run
            WireCodec.writeUpdate(frame, ALIAS + 1, 1, 0, Unpooled.wrappedBuffer(PayloadCodec.encode(VALUE_BYTES,
                    Padding.ZEROS, RUN + 1, 0, 1, 1, 0)), 0, VALUE_BYTES);
            WireCodec.writeUpdate(frame, ALIAS - 1, 1, 0, Unpooled.wrappedBuffer(new byte[3]), 0, 3);
        });
        SubscriberCounts c = counts(5);
        assertThat(c.snapshots()).isEqualTo(1);
        assertThat(c.conflated()).isEqualTo(3);
        assertThat(c.foreignValues()).isEqualTo(2);
        assertThat(c.lost()).isZero();
        assertThat(c.deliveries()).isEqualTo(1);
    }

    @Test
    void aDuplicateOnTheWireIsSeenWhichTheJavaClientWouldDropUnseen() {
        subscribe();
        receive(frame -> {
            update(frame, 2, 1, 1, 0, 0);
            update(frame, 2, 1, 1, 0, 0);
        });
        assertThat(counts(0, 0, 1).duplicated()).isEqualTo(1);
    }

    @Test
    void aDeltaFailsTheSubscriberWithAMessageNamingTheJavaClient() {
        subscribe();
        receive(frame -> {
            update(frame, 0, 1, 1, 0, 0);
            update(frame, 0, 2, 2, UpdateFlags.DELTA, 0);
            update(frame, 0, 3, 3, 0, 0); // after the failure: not looked at
        });
        assertThat(tally.stopped()).isTrue();
        assertThat(channel.isOpen()).as("it closes its connection").isFalse();
        SubscriberCounts c = counts(3);
        assertThat(c.failures()).isEqualTo(1);
        assertThat(c.failure()).contains("delta").contains("--subscriber-client java");
        assertThat(c.deliveries()).isEqualTo(1);
        assertThat(c.unchecked()).isEqualTo(2);
        assertThat(c.lost()).isZero();
        assertThat(disconnects.get()).as("closed on purpose, not lost").isZero();
    }

    @Test
    void aLostConnectionCountsADisconnectAndFailsTheSubscriber() {
        subscribe();
        receive(frame -> update(frame, 0, 1, 1, 0, 0));
        channel.close();
        assertThat(disconnects.get()).isEqualTo(1);
        assertThat(tally.stopped()).isTrue();
        assertThat(counts(1).failure()).contains("lost its connection").contains("do not reconnect or resume")
                .contains("--subscriber-client java");
    }

    @Test
    void aFatalErrorIsTheReasonGivenForTheCloseThatFollows() {
        subscribe();
        receive(frame -> WireCodec.writeError(frame, ErrorCode.SLOW_CONSUMER, 0, "too slow"));
        channel.close();
        assertThat(counts(0).failure()).contains("SLOW_CONSUMER: too slow");
        assertThat(disconnects.get()).isEqualTo(1);
    }

    @Test
    void closedByTheRunIsNoFailure() {
        subscribe();
        subscriber.closeAsync();
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        assertThat(tally.stopped()).isFalse();
        assertThat(disconnects.get()).isZero();
        subscriber.close(); // twice: nothing more
        channel.runPendingTasks();
        assertThat(tally.stopped()).isFalse();
    }

    @Test
    void aRefusedSubscriptionFailsItsStart() {
        channel.pipeline().fireUserEventTriggered(ClientHandshakeStateEvent.HANDSHAKE_COMPLETE);
        expectSent(MessageType.HELLO);
        receive(frame -> WireCodec.writeWelcome(frame, WireCodec.VERSION, "s-1", 1 << 20, 120_000));
        subscriber.subscribe();
        channel.runPendingTasks();
        expectSent(MessageType.SUBSCRIBE);
        receive(frame -> WireCodec.writeError(frame, ErrorCode.PERMISSION_DENIED, LeanSubscriber.SUBSCRIPTION_ID,
                "not yours"));
        assertThat(subscriber.subscribed()).isCompletedExceptionally();
        assertThat(subscriber.subscribed().handle((v, x) -> x).join()).isInstanceOf(LoadException.class)
                .hasMessageContaining("PERMISSION_DENIED: not yours");
    }

    @Test
    void anUpdateUnderAnUnknownAliasIsAProtocolError() {
        subscribe();
        receive(frame -> WireCodec.writeUpdate(frame, 12345, 1, 0, Unpooled.wrappedBuffer(new byte[VALUE_BYTES]), 0,
                VALUE_BYTES));
        assertThat(tally.stopped()).isTrue();
        assertThat(counts(0).failure()).contains("alias 12345");
    }

    @Test
    void aValueUnderTheAliasOfAnotherTopicFailsTheSubscriber() {
        subscribe();
        receive(frame -> WireCodec.writeUpdate(frame, ALIAS + 1, 1, 0, Unpooled.wrappedBuffer(
                PayloadCodec.encode(VALUE_BYTES, Padding.ZEROS, RUN, 0, 2, 1, 0)), 0, VALUE_BYTES));
        assertThat(counts(0, 0, 1).failure()).contains("topic index 2").contains(spec.topicPath(1));
    }

    /**
     * Decodes a frame of 1,000 updates over and over, straight into the subscriber as its channel
     * would: the thread allocates (next to) nothing, whereas a byte per update would show as 200 kB.
     */
    @Test
    void decodingUpdatesAllocatesNothingPerUpdate() throws Exception {
        subscribe();
        long now = System.nanoTime();
        window.open(now - TimeUnit.HOURS.toNanos(1), now + TimeUnit.HOURS.toNanos(1));
        int perFrame = 1000;
        int messageBytes = WireCodec.updateBytes(VALUE_BYTES);
        // an unpooled heap buffer wrapping an array: no leak tracking, whose records would allocate
        ByteBuf frame = Unpooled.wrappedBuffer(new byte[perFrame * messageBytes]).clear();
        for (int i = 0; i < perFrame; i++) {
            update(frame, i % TOPICS, 0, 0, 0, now - 1_000_000);
        }
        long[] counter = new long[1];
        Runnable round = () -> {
            // a new counter and sequence in place in every message: each round is new values, in order
            for (int i = 0; i < perFrame; i++) {
                int message = i * messageBytes;
                long c = counter[0] + 1 + i / TOPICS;
                frame.setLong(message + WireCodec.HEADER_BYTES + 4, c);
                frame.setLong(message + WireCodec.UPDATE_OVERHEAD_BYTES + 12, c);
            }
            counter[0] += perFrame / TOPICS;
            frame.readerIndex(0);
            try {
                WireCodec.decode(frame, subscriber);
            } catch (ProtocolException e) {
                throw new AssertionError(e);
            }
        };
        for (int i = 0; i < 100; i++) {
            round.run(); // warm up: the JIT, the recorder of this thread
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        int rounds = 200;
        for (int i = 0; i < rounds; i++) {
            round.run();
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        SubscriberCounts c = counts(counter[0], counter[0], counter[0], counter[0]);
        assertThat(c.violations()).isZero();
        assertThat(c.deliveries()).isEqualTo(300L * perFrame);
        assertThat(allocated).as("bytes allocated for %,d updates", rounds * perFrame).isLessThan(rounds * perFrame / 4);
    }

    // ------------------------------------------------------------------ the server's side

    /** Opens the session as the server would: HELLO answered by WELCOME, SUBSCRIBE by TOPICs and SUBSCRIBED. */
    void subscribe() {
        channel.pipeline().fireUserEventTriggered(ClientHandshakeStateEvent.HANDSHAKE_COMPLETE);
        expectSent(MessageType.HELLO);
        receive(frame -> WireCodec.writeWelcome(frame, WireCodec.VERSION, "s-1", 1 << 20, 120_000));
        // the run subscribes once every session started: nothing is sent before it asks
        Object early = channel.readOutbound();
        assertThat(early).as("sent before subscribe()").isNull();
        subscriber.subscribe();
        channel.runPendingTasks();
        String[] selector = new String[1];
        BinaryWebSocketFrame sent = channel.readOutbound();
        try {
            WireCodec.decode(sent.content(), new MessageHandler() {
                @Override
                public void onSubscribe(int subscriptionId, String s, Map<String, Long> resume) {
                    assertThat(subscriptionId).isEqualTo(LeanSubscriber.SUBSCRIPTION_ID);
                    assertThat(resume).isEmpty();
                    selector[0] = s;
                }
            });
        } catch (ProtocolException e) {
            throw new AssertionError(e);
        } finally {
            sent.release();
        }
        assertThat(selector[0]).isEqualTo("#");
        receive(frame -> {
            for (int t = 0; t < TOPICS; t++) {
                WireCodec.writeTopic(frame, ALIAS + t, spec.topicPath(t));
            }
            WireCodec.writeTopic(frame, ALIAS - 1, "demo/other");
            WireCodec.writeSubscribed(frame, LeanSubscriber.SUBSCRIPTION_ID, TOPICS + 1);
        });
        assertThat(subscriber.subscribed()).isCompleted();
    }

    void expectSent(byte type) {
        BinaryWebSocketFrame sent = channel.readOutbound();
        try {
            assertThat(WireCodec.peekType(sent.content())).isEqualTo(type);
        } finally {
            sent.release();
        }
    }

    /** One frame from the server, as {@code writer} fills it; the subscriber must release it. */
    void receive(Consumer<ByteBuf> writer) {
        ByteBuf content = channel.alloc().buffer();
        writer.accept(content);
        BinaryWebSocketFrame frame = new BinaryWebSocketFrame(content);
        channel.writeInbound(frame);
        assertThat(frame.refCnt()).as("released by the subscriber").isZero();
    }

    static void update(ByteBuf frame, int topic, long counter, long sequence, int flags, long intendedNs) {
        byte[] value = PayloadCodec.encode(VALUE_BYTES, Padding.ZEROS, RUN, 0, topic, counter, intendedNs);
        WireCodec.writeUpdate(frame, ALIAS + topic, sequence, flags, Unpooled.wrappedBuffer(value), 0, value.length);
    }

    static void snapshot(ByteBuf frame, int topic, long counter, long sequence, int flags) {
        byte[] value = PayloadCodec.encode(VALUE_BYTES, Padding.ZEROS, RUN, 0, topic, counter, 0);
        WireCodec.writeSnapshot(frame, LeanSubscriber.SUBSCRIPTION_ID, ALIAS + topic, sequence, flags,
                Unpooled.wrappedBuffer(value), 0, value.length);
    }

    SubscriberCounts counts(long... finalCounters) {
        boolean[] matched = new boolean[TOPICS];
        java.util.Arrays.fill(matched, true);
        long[] finals = new long[TOPICS];
        System.arraycopy(finalCounters, 0, finals, 0, finalCounters.length);
        return tally.counts(finals, matched, new UnackedValues(), System.nanoTime());
    }
}
