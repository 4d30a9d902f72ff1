package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.ringcast.client.RingcastException;
import io.ringcast.client.internal.EmbeddedConnection.Recorder;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.ringcast.client.internal.PublishWindow.FIRST_CORRELATION_ID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Removing topics (docs/protocol.md, "Removing topics"): {@code REMOVE} and its answer,
 * {@code TOPIC_REMOVED} to the subscriptions that had the topic, and incarnations, which tell a
 * topic created again from the one removed, on {@code TOPIC} and in a resuming {@code SUBSCRIBE}.
 * Driven by frames encoded with {@link WireCodec}, as {@link ConnectionHandlerTest}.
 */
@Timeout(10)
class TopicRemovalTest {
    private static final SubscribeOptions BIDS = SubscribeOptions.builder().fields("bid").build();

    private final EmbeddedConnection c = new EmbeddedConnection();

    @AfterEach
    void close() {
        c.close();
    }

    @Test
    void aRemovalCompletesWithTheServersCountOrFailsWithItsErrorCodeAndReason() {
        c.open();
        CompletableFuture<Integer> fx = c.remove("fx/#");
        CompletableFuture<Integer> eq = c.remove("eq/#");
        CompletableFuture<Integer> none = c.remove("nothing/+");
        assertThat(c.sent()).containsExactly("REMOVE " + FIRST_CORRELATION_ID + " fx/#",
                "REMOVE " + (FIRST_CORRELATION_ID + 1) + " eq/#", "REMOVE " + (FIRST_CORRELATION_ID + 2) + " nothing/+");

        c.fromServer(b -> {
            WireCodec.writeRemoved(b, FIRST_CORRELATION_ID, 3);
            WireCodec.writeError(b, ErrorCode.PERMISSION_DENIED, FIRST_CORRELATION_ID + 1,
                    "no publish grant can match 'eq/#'");
            WireCodec.writeRemoved(b, FIRST_CORRELATION_ID + 2, 0);
            WireCodec.writeRemoved(b, FIRST_CORRELATION_ID + 2, 5); // answered already: names nothing
        });

        assertThat(fx).isCompletedWithValue(3);
        assertThat(none).isCompletedWithValue(0);
        assertThatThrownBy(eq::get).cause().isInstanceOfSatisfying(RingcastException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
            assertThat(e).hasMessageContaining("no publish grant can match 'eq/#'");
        });
        assertThat(c.channel.isOpen()).isTrue();
    }

    @Test
    void removalsTakePublishCorrelationIdsAndGoOutInCallOrderWithPublishes() {
        CompletableFuture<Long> first = c.publish("fx/a", "1");
        CompletableFuture<Integer> removed = c.remove("fx/a");
        CompletableFuture<Long> again = c.publish("fx/a", "2");
        assertThat(c.sent()).isEmpty(); // no session yet: they wait, in order

        c.open();
        assertThat(c.sent()).containsExactly("PUBLISH " + FIRST_CORRELATION_ID + " fx/a 1",
                "REMOVE " + (FIRST_CORRELATION_ID + 1) + " fx/a",
                "PUBLISH " + (FIRST_CORRELATION_ID + 2) + " fx/a 2");
        c.fromServer(b -> {
            WireCodec.writePublishAck(b, FIRST_CORRELATION_ID, 1);
            WireCodec.writeRemoved(b, FIRST_CORRELATION_ID + 1, 1);
            WireCodec.writePublishAck(b, FIRST_CORRELATION_ID + 2, 1); // the path created again
        });

        assertThat(first).isCompletedWithValue(1L);
        assertThat(removed).isCompletedWithValue(1);
        assertThat(again).isCompletedWithValue(1L);
        assertThat(c.inFlight).hasValue(0);
    }

    @Test
    void aRemovalLostWithItsConnectionFailsAsMaybeAppliedAndIsNotSentAgain() {
        c.open();
        CompletableFuture<Integer> lost = c.remove("fx/#");
        CompletableFuture<Long> publish = c.publish("fx/a", "v");
        assertThat(c.sent()).containsExactly("REMOVE " + FIRST_CORRELATION_ID + " fx/#",
                "PUBLISH " + (FIRST_CORRELATION_ID + 1) + " fx/a v");

        c.reconnect();
        assertThatThrownBy(lost::get).cause().isInstanceOfSatisfying(RingcastException.class, e -> {
            assertThat(e.code()).isNull();
            assertThat(e).hasMessageContaining("'fx/#'").hasMessageContaining("may or may not have been applied");
        });
        CompletableFuture<Integer> later = c.remove("eq/#"); // made while disconnected: waits for the session

        c.open();
        // the publish goes again (its ledger applies it once); the lost removal does not
        assertThat(c.sent()).containsExactly("REPUBLISH " + (FIRST_CORRELATION_ID + 1) + " fx/a v",
                "REMOVE " + (FIRST_CORRELATION_ID + 2) + " eq/#");
        c.fromServer(b -> {
            WireCodec.writePublishAck(b, FIRST_CORRELATION_ID + 1, 4);
            WireCodec.writeRemoved(b, FIRST_CORRELATION_ID + 2, 0);
        });
        assertThat(publish).isCompletedWithValue(4L);
        assertThat(later).isCompletedWithValue(0);
    }

    @Test
    void topicRemovedTellsEachSubscriptionThatHadTheTopicOnceAndTheNextIncarnationIsDeliveredFromSequenceOne() {
        c.open();
        Recorder all = c.subscribe("fx/#");
        Recorder one = c.subscribe("fx/EURUSD");
        Recorder bids = c.subscribe("fx/#", BIDS);
        Recorder gbp = c.subscribe("fx/GBPUSD");
        Recorder eq = c.subscribe("eq/#");
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD", 5);
            WireCodec.writeTopic(b, 2, "fx/GBPUSD", 5);
            Wire.snapshot(b, all.id(), 1, 7, 0, "e7");
            Wire.snapshot(b, all.id(), 2, 3, 0, "g3");
            WireCodec.writeSubscribed(b, all.id(), 2);
            Wire.snapshot(b, one.id(), 1, 7, 0, "e7");
            WireCodec.writeSubscribed(b, one.id(), 1);
            WireCodec.writeView(b, bids.id(), 4);
            Wire.viewedSnapshot(b, bids.id(), 1, 7, 0, 4, "b7");
            WireCodec.writeSubscribed(b, bids.id(), 2); // GBPUSD's value showed nothing through the view yet
            Wire.snapshot(b, gbp.id(), 2, 3, 0, "g3");
            WireCodec.writeSubscribed(b, gbp.id(), 1);
            WireCodec.writeSubscribed(b, eq.id(), 0);
            Wire.update(b, 1, 8, "e8");
            Wire.viewedUpdate(b, 1, 8, 0, 4, "b8");
            WireCodec.writeTopicRemoved(b, 1, 8);
            WireCodec.writeTopicRemoved(b, 1, 8); // once more, for the topic's view: harmless
            WireCodec.writeTopicRemoved(b, 99, 1); // an alias this connection never had: harmless
        });

        assertThat(all.updates).endsWith("UPDATE fx/EURUSD #8 e8", "REMOVED fx/EURUSD #8");
        assertThat(one.updates).endsWith("UPDATE fx/EURUSD #8 e8", "REMOVED fx/EURUSD #8");
        assertThat(bids.updates).containsExactly("SNAPSHOT fx/EURUSD #7 b7", "UPDATE fx/EURUSD #8 b8",
                "REMOVED fx/EURUSD #8");
        assertThat(gbp.updates).containsExactly("SNAPSHOT fx/GBPUSD #3 g3");
        assertThat(eq.updates).isEmpty();

        // a publish creates the path again: a new alias, a new incarnation, sequences from 1, which the
        // client would drop as duplicates of #8 had it kept the removed topic's sequence
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 3, "fx/EURUSD", 6);
            Wire.update(b, 3, 1, "new e1");
            Wire.viewedUpdate(b, 3, 1, 0, 4, "new b1");
            Wire.update(b, 3, 2, "new e2");
        });
        assertThat(all.updates).endsWith("REMOVED fx/EURUSD #8", "UPDATE fx/EURUSD #1 new e1",
                "UPDATE fx/EURUSD #2 new e2");
        assertThat(one.updates).endsWith("REMOVED fx/EURUSD #8", "UPDATE fx/EURUSD #1 new e1",
                "UPDATE fx/EURUSD #2 new e2");
        assertThat(bids.updates).endsWith("REMOVED fx/EURUSD #8", "UPDATE fx/EURUSD #1 new b1");
        assertThat(c.session.duplicatesDropped()).isZero();
        assertThat(c.channel.isOpen()).isTrue();

        // the removed topic's alias is forgotten with it
        c.fromServer(b -> Wire.update(b, 1, 9, "through the old alias"));
        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.disconnectReason()).hasMessageContaining("alias 1");
    }

    @Test
    void aResumingSubscribeCarriesEachPositionsIncarnationInTheListsOrderBesideTheSubscriptionsOwnOptions() {
        SubscribeOptions throttledBids = SubscribeOptions.builder().fields("bid").maxRate(4).build();
        c.open();
        Recorder plain = c.subscribe("fx/#");
        Recorder viewed = c.subscribe("fx/#", throttledBids);
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD", 11);
            WireCodec.writeTopic(b, 2, "fx/GBPUSD", 0xFFFF_FFF0); // any u32
            WireCodec.writeTopic(b, 3, "fx/USDJPY", 0); // not known
            Wire.snapshot(b, plain.id(), 1, 5, 0, "e5");
            Wire.snapshot(b, plain.id(), 2, 6, 0, "g6");
            Wire.snapshot(b, plain.id(), 3, 7, 0, "j7");
            WireCodec.writeSubscribed(b, plain.id(), 3);
            WireCodec.writeView(b, viewed.id(), 2);
            Wire.viewedSnapshot(b, viewed.id(), 3, 7, 0, 2, "bj7"); // a viewed list keeps the order received
            Wire.viewedSnapshot(b, viewed.id(), 1, 5, 0, 2, "be5");
            WireCodec.writeSubscribed(b, viewed.id(), 3);
        });
        c.sent();

        c.reconnect();
        c.open();
        List<String> sent = c.sent();
        assertThat(sent).hasSize(2);
        // position=lastSequence@incarnation: the option's values paired with the positions in wire order
        assertThat(sent.get(0)).startsWith("SUBSCRIBE " + plain.id() + " fx/# {").endsWith("} {incarnations=3}")
                .contains("fx/EURUSD=5@11", "fx/GBPUSD=6@4294967280", "fx/USDJPY=7@0");
        assertThat(sent.get(1)).isEqualTo("SUBSCRIBE " + viewed.id() + " fx/# {fx/USDJPY=7@0, fx/EURUSD=5@11} "
                + throttledBids.withIncarnations(new int[] {0, 11}));
        assertThat(sent.get(1)).contains("maxRate=4", "fields=[bid]");
    }

    @Test
    void aTopicOfAKnownPathWithAnotherIncarnationAfterAReconnectIsTheOldOnesRemovalThenTheNewTopicFromItsStart() {
        c.open();
        Recorder all = c.subscribe("fx/#");
        Recorder bids = c.subscribe("fx/#", BIDS);
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD", 5);
            WireCodec.writeTopic(b, 2, "fx/GBPUSD", 5);
            WireCodec.writeTopic(b, 3, "fx/USDJPY", 5);
            Wire.snapshot(b, all.id(), 1, 9, 0, "e9");
            Wire.snapshot(b, all.id(), 2, 4, 0, "g4");
            Wire.snapshot(b, all.id(), 3, 2, 0, "j2");
            WireCodec.writeSubscribed(b, all.id(), 3);
            WireCodec.writeView(b, bids.id(), 7);
            Wire.viewedSnapshot(b, bids.id(), 1, 8, 0, 7, "b8"); // the bid did not change in #9
            WireCodec.writeSubscribed(b, bids.id(), 3);
        });
        c.sent();

        c.reconnect();
        c.open();
        assertThat(c.sent()).hasSize(2).first().asString().contains("fx/EURUSD=9@5", "fx/GBPUSD=4@5", "fx/USDJPY=2@5");
        c.fromServer(b -> {
            // fx/EURUSD was removed and created again while the client was away; history holds its #1
            WireCodec.writeTopic(b, 11, "fx/EURUSD", 6);
            Wire.update(b, 11, 1, "new e1");
            Wire.update(b, 11, 2, "new e2");
            // so was fx/GBPUSD, whose history no longer reaches back
            WireCodec.writeTopic(b, 12, "fx/GBPUSD", 6);
            Wire.snapshot(b, 0, 12, 40, UpdateFlags.GAP, "new g40");
            // fx/USDJPY is the topic the client had: resumed as before
            WireCodec.writeTopic(b, 13, "fx/USDJPY", 5);
            Wire.update(b, 13, 2, "a duplicate of #2");
            Wire.update(b, 13, 3, "j3");
            WireCodec.writeSubscribed(b, all.id(), 3);
            WireCodec.writeView(b, bids.id(), 9);
            Wire.viewedUpdate(b, 11, 2, 0, 9, "new b2");
            WireCodec.writeSubscribed(b, bids.id(), 3);
        });

        assertThat(all.updates).containsExactly("SNAPSHOT fx/EURUSD #9 e9", "SNAPSHOT fx/GBPUSD #4 g4",
                "SNAPSHOT fx/USDJPY #2 j2",
                "REMOVED fx/EURUSD #9", "UPDATE fx/EURUSD #1 new e1", "UPDATE fx/EURUSD #2 new e2",
                "REMOVED fx/GBPUSD #4", "SNAPSHOT_AFTER_GAP fx/GBPUSD #40 new g40",
                "UPDATE fx/USDJPY #3 j3");
        // the last sequence the client knew of the old fx/EURUSD, and nothing of fx/GBPUSD, which it never had
        assertThat(bids.updates).containsExactly("SNAPSHOT fx/EURUSD #8 b8", "REMOVED fx/EURUSD #9",
                "UPDATE fx/EURUSD #2 new b2");
        assertThat(c.session.duplicatesDropped()).isEqualTo(1);

        c.reconnect();
        c.open();
        assertThat(c.sent()).hasSize(2).first().asString().contains("fx/EURUSD=2@6", "fx/GBPUSD=40@6",
                "fx/USDJPY=3@5");
    }

    @Test
    void aServerOfNoIncarnationsLeavesUpdatesSnapshotsAndResumesAsBefore() {
        c.open();
        Recorder all = c.subscribe("fx/#");
        c.fromServer(b -> {
            Wire.topicWithoutIncarnation(b, 1, "fx/EURUSD");
            Wire.snapshot(b, all.id(), 1, 10, 0, "ten");
            WireCodec.writeSubscribed(b, all.id(), 1);
            Wire.update(b, 1, 11, "eleven");
            Wire.update(b, 1, 11, "a duplicate");
        });
        c.sent();

        c.reconnect();
        c.open();
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + all.id() + " fx/# {fx/EURUSD=11}"); // no option
        c.fromServer(b -> {
            Wire.topicWithoutIncarnation(b, 4, "fx/EURUSD");
            Wire.update(b, 4, 11, "a duplicate again");
            Wire.update(b, 4, 12, "twelve");
            WireCodec.writeSubscribed(b, all.id(), 1);
            Wire.snapshot(b, 0, 4, 2, UpdateFlags.GAP, "two"); // a server that lost its state, as before
            Wire.update(b, 4, 3, "three");
        });

        assertThat(all.updates).containsExactly("SNAPSHOT fx/EURUSD #10 ten", "UPDATE fx/EURUSD #11 eleven",
                "UPDATE fx/EURUSD #12 twelve", "SNAPSHOT_AFTER_GAP fx/EURUSD #2 two", "UPDATE fx/EURUSD #3 three");
        assertThat(c.session.duplicatesDropped()).isEqualTo(2);
    }

    @Test
    void aTopicOfIncarnationZeroKeepsTheIncarnationAndTheSequenceTheClientHolds() {
        c.open();
        Recorder all = c.subscribe("fx/#");
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD", 5);
            Wire.snapshot(b, all.id(), 1, 10, 0, "ten");
            WireCodec.writeSubscribed(b, all.id(), 1);
        });
        c.reconnect();
        c.open();
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + all.id() + " fx/# {fx/EURUSD=10@5} {incarnations=1}");

        c.fromServer(b -> { // a node of no incarnations: it knows nothing of a removal, and says nothing of one
            Wire.topicWithoutIncarnation(b, 2, "fx/EURUSD");
            Wire.update(b, 2, 10, "a duplicate");
            Wire.update(b, 2, 11, "eleven");
            WireCodec.writeSubscribed(b, all.id(), 1);
        });
        assertThat(all.updates).containsExactly("SNAPSHOT fx/EURUSD #10 ten", "UPDATE fx/EURUSD #11 eleven");

        c.reconnect();
        c.open();
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + all.id() + " fx/# {fx/EURUSD=11@5} {incarnations=1}");
    }

    @Test
    void theIncarnationsCountInTheRoomOfAResumeListCutToTheServersFrameLimit() {
        c.open();
        Recorder all = c.subscribe("#");
        c.fromServer(b -> {
            for (int i = 1; i <= 100; i++) {
                WireCodec.writeTopic(b, i, String.format("topic/%03d", i), 1000 + i);
                Wire.snapshot(b, all.id(), i, i, 0, "v");
            }
            WireCodec.writeSubscribed(b, all.id(), 100);
        });
        c.sent();

        c.reconnect();
        c.open(256, 0);
        List<ByteBuf> frames = c.sentFrames();
        assertThat(frames).singleElement().satisfies(f -> assertThat(f.readableBytes()).isLessThanOrEqualTo(256));
        String subscribe = Wire.decodeClientFrame(frames.get(0)).get(0);
        frames.forEach(ByteBuf::release);
        // 256 - 16 (the SUBSCRIBE to '#') - 4 (the block's count and the option's head), at 19 + 4 bytes a
        // position: 10, where 12 would fit without incarnations
        assertThat(subscribe.split("@", -1)).hasSize(10 + 1);
        assertThat(subscribe).endsWith(" {incarnations=10}");
    }

    @Test
    void aResumeListLongerThanTheOptionHoldsGoesWithoutIncarnations() {
        int topics = WireCodec.MAX_RESUME_INCARNATIONS + 1;
        c.open();
        Recorder all = c.subscribe("#");
        c.fromServer(b -> {
            for (int i = 1; i <= topics; i++) {
                WireCodec.writeTopic(b, i, String.format("t/%05d", i), 7);
                Wire.snapshot(b, all.id(), i, 1, 0, "");
            }
            WireCodec.writeSubscribed(b, all.id(), topics);
        });
        c.sent();

        c.reconnect();
        c.open();
        String subscribe = c.sent().get(0);
        assertThat(subscribe.split("=", -1)).hasSize(topics + 1);
        assertThat(subscribe).doesNotContain("@").endsWith("}"); // positions by sequence alone, as before
    }
}
