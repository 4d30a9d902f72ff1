package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.DeltaFormatException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static io.ringcast.server.internal.ReceivedFrames.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The sequencer and its collaborators on their own, no sockets: sequencing and history, topic
 * creation and its limit, the replies to a subscribe (snapshot, replay, gap), and what reaches
 * which session. Each test reads back the frames the sessions were written.
 */
@Timeout(10)
class TopicSequencerTest {

    private static List<Long> sequences(List<Received> messages) {
        return of(messages, MessageType.UPDATE).stream().map(Received::sequence).toList();
    }

    @Test
    void eachTopicNumbersItsUpdatesFromOneWithoutGaps() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "#");
            for (int i = 0; i < 5; i++) {
                node.publish(null, 0, "a", "a" + i);
                if (i % 2 == 0) {
                    node.publish(null, 0, "b", "b" + i);
                }
            }
            List<Received> got = node.received(sub);
            List<Received> topics = of(got, MessageType.TOPIC);
            assertThat(topics).extracting(Received::text).containsExactly("a", "b");
            int aliasA = topics.get(0).alias();
            List<Received> updates = of(got, MessageType.UPDATE);
            assertThat(updates.stream().filter(u -> u.alias() == aliasA).map(Received::sequence))
                    .containsExactly(1L, 2L, 3L, 4L, 5L);
            assertThat(updates.stream().filter(u -> u.alias() != aliasA).map(Received::sequence))
                    .containsExactly(1L, 2L, 3L);
            assertThat(updates.stream().filter(u -> u.alias() == aliasA).map(Received::text))
                    .containsExactly("a0", "a1", "a2", "a3", "a4");
        }
    }

    @Test
    void updatesOfManyTopicsForTheSameSubscribersLeaveInOneFramePerSession() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session a = node.session(0);
            Session b = node.session(1);
            Session other = node.session(1);
            node.subscribe(a, 1, "x/#");
            node.publish(null, 0, "x/1", "v0");
            node.subscribe(b, 1, "x/#"); // joins x/1, then x/2 is created for both: one set
            node.subscribe(other, 1, "y");
            node.publish(null, 0, "x/2", "v0");
            node.publish(null, 0, "y", "v0");
            node.received(a);
            node.received(b);
            node.received(other);

            for (int i = 1; i <= 2; i++) {
                node.publish(null, 0, "x/1", "one" + i);
                node.publish(null, 0, "y", "y" + i); // for a session of loop 1 only
                node.publish(null, 0, "x/2", "two" + i);
            }

            List<Received> toA = node.received(a);
            assertThat(toA).extracting(Received::text).containsExactly("one1", "two1", "one2", "two2");
            assertThat(toA).extracting(Received::frame).as("loop 0 has nothing of y: one frame").containsOnly(0);
            assertThat(node.received(b)).extracting(Received::text, Received::frame).as("y's updates end b's runs")
                    .containsExactly(tuple("one1", 0), tuple("two1", 1), tuple("one2", 1), tuple("two2", 2));
            assertThat(node.received(other)).extracting(Received::text, Received::frame)
                    .containsExactly(tuple("y1", 0), tuple("y2", 1));
        }
    }

    @Test
    void aNewTopicIsDefinedInTheFrameOfItsFirstUpdate() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(1);
            node.subscribe(sub, 1, "#");
            node.received(sub); // SUBSCRIBED
            node.publish(null, 0, "prices/eur", "1.08");
            List<Received> got = node.received(sub);
            assertThat(got).extracting(Received::type).containsExactly(MessageType.TOPIC, MessageType.UPDATE);
            assertThat(got).extracting(Received::frame).containsOnly(0);
            assertThat(got.get(1).alias()).isEqualTo(got.get(0).alias());
        }
    }

    @Test
    void thePublisherIsAckedWithTheSequenceItsUpdateGot() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session publisher = node.session(0);
            node.publish(publisher, 41, "t", "x");
            node.publish(publisher, 42, "t", "y");
            List<Received> acks = of(node.received(publisher), MessageType.PUBLISH_ACK);
            assertThat(acks).extracting(Received::id).containsExactly(41, 42);
            assertThat(acks).extracting(Received::sequence).containsExactly(1L, 2L);
        }
    }

    @Test
    void oneFrameIsSharedBySubscribersOnBothLoops() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session[] subs = {node.session(0), node.session(0), node.session(1), node.session(1)};
            for (Session s : subs) {
                node.subscribe(s, 7, "shared/#");
                node.received(s);
            }
            node.publish(null, 0, "shared/t", "same bytes");
            for (Session s : subs) {
                List<Received> got = node.received(s);
                assertThat(sequences(got)).as("session %s", s).containsExactly(1L);
                assertThat(of(got, MessageType.UPDATE).get(0).text()).isEqualTo("same bytes");
            }
            assertThat(node.counters.deliveries()).isEqualTo(subs.length * 2L); // SUBSCRIBED + update each
        }
    }

    @Test
    void aPublishThatWouldCreateATopicPastTheLimitIsRefusedAndOthersGoOn() {
        try (EmbeddedNode node = new EmbeddedNode("limits: {maxTopics: 2}")) {
            Session publisher = node.session(0);
            node.publish(publisher, 1, "one", "1");
            node.publish(publisher, 2, "two", "2");
            node.publish(publisher, 3, "three", "3");
            node.publish(publisher, 4, "one", "again");
            List<Received> got = node.received(publisher);
            List<Received> errors = of(got, MessageType.ERROR);
            assertThat(errors).hasSize(1);
            assertThat(errors.get(0).id()).isEqualTo(3);
            assertThat(errors.get(0).code()).isEqualTo(ErrorCode.TOO_MANY_TOPICS.code());
            assertThat(errors.get(0).text()).contains("'three'", "limits.maxTopics = 2");
            assertThat(of(got, MessageType.PUBLISH_ACK)).extracting(Received::id).containsExactly(1, 2, 4);
            assertThat(node.counters.topics()).isEqualTo(2);
        }
    }

    @Test
    void whileTheHeapIsPastItsMarkAfterAFullCollectionNewTopicsAreRefusedExistingOnesUpdatedAndAYoungCollectionUnderItLifts() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session publisher = node.session(0);
            node.publish(publisher, 1, "one", "1");
            node.heap.collected(70L << 20, false, "young"); // under 80 MB: nothing refused
            node.heap.collected(90L << 20, false, "young"); // past it, but a young collection counts garbage too
            node.publish(publisher, 2, "two", "2");
            node.heap.collected(90L << 20, true, "full");
            node.publish(publisher, 3, "three", "3");
            node.publish(publisher, 4, "one", "again");
            node.heap.collected(85L << 20, false, "young"); // still past: still refused
            node.publish(publisher, 5, "four", "4");
            node.heap.collected(40L << 20, false, "young");
            node.publish(publisher, 6, "five", "5");
            List<Received> got = node.received(publisher);
            List<Received> errors = of(got, MessageType.ERROR);
            assertThat(errors).extracting(Received::id).containsExactly(3, 5);
            assertThat(errors.get(0).code()).isEqualTo(ErrorCode.TOO_MANY_TOPICS.code());
            assertThat(errors.get(0).text()).contains("'three'", "a new topic", "90 MB in use",
                    "limits.heapRefusePercent = 80% of its 100 MB", "not applied");
            assertThat(of(got, MessageType.PUBLISH_ACK)).extracting(Received::id).containsExactly(1, 2, 4, 6);
            assertThat(node.counters.topics()).isEqualTo(3);
            assertThat(node.counters.heapRefusals()).isEqualTo(2);
        }
    }

    @Test
    void aSubscriberToAnExistingTopicGetsItsTopicAndSnapshotThenSubscribed() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "fx/eur", "v1");
            node.publish(null, 0, "fx/eur", "v2");
            node.publish(null, 0, "fx/gbp", "g1");
            node.publish(null, 0, "eq/aapl", "not matched");
            Session sub = node.session(1);
            node.subscribe(sub, 9, "fx/+");
            List<Received> got = node.received(sub);
            assertThat(of(got, MessageType.TOPIC)).extracting(Received::text).containsExactlyInAnyOrder("fx/eur", "fx/gbp");
            List<Received> snapshots = of(got, MessageType.SNAPSHOT);
            assertThat(snapshots).extracting(Received::text).containsExactlyInAnyOrder("v2", "g1");
            assertThat(snapshots).extracting(Received::id).containsOnly(9);
            assertThat(snapshots).extracting(Received::flags).containsOnly(0);
            Received subscribed = got.get(got.size() - 1);
            assertThat(subscribed.type()).isEqualTo(MessageType.SUBSCRIBED);
            assertThat(subscribed.id()).isEqualTo(9);
            assertThat(subscribed.sequence()).as("matched topics").isEqualTo(2);
        }
    }

    @Test
    void aSecondSubscriptionToATopicAlreadyReceivedGetsOnlyASnapshot() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "t", "v");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            node.received(sub);
            node.subscribe(sub, 2, "#");
            List<Received> got = node.received(sub);
            assertThat(got).extracting(Received::type).containsExactly(MessageType.SNAPSHOT, MessageType.SUBSCRIBED);
            assertThat(got.get(0).id()).isEqualTo(2);
            node.publish(null, 0, "t", "w");
            assertThat(sequences(node.received(sub))).as("one delivery though two subscriptions match").containsExactly(2L);
        }
    }

    @Test
    void aResumeWithinHistoryReplaysExactlyTheMissedUpdates() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            for (int i = 1; i <= 6; i++) {
                node.publish(null, 0, "t", "v" + i);
            }
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t", Map.of("t", 3L));
            List<Received> got = node.received(sub);
            assertThat(of(got, MessageType.SNAPSHOT)).isEmpty();
            assertThat(sequences(got)).containsExactly(4L, 5L, 6L);
            assertThat(of(got, MessageType.UPDATE)).extracting(Received::text).containsExactly("v4", "v5", "v6");
        }
    }

    @Test
    void aResumeAtTheLatestSequenceGetsNothingButTheTopic() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "t", "v1");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t", Map.of("t", 1L));
            assertThat(node.received(sub)).extracting(Received::type)
                    .containsExactly(MessageType.TOPIC, MessageType.SUBSCRIBED);
        }
    }

    @Test
    void aResumeOlderThanTheHistoryGetsTheValueAsASnapshotAfterAGap() {
        try (EmbeddedNode node = new EmbeddedNode("history: {length: 4}")) {
            for (int i = 1; i <= 10; i++) {
                node.publish(null, 0, "t", "v" + i);
            }
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t", Map.of("t", 5L));
            List<Received> got = node.received(sub);
            assertThat(sequences(got)).isEmpty();
            List<Received> snapshots = of(got, MessageType.SNAPSHOT);
            assertThat(snapshots).hasSize(1);
            assertThat(snapshots.get(0).flags()).isEqualTo(UpdateFlags.GAP);
            assertThat(snapshots.get(0).sequence()).isEqualTo(10);
            assertThat(snapshots.get(0).text()).isEqualTo("v10");
            assertThat(snapshots.get(0).id()).as("a gap snapshot belongs to no listener").isZero();

            Session edge = node.session(0);
            node.subscribe(edge, 1, "t", Map.of("t", 6L)); // 7..10 are the four kept
            assertThat(sequences(node.received(edge))).containsExactly(7L, 8L, 9L, 10L);
        }
    }

    @Test
    void withoutTheCacheAResumeThatMissedUpdatesIsToldOfTheGapWithNoValue() {
        try (EmbeddedNode node = new EmbeddedNode("features: {lastValueCache: false}")) {
            node.publish(null, 0, "t", "v1");
            node.publish(null, 0, "t", "v2");
            Session fresh = node.session(0);
            node.subscribe(fresh, 1, "t");
            assertThat(of(node.received(fresh), MessageType.SNAPSHOT)).as("no value kept, none sent").isEmpty();
            Session resumed = node.session(0);
            node.subscribe(resumed, 1, "t", Map.of("t", 1L));
            List<Received> snapshots = of(node.received(resumed), MessageType.SNAPSHOT);
            assertThat(snapshots).hasSize(1);
            assertThat(snapshots.get(0).flags()).isEqualTo(UpdateFlags.GAP | UpdateFlags.NO_VALUE);
            assertThat(snapshots.get(0).sequence()).isEqualTo(2);
            assertThat(snapshots.get(0).bytes()).isEmpty();
        }
    }

    @Test
    void aNewTopicReachesEverySessionWhoseSelectorMatchesItOnce() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session plus = node.session(0);
            Session hash = node.session(1);
            Session both = node.session(1);
            Session other = node.session(0);
            node.subscribe(plus, 1, "a/+/c");
            node.subscribe(hash, 1, "a/#");
            node.subscribe(both, 1, "a/+/c");
            node.subscribe(both, 2, "a/b/#");
            node.subscribe(other, 1, "a/+/d");
            for (Session s : List.of(plus, hash, both, other)) {
                node.received(s);
            }
            node.publish(null, 0, "a/b/c", "x");
            assertThat(sequences(node.received(plus))).containsExactly(1L);
            assertThat(sequences(node.received(hash))).containsExactly(1L);
            assertThat(sequences(node.received(both))).containsExactly(1L);
            assertThat(node.received(other)).isEmpty();
        }
    }

    @Test
    void aSessionOnlyReceivesTopicsItsPermissionsLetItRead() {
        try (EmbeddedNode node = new EmbeddedNode("security: {anonymousRoles: [], roles: [{name: reader, subscribe: [\"public/#\"], publish: []}]}")) {
            Session limited = node.session(0);
            limited.permissions = Permissions.of(node.config().security(), List.of("reader"), "limited",
                    node.config().limits().pathLimits());
            node.publish(null, 0, "secret/x", "s");
            node.subscribe(limited, 1, "#");
            assertThat(of(node.received(limited), MessageType.SUBSCRIBED).get(0).sequence()).isZero();
            node.publish(null, 0, "public/y", "p");
            node.publish(null, 0, "secret/z", "s");
            List<Received> got = node.received(limited);
            assertThat(of(got, MessageType.TOPIC)).extracting(Received::text).containsExactly("public/y");
        }
    }

    @Test
    void unsubscribingStopsOnlyTopicsNoOtherSubscriptionStillMatches() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "a/#");
            node.subscribe(sub, 2, "a/keep");
            node.publish(null, 0, "a/keep", "1");
            node.publish(null, 0, "a/drop", "1");
            node.received(sub);
            node.unsubscribe(sub, 1);
            node.publish(null, 0, "a/keep", "2");
            node.publish(null, 0, "a/drop", "2");
            node.publish(null, 0, "a/new", "1");
            List<Received> got = node.received(sub);
            assertThat(got).extracting(Received::type).containsExactly(MessageType.UPDATE);
            assertThat(got.get(0).text()).isEqualTo("2");
        }
    }

    @Test
    void aClosedSessionReceivesNothingMoreAndItsSubscriptionsAreGone() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session gone = node.session(0);
            Session stays = node.session(1);
            node.subscribe(gone, 1, "#");
            node.subscribe(stays, 1, "#");
            node.publish(null, 0, "t", "1");
            node.received(gone);
            node.received(stays);
            node.closeSession(gone);
            node.publish(null, 0, "t", "2");
            node.publish(null, 0, "u", "1");
            assertThat(node.received(gone)).isEmpty();
            assertThat(sequences(node.received(stays))).containsExactly(2L, 1L);
            assertThat(gone.subscriptions).isEmpty();
        }
    }

    @Test
    void withDeltasOnASmallerDeltaIsSentThatRebuildsTheValue() throws DeltaFormatException {
        try (EmbeddedNode node = new EmbeddedNode("features: {deltas: true}")) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            String v1 = "{\"symbol\":\"EURUSD\",\"bid\":1.08412,\"ask\":1.08415,\"venue\":\"XLON\",\"n\":1}";
            String v2 = v1.replace("1.08415", "1.08416");
            node.publish(null, 0, "t", v1);
            node.publish(null, 0, "t", v2);
            List<Received> updates = of(node.received(sub), MessageType.UPDATE);
            assertThat(updates.get(0).flags()).isZero();
            Received delta = updates.get(1);
            assertThat(delta.flags()).isEqualTo(UpdateFlags.DELTA);
            assertThat(delta.bytes().length).isLessThan(v2.length());
            ByteBuf rebuilt = Unpooled.buffer();
            try {
                Delta.apply(Unpooled.copiedBuffer(v1, StandardCharsets.UTF_8), Unpooled.wrappedBuffer(delta.bytes()),
                        rebuilt);
                assertThat(rebuilt.toString(StandardCharsets.UTF_8)).isEqualTo(v2);
            } finally {
                rebuilt.release();
            }
            Session late = node.session(1);
            node.subscribe(late, 1, "t");
            assertThat(of(node.received(late), MessageType.SNAPSHOT).get(0).text())
                    .as("a snapshot gives the full value, not the delta").isEqualTo(v2);
        }
    }

    @Test
    void aRepublishOfAnAppliedPublishIsAnsweredWithItsSequenceAndNotAppliedAgain() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session publisher = node.session(0);
            publisher.publisherId = 77;
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t");
            node.publish(publisher, 5, "t", "once");
            node.republish(publisher, 5, "t", "once");
            node.republish(publisher, 6, "t", "first send lost");
            node.republish(publisher, 5, "other", "conflict");
            List<Received> got = node.received(publisher);
            assertThat(of(got, MessageType.PUBLISH_ACK)).extracting(Received::id, Received::sequence)
                    .containsExactly(tuple(5, 1L), tuple(5, 1L),
                            tuple(6, 2L));
            assertThat(of(got, MessageType.ERROR)).extracting(Received::code)
                    .containsExactly(ErrorCode.REPUBLISH_CONFLICT.code());
            assertThat(sequences(node.received(sub))).containsExactly(1L, 2L);
        }
    }

    @Test
    void aClusterNodeAppliesTheOwnersSequencesOnceAndTreatsAJumpAsAGap() {
        try (EmbeddedNode node = new EmbeddedNode("{}", true)) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            node.apply("t", 1, "a");
            node.apply("t", 2, "b");
            node.apply("t", 2, "b again");
            node.apply("t", 7, "after a snapshot");
            assertThat(sequences(node.received(sub))).containsExactly(1L, 2L, 7L);
            Session resumed = node.session(1);
            node.subscribe(resumed, 1, "t", Map.of("t", 2L));
            List<Received> got = node.received(resumed);
            assertThat(of(got, MessageType.SNAPSHOT)).as("the history restarted at 7: no replay of 3..6")
                    .extracting(Received::flags).containsExactly(UpdateFlags.GAP);
        }
    }

    @Test
    void aClusterAckReachesItsPublisherAfterTheUpdateBeforeItAndNotOnceThePublisherIsGone() {
        try (EmbeddedNode node = new EmbeddedNode("{}", true)) {
            Session publisher = node.session(1);
            node.subscribe(publisher, 1, "t");
            node.received(publisher);
            node.apply("t", 1, "a");
            node.clusterAck(publisher, 41, 1);
            node.apply("t", 2, "b");
            node.clusterAck(publisher, 42, 2);
            assertThat(node.received(publisher)).filteredOn(m -> m.type() != MessageType.TOPIC)
                    .extracting(Received::type, Received::sequence)
                    .containsExactly(tuple(MessageType.UPDATE, 1L), tuple(MessageType.PUBLISH_ACK, 1L),
                            tuple(MessageType.UPDATE, 2L), tuple(MessageType.PUBLISH_ACK, 2L));

            Session gone = node.session(0);
            node.subscribe(gone, 1, "t");
            node.received(gone);
            gone.channel.close();
            node.closeSession(gone);
            node.apply("t", 3, "c");
            node.clusterAck(gone, 43, 3); // answered after its session closed: nothing is written
            assertThat(node.received(gone)).isEmpty();
            assertThat(sequences(node.received(publisher))).containsExactly(3L);
        }
    }

    @Test
    void aTopicRecreatedAfterARestartReachesAResumedSessionAsASnapshotAfterAGap() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t", Map.of("t", 40L)); // seen up to 40 on the server before a restart
            node.received(sub);
            node.publish(null, 0, "t", "fresh");
            List<Received> got = node.received(sub);
            assertThat(sequences(got)).as("an UPDATE 1 would look like a duplicate of 1").isEmpty();
            List<Received> snapshots = of(got, MessageType.SNAPSHOT);
            assertThat(snapshots).extracting(Received::flags).containsExactly(UpdateFlags.GAP);
            assertThat(snapshots.get(0).text()).isEqualTo("fresh");
            node.publish(null, 0, "t", "next");
            assertThat(sequences(node.received(sub))).containsExactly(2L);
        }
    }

    @Test
    void aReloadTurningTheCacheOffDropsValuesFromTheNextSubscribeOn() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "t", "kept");
            node.reloadFeatures("features: {lastValueCache: false}");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            assertThat(of(node.received(sub), MessageType.SNAPSHOT)).isEmpty();
            node.reloadFeatures("features: {lastValueCache: true}");
            node.publish(null, 0, "t", "new");
            Session late = node.session(0);
            node.subscribe(late, 1, "t");
            assertThat(of(node.received(late), MessageType.SNAPSHOT)).extracting(Received::text).containsExactly("new");
        }
    }

    @Test
    void compressedSessionsGetTheDeflatedFrameAndOthersThePlainOne() {
        try (EmbeddedNode node = new EmbeddedNode("features: {compression: true, compressionMinBytes: 16}")) {
            Session deflating = node.session(0, true);
            Session plain = node.session(1, false);
            node.subscribe(deflating, 1, "t");
            node.subscribe(plain, 1, "t");
            node.received(deflating);
            node.received(plain);
            String value = "abcdefgh".repeat(40);
            node.publish(null, 0, "t", value);
            List<Received> a = of(node.received(deflating), MessageType.UPDATE);
            List<Received> b = of(node.received(plain), MessageType.UPDATE);
            assertThat(a).extracting(Received::compressed).containsExactly(true);
            assertThat(b).extracting(Received::compressed).containsExactly(false);
            assertThat(a.get(0).text()).isEqualTo(value).isEqualTo(b.get(0).text());
        }
    }
}
