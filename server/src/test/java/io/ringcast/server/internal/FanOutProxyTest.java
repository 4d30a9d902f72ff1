package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.internal.ReceivedFrames.Received;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The sequencer's end of a small fan-out ring (4 slots) read by two pollers on real event loops,
 * one of which the test can hold up: the sequencer, on a thread of its own, waits for a slot
 * while the slowest poller is a ring behind and goes on once it drained; {@code halt} ends the
 * wait; {@code releaseAll} empties every slot.
 */
@Timeout(10)
class FanOutProxyTest {
    private static final int SLOTS = 4;

    private final ServerCounters counters = new ServerCounters();
    private final RingBuffer<FanOutEvent> ring = RingBuffer.createSingleProducer(FanOutEvent::new, SLOTS);
    private final DefaultEventLoop[] loops = {new DefaultEventLoop(), new DefaultEventLoop()};
    private final FanOutProxy proxy = new FanOutProxy(ring, new FanOutPoller[] {poller(ring, 0, loops[0]), poller(ring, 1, loops[1])});
    private final ExecutorService sequencer = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-sequencer"));
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final CountDownLatch gate = new CountDownLatch(1);

    private FanOutPoller poller(RingBuffer<FanOutEvent> ring, int index, EventLoop loop) {
        return new FanOutPoller(index, loop, ring, new OutboundLimit(Long.MAX_VALUE, 0, counters),
                FlushPolicy.END_OF_BATCH, 0, counters);
    }

    @AfterEach
    void stop() throws Exception {
        gate.countDown();
        sequencer.shutdownNow();
        assertThat(sequencer.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        for (DefaultEventLoop loop : loops) {
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
        proxy.releaseAll();
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    private Session session(int loop) {
        return EmbeddedNode.session(channels, loop, false);
    }

    /** A directed frame: one SUBSCRIBED whose subscription id tells the frames apart. */
    private static ByteBuf frame(int id) {
        ByteBuf frame = OutboundFrame.allocate(ByteBufAllocator.DEFAULT, WireCodec.SUBSCRIBED_BYTES);
        WireCodec.writeSubscribed(frame, id, 0);
        return OutboundFrame.finish(frame);
    }

    /**
     * Holds loop {@code index} up until {@link #gate} opens: its poller cannot run. Returns once the
     * hold runs, so that the loop's pending tasks are from then on only what the sequencer queues.
     */
    private void holdUp(int index) throws InterruptedException {
        CountDownLatch holding = new CountDownLatch(1);
        loops[index].execute(() -> {
            holding.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(holding.await(5, TimeUnit.SECONDS)).as("loop %d held up", index).isTrue();
    }

    /** Waits until the held-up loop has a poller run queued: the sequencer woke it, waiting for a slot. */
    private void awaitWokenWhileHeldUp(int index) {
        SingleThreadEventExecutor loop = loops[index];
        Await.until(() -> loop.pendingTasks() > 0, Duration.ofSeconds(5), Duration.ofMillis(1),
                () -> "the sequencer to wake poller " + index + " while it waits for a slot");
    }

    /** Waits until every task queued on the loops so far has run. */
    private void awaitLoopsIdle() throws Exception {
        for (DefaultEventLoop loop : loops) {
            loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
        }
    }

    /** The ids of what {@code channel} received, once there are {@code count} of them. */
    private static List<Integer> awaitIds(EmbeddedChannel channel, int count, String what) {
        List<Integer> ids = new ArrayList<>();
        Await.until(() -> {
            ids.addAll(ids(channel));
            return ids.size() >= count;
        }, Duration.ofSeconds(5), Duration.ofMillis(1), () -> what + ": " + ids);
        return ids;
    }

    private static List<Integer> ids(EmbeddedChannel channel) {
        return ReceivedFrames.drain(channel).stream().map(Received::id).toList();
    }

    @Test
    void aFullRingWaitsForTheSlowestPollerAndGoesOnOnceItHasDrained() throws Exception {
        Session[] targets = {session(0), session(1)};
        ByteBuf[] frames = new ByteBuf[SLOTS + 2];
        for (int i = 0; i < frames.length; i++) {
            frames[i] = frame(i);
        }
        holdUp(1);
        Future<?> sequencing = sequencer.submit(() -> {
            for (int i = 0; i < frames.length; i++) {
                proxy.directed(targets[i % 2], frames[i]);
            }
            proxy.wakePollers(); // the end of the batch
        });

        awaitWokenWhileHeldUp(1);
        assertThat(sequencing).as("a ring behind poller 1, whatever poller 0 read").isNotDone();
        assertThat(ring.getCursor()).isEqualTo(SLOTS - 1);
        assertThat(frames[0].refCnt()).as("slot 0 is not reused before poller 1 passed it").isPositive();

        gate.countDown();
        sequencing.get(5, TimeUnit.SECONDS);
        awaitLoopsIdle();
        assertThat(ids((EmbeddedChannel) targets[0].channel)).as("nothing dropped, in order").containsExactly(0, 2, 4);
        assertThat(ids((EmbeddedChannel) targets[1].channel)).containsExactly(1, 3, 5);
        assertThat(frames[0].refCnt()).as("released when its slot was reused").isZero();
        assertThat(frames[1].refCnt()).isZero();
        assertThat(frames[2].refCnt()).as("a directed frame goes to its poller: no slot keeps it once written")
                .isZero();
    }

    @Test
    void haltWhileWaitingReleasesTheUpdateItWasGivenAndThrows() throws Exception {
        holdUp(0);
        Topic topic = new Topic(1, "t", new String[] {"t"}, SubscriberSet.empty(2), 8,
                new TopicFeatures(true, false, true, Conflation.ALWAYS));
        UpdateEncoder.Encoded update = new UpdateEncoder.Encoded();
        update.frame = frame(100);
        update.compressedFrame = frame(101);
        update.heldValue = ByteBufAllocator.DEFAULT.directBuffer(8).writeLong(7);
        Session target = session(0);
        Future<?> sequencing = sequencer.submit(() -> {
            for (int i = 0; i < SLOTS; i++) {
                proxy.directed(target, frame(i));
            }
            proxy.update(update, topic, new InboundEvent(), 1);
        });

        awaitWokenWhileHeldUp(0);
        proxy.halt();
        assertThatThrownBy(() -> sequencing.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("stopping");
        assertThat(update.frame.refCnt()).isZero();
        assertThat(update.compressedFrame.refCnt()).isZero();
        assertThat(update.heldValue.refCnt()).isZero();
        assertThat(ring.getCursor()).as("nothing more was put on the ring").isEqualTo(SLOTS - 1);
    }

    @Test
    void releaseAllRecyclesEverySlotWhateverItHeld() throws Exception {
        Session target = session(0);
        Topic topic = new Topic(1, "t", new String[] {"t"}, SubscriberSet.empty(2), 8,
                new TopicFeatures(true, false, true, Conflation.ALWAYS));
        List<ByteBuf> given = new ArrayList<>();
        sequencer.submit(() -> {
            for (int i = 0; i < SLOTS + 1; i++) {
                ByteBuf directed = frame(i);
                given.add(directed);
                proxy.directed(target, directed);
                UpdateEncoder.Encoded update = new UpdateEncoder.Encoded();
                update.frame = frame(10 + i);
                update.compressedFrame = frame(20 + i);
                update.heldValue = ByteBufAllocator.DEFAULT.directBuffer(8).writeLong(i);
                given.addAll(List.of(update.frame, update.compressedFrame, update.heldValue));
                proxy.update(update, topic, new InboundEvent(), i + 1);
            }
            proxy.wakePollers();
        }).get(5, TimeUnit.SECONDS);
        awaitLoopsIdle();
        ReceivedFrames.drain((EmbeddedChannel) target.channel);
        assertThat(given).filteredOn(b -> b.refCnt() > 0).as("held by the ring's slots").isNotEmpty();

        proxy.releaseAll();
        assertThat(given).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        for (int i = 0; i < SLOTS; i++) {
            FanOutEvent ev = ring.get(i);
            assertThat(ev.frame).isNull();
            assertThat(ev.compressedFrame).isNull();
            assertThat(ev.value).isNull();
        }
    }

    @Test
    void withinALongBatchThePollersAreWokenEvery256Events() {
        RingBuffer<FanOutEvent> large = RingBuffer.createSingleProducer(FanOutEvent::new, 1024);
        EmbeddedChannel loop = new EmbeddedChannel();
        channels.add(loop);
        FanOutProxy longBatch = new FanOutProxy(large, new FanOutPoller[] {poller(large, 0, loop.eventLoop())});
        Session target = session(0);
        EmbeddedChannel received = (EmbeddedChannel) target.channel;
        try {
            for (int i = 0; i < 255; i++) {
                longBatch.directed(target, frame(i));
            }
            loop.runPendingTasks();
            assertThat(ReceivedFrames.drain(received)).as("no wake per event").isEmpty();

            longBatch.directed(target, frame(255));
            loop.runPendingTasks();
            assertThat(ReceivedFrames.drain(received)).as("fan-out started before the batch ended").hasSize(256);

            longBatch.directed(target, frame(256));
            longBatch.wakePollers();
            loop.runPendingTasks();
            assertThat(ReceivedFrames.drain(received)).hasSize(1);
        } finally {
            longBatch.releaseAll();
        }
    }

    /**
     * Once each poller with something in a slot has passed it, the slot forgets the sessions it was
     * for, so that closed sessions do not stay on the heap until the slot is reused (a ring later: 65,536
     * events); a poller that slept through those slots still skips them, and goes on.
     */
    @Test
    void slotsPassedByThePollersWithSomethingInThemForgetTheirSessionsAndASleepingLoopSkipsThem() throws Exception {
        holdUp(1);
        Session subscriber = session(0);
        Session publisher = session(0);
        Session onSleepingLoop = session(1);
        Topic topic = new Topic(1, "t", new String[] {"t"}, SubscriberSet.of(List.of(subscriber), 2), 8,
                new TopicFeatures(true, false, false, Conflation.OFF));
        UpdateEncoder.Encoded update = new UpdateEncoder.Encoded();
        update.frame = frame(1);
        InboundEvent publish = new InboundEvent();
        publish.session = publisher;
        publish.id = 7;
        sequencer.submit(() -> {
            proxy.update(update, topic, publish, 1);
            proxy.directed(subscriber, frame(2));
            proxy.ack(publisher, 8, 2);
            proxy.endOfBatch();
        }).get(5, TimeUnit.SECONDS);
        assertThat(awaitIds((EmbeddedChannel) subscriber.channel, 2, "the update and the directed frame on loop 0"))
                .containsExactly(1, 2);
        loops[0].submit(() -> { }).get(5, TimeUnit.SECONDS); // its poller's run over: it passed the slots

        sequencer.submit(proxy::endOfBatch).get(5, TimeUnit.SECONDS);
        for (int slot = 0; slot < 3; slot++) {
            FanOutEvent ev = ring.get(slot);
            assertThat(ev.subscribers).as("slot %d's subscribers", slot).isNull();
            assertThat(ev.target).as("slot %d's target", slot).isNull();
            assertThat(ev.publisher).as("slot %d's publisher", slot).isNull();
            assertThat(ev.isFor(0)).as("slot %d is still for loop 0", slot).isTrue();
            assertThat(ev.isFor(1)).as("slot %d is not for loop 1", slot).isFalse();
        }

        gate.countDown();
        sequencer.submit(() -> {
            proxy.directed(onSleepingLoop, frame(3));
            proxy.endOfBatch();
        }).get(5, TimeUnit.SECONDS);
        assertThat(awaitIds((EmbeddedChannel) onSleepingLoop.channel, 1,
                "the directed frame on loop 1, past the forgotten slots")).containsExactly(3);
        assertThat(ids((EmbeddedChannel) publisher.channel)).as("the publisher's acks, of the update and the cluster's")
                .containsExactly(7, 8);
    }
}
