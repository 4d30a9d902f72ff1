package io.ringcast.server.internal;

import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Who receives what, at the edges {@link TopicSequencerTest} leaves: resume positions ahead of
 * the node or for topics it lacks, topics a resuming subscription does not list, single node
 * against cluster node, and unsubscribes of what is not open.
 */
@Timeout(10)
class SubscriptionsTest {

    @Test
    void aClusterNodeKeepsNoResumePositionForATopicItDoesNotHave() {
        try (EmbeddedNode node = new EmbeddedNode("{}", true)) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t", Map.of("t", 40L)); // seen on another node, not applied here yet
            assertThat(sub.subscriptions.get(1).missing()).isEmpty();
            assertThat(sub.subscribeBytes).as("nothing kept once answered").hasValue(0);
            node.received(sub);

            node.apply("t", 41, "next");
            assertThat(node.received(sub)).as("the owner's numbering carries on the client's stream: no gap")
                    .extracting(Received::type, Received::sequence)
                    .containsExactly(tuple(MessageType.TOPIC, 0L), tuple(MessageType.UPDATE, 41L));
        }
    }

    @Test
    void aSingleNodeKeepsAResumePositionOnlyForTopicsItDoesNotHave() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "a/here", "v");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "a/#", Map.of("a/here", 1L, "a/gone", 7L));
            assertThat(sub.subscriptions.get(1).missing()).containsExactly(Map.entry("a/gone", 7L));
            assertThat(sub.subscribeBytes).as("what the kept position is charged").hasValue(
                    SubscribeMemory.resumeEntryBytes("a/gone"));

            node.publish(null, 0, "a/gone", "back");
            assertThat(sub.subscriptions.get(1).missing()).as("used once, when the topic came back").isEmpty();
            assertThat(sub.subscribeBytes).as("given back with it").hasValue(0);
            assertThat(node.subscribeMemory.total()).isZero();
        }
    }

    @Test
    void resumePositionsKeptForMissingTopicsGoWithTheirSubscription() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(0);
            Map<String, Long> resume = new HashMap<>();
            for (int i = 0; i < 1_000; i++) {
                resume.put("gone/" + i, 5L);
            }
            node.subscribe(sub, 1, "gone/#", resume);
            node.subscribe(sub, 2, "other/#", Map.of("other/gone", 3L));
            assertThat(sub.subscribeBytes.get()).as("a thousand and one positions kept")
                    .isEqualTo(SubscribeMemory.requestBytes(resume) - SubscribeMemory.REQUEST_BYTES
                            + SubscribeMemory.resumeEntryBytes("other/gone"));

            node.unsubscribe(sub, 1);
            assertThat(sub.subscribeBytes.get()).as("the closed subscription's positions given back")
                    .isEqualTo(SubscribeMemory.resumeEntryBytes("other/gone"));

            node.publish(null, 0, "gone/7", "back");
            node.received(sub);
            node.publish(null, 0, "gone/7", "again");
            assertThat(node.received(sub)).as("a position forgotten with its subscription resets nothing").isEmpty();

            node.closeSession(sub);
            assertThat(sub.subscribeBytes).as("all given back at close").hasValue(0);
            assertThat(node.subscribeMemory.total()).isZero();
        }
    }

    @Test
    void aClusterClientAheadOfTheNodeGetsNoGapAndTheUpdatesThatFollow() {
        try (EmbeddedNode node = new EmbeddedNode("{}", true)) {
            node.apply("t", 1, "a");
            node.apply("t", 2, "b");
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t", Map.of("t", 3L)); // this node is catching up with what the client saw
            assertThat(node.received(sub)).extracting(Received::type)
                    .containsExactly(MessageType.TOPIC, MessageType.SUBSCRIBED);

            node.apply("t", 3, "c");
            node.apply("t", 4, "d");
            assertThat(node.received(sub)).extracting(Received::sequence).containsExactly(3L, 4L);
        }
    }

    @Test
    void aSingleNodeClientAheadOfTheNodeGetsTheValueAfterAGap() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "t", "v1");
            node.publish(null, 0, "t", "v2");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t", Map.of("t", 5L)); // numbered higher by a server before a restart

            List<Received> got = node.received(sub);
            assertThat(got).extracting(Received::type)
                    .containsExactly(MessageType.TOPIC, MessageType.SNAPSHOT, MessageType.SUBSCRIBED);
            assertThat(got.get(1)).extracting(Received::flags, Received::sequence, Received::text)
                    .containsExactly(UpdateFlags.GAP, 2L, "v2");
        }
    }

    // ------------------------------------------------------------------ topics a resume list does not name

    /**
     * What a subscription to {@code r/#} resumed with {@code r/known} at #1 receives when
     * {@code r/new} was created with 3 updates while the client was away.
     */
    private static List<Received> resumedWithATopicCreatedWhileAway(EmbeddedNode node) {
        node.publish(null, 0, "r/known", "k1");
        for (int i = 1; i <= 3; i++) {
            node.publish(null, 0, "r/new", "v" + i);
        }
        Session sub = node.session(0);
        node.subscribe(sub, 1, "r/#", Map.of("r/known", 1L));
        return node.received(sub);
    }

    @Test
    void aResumingSubscriptionIsReplayedATopicItDoesNotListFromItsFirstUpdate() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            assertThat(resumedWithATopicCreatedWhileAway(node))
                    .extracting(Received::type, Received::sequence, Received::flags)
                    .containsExactly(tuple(MessageType.TOPIC, 0L, 0), tuple(MessageType.TOPIC, 0L, 0),
                            tuple(MessageType.UPDATE, 1L, 0), tuple(MessageType.UPDATE, 2L, 0),
                            tuple(MessageType.UPDATE, 3L, 0), tuple(MessageType.SUBSCRIBED, 2L, 0)); // 2 matched
        }
    }

    @Test
    void aResumingSubscriptionGetsASnapshotAfterAGapForAnUnlistedTopicWhoseHistoryNoLongerReachesItsStart() {
        try (EmbeddedNode node = new EmbeddedNode("history: {length: 2}")) {
            assertThat(resumedWithATopicCreatedWhileAway(node)).filteredOn(m -> m.is(MessageType.SNAPSHOT))
                    .extracting(Received::id, Received::sequence, Received::flags, Received::text)
                    .containsExactly(tuple(0, 3L, UpdateFlags.GAP, "v3"));
        }
    }

    @Test
    void aResumingSubscriptionIsToldOfAnUnlistedTopicThatKeepsNoValueAsAGapWithoutValue() {
        try (EmbeddedNode node = new EmbeddedNode("features: {overrides: [{selector: \"r/events/#\", lastValueCache: false}]}")) {
            node.publish(null, 0, "r/known", "k1");
            node.publish(null, 0, "r/events/a", "e1");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "r/#", Map.of("r/known", 1L));

            assertThat(node.received(sub)).filteredOn(m -> m.is(MessageType.SNAPSHOT))
                    .extracting(Received::id, Received::sequence, Received::flags, Received::text)
                    .containsExactly(tuple(0, 1L, UpdateFlags.GAP | UpdateFlags.NO_VALUE, ""));
        }
    }

    @Test
    void aFirstSubscribeStillGetsPlainSnapshotsOfEveryTopic() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "r/a", "a1");
            node.publish(null, 0, "r/a", "a2");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "r/#");

            assertThat(node.received(sub)).filteredOn(m -> !m.is(MessageType.TOPIC))
                    .extracting(Received::type, Received::id, Received::sequence, Received::flags)
                    .containsExactly(tuple(MessageType.SNAPSHOT, 1, 2L, 0), tuple(MessageType.SUBSCRIBED, 1, 1L, 0));
        }
    }

    @Test
    void aResumingSubscriptionAddsNothingForAnUnlistedTopicTheSessionAlreadyReceivesThroughAnother() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "r/known", "k1");
            node.publish(null, 0, "r/new", "v1");
            node.publish(null, 0, "r/new", "v2");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "r/new", Map.of("r/known", 1L)); // lists nothing it matches: resumed all the same
            assertThat(node.received(sub)).extracting(Received::type, Received::sequence).containsExactly(
                    tuple(MessageType.TOPIC, 0L), tuple(MessageType.UPDATE, 1L), tuple(MessageType.UPDATE, 2L),
                    tuple(MessageType.SUBSCRIBED, 1L));

            node.subscribe(sub, 2, "r/#", Map.of("r/known", 1L));
            assertThat(node.received(sub)).as("the replay reached the session already; r/known is up to date")
                    .extracting(Received::type).containsExactly(MessageType.TOPIC, MessageType.SUBSCRIBED);
        }
    }

    /** Every node holds the same history under the same sequences, so a client failing over is treated alike. */
    @Test
    void aClusterNodeReplaysAnUnlistedTopicFromItsFirstUpdateLikeTheNodeTheClientLeft() {
        try (EmbeddedNode node = new EmbeddedNode("{}", true)) {
            node.apply("r/known", 1, "k1");
            for (int i = 1; i <= 3; i++) {
                node.apply("r/new", i, "v" + i);
            }
            Session sub = node.session(1);
            node.subscribe(sub, 1, "r/#", Map.of("r/known", 1L));

            assertThat(node.received(sub)).filteredOn(m -> m.is(MessageType.UPDATE) || m.is(MessageType.SNAPSHOT))
                    .extracting(Received::type, Received::sequence, Received::text)
                    .containsExactly(tuple(MessageType.UPDATE, 1L, "v1"), tuple(MessageType.UPDATE, 2L, "v2"),
                            tuple(MessageType.UPDATE, 3L, "v3"));
        }
    }

    @Test
    void unsubscribingAnIdThatIsNotOpenChangesNothing() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            node.received(sub);
            node.unsubscribe(sub, 99);
            node.unsubscribe(sub, 1);
            node.unsubscribe(sub, 1);
            node.subscribe(sub, 2, "t");
            node.received(sub);
            node.unsubscribe(sub, 1); // closed already: must not take away what subscription 2 receives

            node.publish(null, 0, "t", "v");
            assertThat(node.received(sub)).extracting(Received::type).containsExactly(MessageType.TOPIC, MessageType.UPDATE);
            assertThat(sub.subscriptions).containsOnlyKeys(2);
        }
    }

    @Test
    void aClosedSessionLeavesEveryTopicOfItsOverlappingSubscriptionsAndTheOthersKeepTheirs() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "a/b", "1");
            Session gone = node.session(0);
            Session stays = node.session(0);
            node.subscribe(gone, 1, "a/#");
            node.subscribe(gone, 2, "a/b");
            node.subscribe(gone, 3, "+/c");
            node.subscribe(stays, 1, "#");
            node.publish(null, 0, "a/c", "1");
            node.publish(null, 0, "x/c", "1");
            node.received(gone);
            node.received(stays);

            node.closeSession(gone);
            for (String path : new String[] {"a/b", "a/c", "x/c"}) {
                node.publish(null, 0, path, "2");
            }

            assertThat(node.received(gone)).isEmpty();
            assertThat(node.received(stays)).extracting(Received::sequence).containsExactly(2L, 2L, 2L);
        }
    }

    @Test
    void aSessionThatUnsubscribedAndSubscribesAgainIsToldTheTopicAndValueAgain() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "t", "v1");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            node.received(sub);
            node.unsubscribe(sub, 1);
            node.publish(null, 0, "t", "v2");
            assertThat(node.received(sub)).as("no longer a subscriber of t").isEmpty();

            node.subscribe(sub, 2, "t");
            assertThat(node.received(sub)).extracting(Received::type, Received::id).containsExactly(
                    tuple(MessageType.TOPIC, 0), tuple(MessageType.SNAPSHOT, 2), tuple(MessageType.SUBSCRIBED, 2));
            node.publish(null, 0, "t", "v3");
            assertThat(node.received(sub)).extracting(Received::sequence).containsExactly(3L);
        }
    }
}
