package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.client.RingcastException;
import io.ringcast.client.internal.EmbeddedConnection.Recorder;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Subscriptions with a view (issue 16): {@code VIEW} names a subscription's view on a connection,
 * messages flagged {@code VIEWED} go to the subscriptions with that view whose selector matches,
 * others to the plain subscriptions only, and each viewed subscription keeps its own last
 * sequence and value per topic. Driven by frames encoded with {@link WireCodec}, as
 * {@link ConnectionHandlerTest}.
 */
@Timeout(10)
class SubscriptionViewsTest {
    private static final SubscribeOptions BIDS = SubscribeOptions.builder().fields("bid").build();
    private static final SubscribeOptions TIGHT = SubscribeOptions.builder().filter("spread < 0.0005").build();

    private final EmbeddedConnection c = new EmbeddedConnection();

    @AfterEach
    void close() {
        c.close();
    }

    @Test
    void aViewedSubscriptionSendsItsOptionsAndTakesTheMessagesOfTheViewItWasNamedOnly() {
        c.open();
        Recorder bids = c.subscribe("fx/#", BIDS);
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + bids.id() + " fx/# {} {fields=[bid]}");

        c.fromServer(b -> {
            WireCodec.writeView(b, bids.id(), 7);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.viewedSnapshot(b, bids.id(), 1, 10, 0, 7, "b10");
            WireCodec.writeSubscribed(b, bids.id(), 1);
            Wire.viewedUpdate(b, 1, 12, 0, 7, "b12"); // #11 left the bid alone: the view skipped it
            Wire.update(b, 1, 13, "plain: for plain subscriptions only");
            Wire.viewedUpdate(b, 1, 14, 0, 8, "through a view no subscription has");
            Wire.viewedUpdate(b, 1, 20, UpdateFlags.CONFLATED, 7, "b20");
        });

        assertThat(bids.updates).containsExactly("SNAPSHOT fx/EURUSD #10 b10", "UPDATE fx/EURUSD #12 b12",
                "CONFLATED fx/EURUSD #20 b20");
        assertThat(bids.subscription.confirmed()).isCompleted();
        assertThat(c.session.viewMessagesDropped()).isEqualTo(1);
        assertThat(c.session.duplicatesDropped()).isZero();
        assertThat(c.channel.isOpen()).isTrue();
    }

    @Test
    void aPlainAndAViewedSubscriptionOfOneTopicEachGetTheirOwnStream() {
        c.open();
        Recorder plain = c.subscribe("fx/EURUSD");
        Recorder tight = c.subscribe("fx/EURUSD", TIGHT);
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.snapshot(b, plain.id(), 1, 10, 0, "p10");
            WireCodec.writeSubscribed(b, plain.id(), 1);
            WireCodec.writeView(b, tight.id(), 3);
            WireCodec.writeSubscribed(b, tight.id(), 1); // the value of #10 does not pass: no snapshot
            Wire.update(b, 1, 11, "p11");
            Wire.update(b, 1, 12, "p12");
            Wire.viewedUpdate(b, 1, 12, 0, 3, "v12");
            Wire.update(b, 1, 13, "p13");
            WireCodec.writeUnmatched(b, 3, 1, 13);
            Wire.snapshot(b, 0, 1, 20, UpdateFlags.GAP, "p20");
            Wire.viewedSnapshot(b, 0, 1, 20, UpdateFlags.GAP, 3, "v20");
            Wire.update(b, 1, 21, "p21");
        });

        assertThat(plain.updates).containsExactly("SNAPSHOT fx/EURUSD #10 p10", "UPDATE fx/EURUSD #11 p11",
                "UPDATE fx/EURUSD #12 p12", "UPDATE fx/EURUSD #13 p13", "SNAPSHOT_AFTER_GAP fx/EURUSD #20 p20",
                "UPDATE fx/EURUSD #21 p21");
        assertThat(tight.updates).containsExactly("UPDATE fx/EURUSD #12 v12", "UNMATCHED fx/EURUSD #13",
                "SNAPSHOT_AFTER_GAP fx/EURUSD #20 v20");
        assertThat(c.session.duplicatesDropped()).as("#12 and #20 came once per stream").isZero();
    }

    @Test
    void duplicatesAreDroppedPerSubscriptionAndTopicNotPerView() {
        c.open();
        Recorder all = c.subscribe("fx/#", BIDS);
        Recorder one = c.subscribe("fx/EURUSD", BIDS);
        c.fromServer(b -> {
            WireCodec.writeView(b, all.id(), 7);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            WireCodec.writeTopic(b, 2, "fx/GBPUSD");
            Wire.viewedSnapshot(b, all.id(), 1, 10, 0, 7, "e10");
            Wire.viewedSnapshot(b, all.id(), 2, 3, 0, 7, "g3");
            WireCodec.writeSubscribed(b, all.id(), 2);
            Wire.viewedUpdate(b, 1, 11, 0, 7, "e11"); // before the reply to the second SUBSCRIBE
            WireCodec.writeView(b, one.id(), 7); // the same options, so the same view
            Wire.viewedSnapshot(b, one.id(), 1, 12, 0, 7, "e12");
            WireCodec.writeSubscribed(b, one.id(), 1);
            Wire.viewedUpdate(b, 1, 12, 0, 7, "e12"); // new to the first, a duplicate of the second's snapshot
            Wire.viewedUpdate(b, 2, 4, 0, 7, "g4"); // below EURUSD's sequences: another topic
            Wire.viewedUpdate(b, 1, 13, 0, 7, "e13");
            Wire.viewedUpdate(b, 1, 13, 0, 7, "e13 again");
            Wire.viewedUpdate(b, 2, 3, 0, 7, "g3 again");
            Wire.viewedSnapshot(b, one.id(), 1, 13, 0, 7, "e13 as a snapshot");
        });

        assertThat(all.updates).containsExactly("SNAPSHOT fx/EURUSD #10 e10", "SNAPSHOT fx/GBPUSD #3 g3",
                "UPDATE fx/EURUSD #11 e11", "UPDATE fx/EURUSD #12 e12", "UPDATE fx/GBPUSD #4 g4",
                "UPDATE fx/EURUSD #13 e13");
        assertThat(one.updates).containsExactly("SNAPSHOT fx/EURUSD #12 e12", "UPDATE fx/EURUSD #13 e13");
        // the second's #12; both subscriptions' second #13; the first's GBPUSD #3; the second's snapshot of #13
        assertThat(c.session.duplicatesDropped()).isEqualTo(5);
        assertThat(all.raw.get(5)).as("one Update shared where the value is").isSameAs(one.raw.get(1));
    }

    @Test
    void aSnapshotAfterAGapThroughAViewIsDeliveredAndSetsTheSubscriptionsSequenceEvenBackwards() {
        c.open();
        Recorder bids = c.subscribe("fx/#", BIDS);
        c.fromServer(b -> {
            WireCodec.writeView(b, bids.id(), 7);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.viewedSnapshot(b, bids.id(), 1, 40, 0, 7, "b40");
            WireCodec.writeSubscribed(b, bids.id(), 1);
            // a server that lost its state numbers the topic from 1 again
            Wire.viewedSnapshot(b, 0, 1, 2, UpdateFlags.GAP, 7, "b2");
            Wire.viewedUpdate(b, 1, 3, 0, 7, "b3");
            Wire.viewedSnapshot(b, 0, 1, 5, UpdateFlags.GAP | UpdateFlags.NO_VALUE, 7, "");
        });

        assertThat(bids.updates).containsExactly("SNAPSHOT fx/EURUSD #40 b40", "SNAPSHOT_AFTER_GAP fx/EURUSD #2 b2",
                "UPDATE fx/EURUSD #3 b3", "GAP_WITHOUT_VALUE fx/EURUSD #5 ");
    }

    @Test
    void aViewedDeltaAppliesToTheValueThatSubscriptionHoldsOfTheTopic() {
        c.open();
        Recorder plain = c.subscribe("fx/EURUSD");
        Recorder bids = c.subscribe("fx/EURUSD", BIDS);
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.snapshot(b, plain.id(), 1, 10, 0, "the plain value of #10");
            WireCodec.writeSubscribed(b, plain.id(), 1);
            WireCodec.writeView(b, bids.id(), 7);
            Wire.viewedSnapshot(b, bids.id(), 1, 10, 0, 7, "hello world");
            WireCodec.writeSubscribed(b, bids.id(), 1);
            // #15 after #10: sequences jump through a view, and the base is what this subscription holds
            viewedDelta(b, 1, 15, 7, "hello world", "hello there world");
            plainDelta(b, 1, 11, "the plain value of #10", "the plain value of #11");
        });

        assertThat(bids.updates).containsExactly("SNAPSHOT fx/EURUSD #10 hello world",
                "UPDATE fx/EURUSD #15 hello there world");
        assertThat(plain.updates).containsExactly("SNAPSHOT fx/EURUSD #10 the plain value of #10",
                "UPDATE fx/EURUSD #11 the plain value of #11");
        assertThat(c.channel.isOpen()).isTrue();
    }

    @Test
    void aViewedDeltaForASubscriptionHoldingNoValueOfTheTopicEndsTheConnectionDeliveringNothing() {
        c.open();
        Recorder all = c.subscribe("fx/#", BIDS);
        Recorder one = c.subscribe("fx/EURUSD", BIDS);
        c.fromServer(b -> {
            WireCodec.writeView(b, all.id(), 7);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.viewedSnapshot(b, all.id(), 1, 10, 0, 7, "hello world");
            WireCodec.writeSubscribed(b, all.id(), 1);
            WireCodec.writeView(b, one.id(), 7);
            WireCodec.writeSubscribed(b, one.id(), 0); // as if the topic had not passed a filter for it
            viewedDelta(b, 1, 15, 7, "hello world", "hello there world");
        });

        assertThat(all.updates).as("not even the subscription that has the base")
                .containsExactly("SNAPSHOT fx/EURUSD #10 hello world");
        assertThat(one.updates).isEmpty();
        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.disconnectReason()).hasMessageContaining("delta for fx/EURUSD #15")
                .hasMessageContaining("subscription " + one.id() + " holds no value of the topic");
    }

    @Test
    void unmatchedReachesTheListenerAndIsTheSubscriptionsLastSequenceOfTheTopic() {
        c.open();
        Recorder tight = c.subscribe("fx/#", TIGHT);
        c.fromServer(b -> {
            WireCodec.writeView(b, tight.id(), 3);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.viewedSnapshot(b, tight.id(), 1, 10, 0, 3, "passes");
            WireCodec.writeSubscribed(b, tight.id(), 1);
            WireCodec.writeUnmatched(b, 3, 1, 12);
            Wire.viewedUpdate(b, 1, 12, 0, 3, "a duplicate of #12");
            WireCodec.writeUnmatched(b, 3, 1, 12);
            Wire.viewedUpdate(b, 1, 15, 0, 3, "passes again");
        });

        assertThat(tight.updates).containsExactly("SNAPSHOT fx/EURUSD #10 passes", "UNMATCHED fx/EURUSD #12",
                "UPDATE fx/EURUSD #15 passes again");
        assertThat(c.session.duplicatesDropped()).isEqualTo(2);
    }

    @Test
    void invalidOptionsRefuseTheSubscriptionAsAnInvalidSelectorDoesAndTheSessionStaysOpen() {
        c.open();
        Recorder refused = c.subscribe("fx/#", SubscribeOptions.builder().filter("spread 0.0005").build());
        Recorder other = c.subscribe("eq/#");
        c.sent();
        c.fromServer(b -> {
            WireCodec.writeError(b, ErrorCode.INVALID_OPTIONS, refused.id(),
                    "filter: expected a comparison operator after 'spread' at column 8");
            WireCodec.writeView(b, refused.id(), 7); // for a subscription no longer there: dropped
            WireCodec.writeSubscribed(b, other.id(), 0);
        });

        assertThatThrownBy(() -> refused.subscription.confirmed().get()).cause()
                .isInstanceOf(RingcastException.class).hasMessageContaining("INVALID_OPTIONS")
                .hasMessageContaining("after 'spread' at column 8");
        assertThat(refused.errors).singleElement().extracting(RingcastException::code)
                .isEqualTo(ErrorCode.INVALID_OPTIONS);
        refused.subscription.close();
        assertThat(c.sent()).as("dropped already: no UNSUBSCRIBE").isEmpty();
        assertThat(other.subscription.confirmed()).isCompleted();
        assertThat(c.session.viewMessagesDropped()).isEqualTo(1);
        assertThat(c.channel.isOpen()).isTrue();
    }

    @Test
    void aViewedSubscriptionConfirmedWithoutAViewIsRefusedAndUnsubscribedRatherThanLeftSilent() {
        c.open();
        Recorder bids = c.subscribe("fx/#", BIDS);
        c.sent();
        c.fromServer(b -> { // a server from before views: it skipped the options block
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.snapshot(b, bids.id(), 1, 10, 0, "{\"bid\":1.0840,\"ask\":1.0842}");
            WireCodec.writeSubscribed(b, bids.id(), 1);
        });

        assertThat(bids.updates).isEmpty();
        assertThatThrownBy(() -> bids.subscription.confirmed().get()).cause()
                .isInstanceOf(RingcastException.class).hasMessageContaining("without a view");
        assertThat(bids.errors).singleElement().extracting(RingcastException::code)
                .isEqualTo(ErrorCode.INVALID_OPTIONS);
        assertThat(c.sent()).containsExactly("UNSUBSCRIBE " + bids.id());
        assertThat(c.channel.isOpen()).isTrue();
    }

    @Test
    void optionsThatCannotFitInTheServersFrameAreRefusedWithoutBeingSent() {
        c.open(256, 0);
        Recorder r = c.subscribe("fx/#", SubscribeOptions.builder().filter("x = '" + "a".repeat(300) + "'").build());

        assertThat(c.sent()).isEmpty();
        assertThat(r.errors).singleElement().satisfies(e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_OPTIONS);
            assertThat(e).hasMessageContaining("frame limit of 256 bytes");
        });
    }

    @Test
    void aResumeSendsTheSameOptionsWithTheSubscriptionsOwnLastSequencesAndTakesTheViewIdOfTheNewReply() {
        SubscribeOptions options = SubscribeOptions.builder().fields("bid").filter("bid > 1").rewind(5).build();
        c.open();
        Recorder plain = c.subscribe("fx/#");
        Recorder viewed = c.subscribe("fx/#", options);
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            WireCodec.writeTopic(b, 2, "fx/GBPUSD");
            Wire.snapshot(b, plain.id(), 1, 20, 0, "p20");
            Wire.snapshot(b, plain.id(), 2, 9, 0, "p9");
            WireCodec.writeSubscribed(b, plain.id(), 2);
            WireCodec.writeView(b, viewed.id(), 7);
            Wire.viewedSnapshot(b, viewed.id(), 1, 20, 0, 7, "v20");
            Wire.viewedSnapshot(b, viewed.id(), 2, 9, 0, 7, "v9");
            WireCodec.writeSubscribed(b, viewed.id(), 2);
            Wire.update(b, 1, 21, "p21"); // the bid did not change: nothing through the view
            Wire.update(b, 2, 10, "p10");
            WireCodec.writeUnmatched(b, 7, 2, 10);
        });
        c.sent();

        c.reconnect();
        c.open();
        assertThat(c.sent()).containsExactly(
                "SUBSCRIBE " + plain.id() + " fx/# {fx/EURUSD=21, fx/GBPUSD=10}",
                "SUBSCRIBE " + viewed.id() + " fx/# {fx/EURUSD=20, fx/GBPUSD=10} " + options);

        int newViewId = 0xFFFF_FFFE; // any u32: each server numbers its views
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 5, "fx/EURUSD");
            Wire.viewedUpdate(b, 5, 22, 0, 7, "the old id, which may be another view on this server");
            WireCodec.writeView(b, viewed.id(), newViewId);
            Wire.viewedSnapshot(b, viewed.id(), 5, 23, 0, newViewId, "v23");
            WireCodec.writeSubscribed(b, viewed.id(), 2);
            Wire.viewedUpdate(b, 5, 23, 0, newViewId, "a duplicate of #23");
            Wire.viewedUpdate(b, 5, 24, 0, newViewId, "v24");
        });

        assertThat(viewed.updates).containsExactly("SNAPSHOT fx/EURUSD #20 v20", "SNAPSHOT fx/GBPUSD #9 v9",
                "UNMATCHED fx/GBPUSD #10", "SNAPSHOT fx/EURUSD #23 v23", "UPDATE fx/EURUSD #24 v24");
        assertThat(plain.updates).endsWith("UPDATE fx/GBPUSD #10 p10");
        assertThat(c.session.viewMessagesDropped()).isEqualTo(1);
        assertThat(c.session.duplicatesDropped()).isEqualTo(1);
    }

    @Test
    void rewindAloneMakesNoViewTheSubscriptionIsPlainAndSendsItAgainOnResume() {
        SubscribeOptions rewind = SubscribeOptions.builder().rewind(5).build();
        c.open();
        Recorder r = c.subscribe("fx/#", rewind);
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + r.id() + " fx/# {} {rewind=5}");
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.snapshot(b, r.id(), 1, 10, 0, "s10");
            WireCodec.writeSubscribed(b, r.id(), 1);
            Wire.update(b, 1, 11, "u11");
            Wire.viewedUpdate(b, 1, 12, 0, 0, "through a view it does not have");
        });
        assertThat(r.updates).containsExactly("SNAPSHOT fx/EURUSD #10 s10", "UPDATE fx/EURUSD #11 u11");

        c.reconnect();
        c.open();
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + r.id() + " fx/# {fx/EURUSD=11} {rewind=5}");
    }

    @Test
    void viewMessagesForNoSubscriptionWithTheirViewAreDroppedAndCountedWithoutEndingTheConnection() {
        c.open();
        Recorder plain = c.subscribe("fx/#");
        c.fromServer(b -> {
            WireCodec.writeSubscribed(b, plain.id(), 0);
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            WireCodec.writeView(b, 99, 5); // no such subscription (it may have just been closed)
            WireCodec.writeView(b, plain.id(), 5); // it asked for no view
            Wire.viewedSnapshot(b, 0, 1, 3, UpdateFlags.GAP, 5, "g3");
            Wire.viewedSnapshot(b, plain.id(), 1, 3, 0, 5, "s3");
            Wire.viewedUpdate(b, 1, 4, 0, 5, "u4");
            WireCodec.writeUnmatched(b, 5, 1, 5);
            Wire.update(b, 1, 6, "p6");
        });

        assertThat(plain.updates).containsExactly("UPDATE fx/EURUSD #6 p6");
        assertThat(c.session.viewMessagesDropped()).isEqualTo(6);
        assertThat(c.channel.isOpen()).isTrue();
    }

    /** Appends an {@code UPDATE} through a view, flagged {@code DELTA}: {@code target} as a delta from {@code base}. */
    private static void viewedDelta(ByteBuf out, int alias, long sequence, int viewId, String base, String target) {
        ByteBuf delta = delta(base, target);
        WireCodec.writeUpdate(out, alias, sequence, UpdateFlags.DELTA, viewId, delta, 0, delta.readableBytes());
        delta.release();
    }

    /** Appends a plain {@code UPDATE} flagged {@code DELTA}: {@code target} as a delta against {@code base}. */
    private static void plainDelta(ByteBuf out, int alias, long sequence, String base, String target) {
        ByteBuf delta = delta(base, target);
        WireCodec.writeUpdate(out, alias, sequence, UpdateFlags.DELTA, delta, 0, delta.readableBytes());
        delta.release();
    }

    private static ByteBuf delta(String base, String target) {
        ByteBuf b = Unpooled.copiedBuffer(base, StandardCharsets.UTF_8);
        ByteBuf t = Unpooled.copiedBuffer(target, StandardCharsets.UTF_8);
        ByteBuf delta = Unpooled.buffer();
        int length = new Delta.Encoder().encode(b, 0, b.readableBytes(), t, 0, t.readableBytes(), delta,
                Integer.MAX_VALUE);
        assertThat(length).isPositive();
        b.release();
        t.release();
        return delta;
    }
}
