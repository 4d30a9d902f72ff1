package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SequencerProxy} on a real four-slot Disruptor ring whose only consumer is a sequence the
 * test moves by hand: what each command puts in its slot, that a claimed slot is always published
 * (as a NOOP when nothing filled it), and that a full ring is a result, never a wait.
 */
class SequencerProxyTest {
    private static final int SLOTS = 4;

    private final RingBuffer<InboundEvent> ring = RingBuffer.createMultiProducer(InboundEvent::new, SLOTS);
    /** Plays the sequencer: the ring has room only for what this sequence has passed. */
    private final Sequence consumed = new Sequence();
    private final SequencerProxy proxy = new SequencerProxy(ring);
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private final Session session = new Session(7, channel.pipeline().firstContext(), 0, false);

    SequencerProxyTest() {
        ring.addGatingSequences(consumed);
    }

    @AfterEach
    void releaseValues() {
        proxy.releaseUnconsumed();
        channel.finishAndReleaseAll();
    }

    /** The event at {@code slot} once the proxy published it. */
    private InboundEvent published(long slot) {
        assertThat(ring.isAvailable(slot)).as("slot " + slot + " published").isTrue();
        return ring.get(slot);
    }

    private static ByteBuf bytes(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    }

    @Test
    void claimedSlotIsClearedToNoopAndCommittedUnfilledItReachesTheSequencerAsNoop() {
        ring.get(0).kind = InboundEvent.PUBLISH; // what a slot's previous lap may have left
        ring.get(0).path = "left/over";

        long slot = proxy.tryClaim();
        assertThat(slot).isZero();
        assertThat(ring.isAvailable(slot)).as("claimed, not yet published").isFalse();
        proxy.commit(slot);

        InboundEvent e = published(slot);
        assertThat(e.kind).isEqualTo(InboundEvent.NOOP);
        assertThat(e.path).isNull();
        assertThat(ring.getCursor()).isZero();
    }

    @Test
    void fullRingReturnsRingFullWithoutWaitingAndDrainingGivesTheSlotBack() {
        for (int i = 0; i < SLOTS; i++) {
            proxy.commit(proxy.tryClaim());
        }
        assertThat(ring.remainingCapacity()).isZero();
        assertThat(proxy.tryClaim()).isEqualTo(SequencerProxy.RING_FULL);
        assertThat(ring.getCursor()).as("a refused claim publishes nothing").isEqualTo(SLOTS - 1);

        consumed.set(0); // the sequencer passed one slot
        assertThat(ring.remainingCapacity()).isEqualTo(1);
        long slot = proxy.tryClaim();
        assertThat(slot).isEqualTo(SLOTS);
        proxy.commit(slot);
    }

    @Test
    void fillPublishPutsTheSessionsPublishInTheClaimedSlot() {
        long before = System.nanoTime();
        long slot = proxy.tryClaim();
        ByteBuf value = bytes("1.0842");
        proxy.fillPublish(slot, session, 42, "fx/EURUSD", new String[] {"fx", "EURUSD"}, value, true, true);
        proxy.commit(slot);

        InboundEvent e = published(slot);
        assertThat(e.kind).isEqualTo(InboundEvent.PUBLISH);
        assertThat(e.session).isSameAs(session);
        assertThat(e.id).isEqualTo(42);
        assertThat(e.path).isEqualTo("fx/EURUSD");
        assertThat(e.segments).containsExactly("fx", "EURUSD");
        assertThat(e.value).isSameAs(value);
        assertThat(e.republish).isTrue();
        assertThat(e.overRate).isTrue();
        assertThat(e.fixedSequence).as("the sequencer numbers a session's publish").isZero();
        assertThat(e.receivedNanos).isBetween(before, System.nanoTime());
    }

    @Test
    void fillSubscribeAndFillUnsubscribeCarryTheSubscription() throws Exception {
        Selector selector = Selector.parse("fx/#", PathLimits.DEFAULT);
        Map<String, Long> resume = Map.of("fx/EURUSD", 12L);
        long subscribe = proxy.tryClaim();
        proxy.fillSubscribe(subscribe, session, 3, selector, resume, null, SubscribeOptions.NONE);
        proxy.commit(subscribe);
        long unsubscribe = proxy.tryClaim();
        proxy.fillUnsubscribe(unsubscribe, session, 3);
        proxy.commit(unsubscribe);

        InboundEvent s = published(subscribe);
        assertThat(s.kind).isEqualTo(InboundEvent.SUBSCRIBE);
        assertThat(s.session).isSameAs(session);
        assertThat(s.id).isEqualTo(3);
        assertThat(s.selector).isSameAs(selector);
        assertThat(s.resume).isSameAs(resume);
        InboundEvent u = published(unsubscribe);
        assertThat(u.kind).isEqualTo(InboundEvent.UNSUBSCRIBE);
        assertThat(u.session).isSameAs(session);
        assertThat(u.id).isEqualTo(3);
        assertThat(u.selector).as("nothing left over from a previous command").isNull();
    }

    @Test
    void trySessionClosedSendsTheCloseOrReturnsFalseOnAFullRing() {
        assertThat(proxy.trySessionClosed(session)).isTrue();
        InboundEvent e = published(0);
        assertThat(e.kind).isEqualTo(InboundEvent.SESSION_CLOSED);
        assertThat(e.session).isSameAs(session);

        for (int i = 1; i < SLOTS; i++) {
            proxy.commit(proxy.tryClaim());
        }
        assertThat(proxy.trySessionClosed(session)).isFalse();
        assertThat(ring.getCursor()).isEqualTo(SLOTS - 1);
    }

    @Test
    void tryPublishMakesTheValueOnlyOnceASlotIsClaimed() {
        AtomicInteger made = new AtomicInteger();
        IntFunction<ByteBuf> quote = instrument -> {
            made.incrementAndGet();
            return bytes("quote " + instrument);
        };
        String[] segments = {"demo", "fx", "EURUSD"};
        for (int i = 0; i < SLOTS; i++) {
            assertThat(proxy.tryPublish("demo/fx/EURUSD", segments, quote, i)).isTrue();
        }
        assertThat(proxy.tryPublish("demo/fx/EURUSD", segments, quote, 9)).as("ring full").isFalse();
        assertThat(made).as("no value made for a full ring").hasValue(SLOTS);

        InboundEvent e = published(2);
        assertThat(e.kind).isEqualTo(InboundEvent.PUBLISH);
        assertThat(e.session).as("no session: acked to no one").isNull();
        assertThat(e.path).isEqualTo("demo/fx/EURUSD");
        assertThat(e.segments).isSameAs(segments);
        assertThat(e.value.toString(StandardCharsets.UTF_8)).isEqualTo("quote 2");
        assertThat(e.receivedNanos).isPositive();
    }

    @Test
    void tryPublishWhoseValueFailsPublishesItsSlotAsNoopAndRethrows() {
        IntFunction<ByteBuf> failing = instrument -> {
            throw new IllegalStateException("cannot encode a demo quote");
        };
        assertThatThrownBy(() -> proxy.tryPublish("demo/fx/EURUSD", new String[] {"demo", "fx", "EURUSD"}, failing, 0))
                .isInstanceOf(IllegalStateException.class).hasMessage("cannot encode a demo quote");

        InboundEvent e = published(0);
        assertThat(e.kind).isEqualTo(InboundEvent.NOOP);
        assertThat(e.value).isNull();
    }

    @Test
    void reloadFeaturesCarriesTheResolver() {
        ServerConfig config = ServerConfig.defaults();
        FeatureResolver resolver = new FeatureResolver(config.features(), config.limits().pathLimits());
        proxy.reloadFeatures(resolver);

        InboundEvent e = published(0);
        assertThat(e.kind).isEqualTo(InboundEvent.FEATURES);
        assertThat(e.features).isSameAs(resolver);
        assertThat(e.session).isNull();
    }

    @Test
    void snapshotTopicsCarriesTheRequest() {
        TopicSnapshotRequest capture = TopicSnapshotRequest.capture(path -> true);
        proxy.snapshotTopics(capture);

        InboundEvent e = published(0);
        assertThat(e.kind).isEqualTo(InboundEvent.TOPIC_SNAPSHOT);
        assertThat(e.snapshot).isSameAs(capture);
        assertThat(e.session).isNull();
        e.clear();
        assertThat(e.snapshot).as("cleared with the slot").isNull();
    }

    @Test
    void applyFromClusterPublishesWithTheOwnersSequenceAndTheValueWrapped() {
        byte[] value = "1.0842".getBytes(StandardCharsets.UTF_8);
        proxy.applyFromCluster("fx/EURUSD", new String[] {"fx", "EURUSD"}, 99, 7, value);

        InboundEvent e = published(0);
        assertThat(e.kind).isEqualTo(InboundEvent.PUBLISH);
        assertThat(e.fixedSequence).isEqualTo(99);
        assertThat(e.fixedIncarnation).isEqualTo(7);
        assertThat(e.session).isNull();
        assertThat(e.path).isEqualTo("fx/EURUSD");
        assertThat(e.segments).containsExactly("fx", "EURUSD");
        value[0] = 'X'; // wrapped, not copied: the sink owns the array
        assertThat(e.value.getByte(0)).isEqualTo((byte) 'X');
        assertThat(e.receivedNanos).isPositive();
    }

    @Test
    void ackFromClusterCarriesThePublishersCorrelationIdAndTheLogsSequence() {
        proxy.applyFromCluster("t", new String[] {"t"}, 5, 1, new byte[] {1});
        proxy.ackFromCluster(session, 42, 5);

        InboundEvent e = published(1);
        assertThat(e.kind).isEqualTo(InboundEvent.CLUSTER_ACK);
        assertThat(e.session).isSameAs(session);
        assertThat(e.id).isEqualTo(42);
        assertThat(e.fixedSequence).isEqualTo(5);
        assertThat(e.value).isNull();
    }

    @Test
    void releaseUnconsumedReleasesValuesTheSequencerNeverReachedAndClearsEverySlot() {
        ByteBuf first = bytes("a");
        ByteBuf second = bytes("b");
        long a = proxy.tryClaim();
        proxy.fillPublish(a, session, 1, "t/a", new String[] {"t", "a"}, first, false, false);
        proxy.commit(a);
        long b = proxy.tryClaim();
        proxy.fillPublish(b, session, 2, "t/b", new String[] {"t", "b"}, second, false, false);
        proxy.commit(b);

        proxy.releaseUnconsumed();

        assertThat(first.refCnt()).isZero();
        assertThat(second.refCnt()).isZero();
        for (int i = 0; i < SLOTS; i++) {
            assertThat(ring.get(i).kind).isEqualTo(InboundEvent.NOOP);
            assertThat(ring.get(i).value).isNull();
            assertThat(ring.get(i).session).isNull();
        }
    }
}
