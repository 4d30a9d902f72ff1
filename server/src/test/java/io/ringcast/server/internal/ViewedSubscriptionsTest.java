package io.ringcast.server.internal;

import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.server.internal.ReceivedFrames.Received;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Subscriptions through views ({@code fields}, {@code filter}, {@code maxRate}): what the sequencer
 * and the pollers send each member, on the node's real core ({@link EmbeddedNode}). Lines read as
 * {@link Received#line}: {@code @n} is the view's id.
 */
@Timeout(10)
class ViewedSubscriptionsTest {
    private static final SubscribeOptions BID = SubscribeOptions.builder().fields("bid").build();
    private static final SubscribeOptions TIGHT = SubscribeOptions.builder().filter("spread < 5").build();

    private static List<String> lines(List<Received> received) {
        return received.stream().map(Received::line).toList();
    }

    @Test
    void aProjectionSendsOnlyItsFieldsAndNothingWhenNoneOfThemChanged() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "fx/eur", "{\"bid\":1,\"ask\":2}");
            Session sub = node.session(0);
            node.subscribe(sub, 7, "fx/#", BID);
            int view = viewOf(node, BID).id;
            assertThat(lines(node.received(sub))).containsExactly("VIEW 7 @" + view, "TOPIC 1 fx/eur",
                    "SNAPSHOT 7 1 #1 VIEWED @" + view + " {\"bid\":1}", "SUBSCRIBED 7 1");

            node.publish(null, 0, "fx/eur", "{\"bid\":1,\"ask\":3}");
            assertThat(node.received(sub)).as("only ask changed").isEmpty();
            node.publish(null, 0, "fx/eur", "{\"ask\":3,\"bid\":1.5}");
            assertThat(lines(node.received(sub))).containsExactly("UPDATE 1 #3 VIEWED @" + view + " {\"bid\":1.5}");
        }
    }

    @Test
    void aValueThatStopsPassingTheFilterSendsOneUnmatchedAndALaterPassingOneSendsItAgain() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(1);
            node.subscribe(sub, 3, "q/#", TIGHT);
            assertThat(lines(node.received(sub))).containsExactly("VIEW 3 @1", "SUBSCRIBED 3 0");

            node.publish(null, 0, "q/a", "{\"spread\":9}");
            assertThat(lines(node.received(sub))).as("made failing: its definition only").containsExactly("TOPIC 1 q/a");
            node.publish(null, 0, "q/a", "{\"spread\":2}");
            node.publish(null, 0, "q/a", "{\"spread\":3}");
            node.publish(null, 0, "q/a", "{\"spread\":7}");
            node.publish(null, 0, "q/a", "{\"spread\":8}");
            node.publish(null, 0, "q/a", "{\"spread\":1}");
            assertThat(lines(node.received(sub))).containsExactly("UPDATE 1 #2 VIEWED @1 {\"spread\":2}",
                    "UPDATE 1 #3 VIEWED @1 {\"spread\":3}", "UNMATCHED @1 1 #4", "UPDATE 1 #6 VIEWED @1 {\"spread\":1}");
        }
    }

    @Test
    void aSessionWithAPlainAndAViewedSubscriptionOnOneTopicGetsBothStreamsAndOneDefinition() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "fx/eur");
            node.subscribe(sub, 2, "fx/#", BID);
            node.received(sub);

            node.publish(null, 0, "fx/eur", "{\"bid\":1,\"ask\":2}");
            assertThat(lines(node.received(sub))).containsExactly("TOPIC 1 fx/eur", "UPDATE 1 #1 {\"bid\":1,\"ask\":2}",
                    "TOPIC 1 fx/eur", "UPDATE 1 #1 VIEWED @1 {\"bid\":1}");
            node.publish(null, 0, "fx/eur", "{\"bid\":1,\"ask\":5}");
            assertThat(lines(node.received(sub))).containsExactly("UPDATE 1 #2 {\"bid\":1,\"ask\":5}");

            node.unsubscribe(sub, 1);
            node.publish(null, 0, "fx/eur", "{\"bid\":2,\"ask\":5}");
            assertThat(lines(node.received(sub))).containsExactly("UPDATE 1 #3 VIEWED @1 {\"bid\":2}");
        }
    }

    @Test
    void membersOfOneViewOnDifferentSessionsShareOneViewOfTheTopicAndEachGetsItsUpdates() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "fx/eur", "{\"bid\":1}");
            Session a = node.session(0);
            Session b = node.session(1);
            Session c = node.session(1);
            node.subscribe(a, 1, "fx/#", BID);
            node.subscribe(b, 1, "fx/eur", BID);
            node.subscribe(c, 5, "fx/#", TIGHT);
            Topic topic = topic(node, "fx/eur");
            assertThat(topic.viewCount()).isEqualTo(2);
            assertThat(topic.viewOf(viewOf(node, BID)).subscribers.size()).isEqualTo(2);
            assertThat(node.views.size()).isEqualTo(2);
            for (Session s : List.of(a, b, c)) {
                node.received(s);
            }

            node.publish(null, 0, "fx/eur", "{\"bid\":2,\"spread\":1}");
            assertThat(lines(node.received(a))).containsExactly("UPDATE 1 #2 VIEWED @1 {\"bid\":2}");
            assertThat(lines(node.received(b))).containsExactly("UPDATE 1 #2 VIEWED @1 {\"bid\":2}");
            assertThat(lines(node.received(c))).containsExactly("UPDATE 1 #2 VIEWED @2 {\"bid\":2,\"spread\":1}");
        }
    }

    @Test
    void theLastSubscriptionOfAViewToCloseDropsItFromItsTopicsAndForgetsIt() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "fx/eur", "{\"bid\":1}");
            Session a = node.session(0);
            Session b = node.session(1);
            node.subscribe(a, 1, "fx/#", BID);
            node.subscribe(a, 2, "fx/eur", BID);
            node.subscribe(b, 1, "fx/#", BID);
            Topic topic = topic(node, "fx/eur");

            node.unsubscribe(a, 1);
            assertThat(topic.view(0).subscribers.size()).as("a's other subscription of the view still matches")
                    .isEqualTo(2);
            node.unsubscribe(a, 2);
            assertThat(topic.view(0).subscribers.size()).isEqualTo(1);
            node.closeSession(b);
            assertThat(topic.viewCount()).isZero();
            assertThat(node.views.size()).isZero();
        }
    }

    @Test
    void maxRateHoldsUpdatesWithinThePeriodAndSendsTheNewestConflatedWhenItsTimeComes() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            SubscribeOptions fourPerSecond = SubscribeOptions.builder().maxRate(4).build();
            Session sub = node.session(0);
            node.subscribe(sub, 1, "p", fourPerSecond);
            node.received(sub);

            node.publish(null, 0, "p", "1");
            node.advanceNanos(100_000_000);
            node.publish(null, 0, "p", "2");
            node.publish(null, 0, "p", "3");
            assertThat(lines(node.received(sub))).as("the first at once, the others held").containsExactly(
                    "TOPIC 1 p", "UPDATE 1 #1 VIEWED @1 1");
            assertThat(node.heldDeadlines).as("armed for the end of the period, once").hasSize(1);

            node.advanceNanos(149_999_999);
            node.flushHeld();
            assertThat(node.received(sub)).as("not a nanosecond early").isEmpty();
            node.advanceNanos(1);
            node.flushHeld();
            assertThat(lines(node.received(sub))).containsExactly("UPDATE 1 #3 CONFLATED|VIEWED @1 3");

            node.advanceNanos(1_000_000_000);
            node.publish(null, 0, "p", "4");
            assertThat(lines(node.received(sub))).as("after a quiet period: at once").containsExactly(
                    "UPDATE 1 #4 VIEWED @1 4");
        }
    }

    @Test
    void aHeldValueThatStopsPassingTheFilterIsNeverSent() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            SubscribeOptions throttledTight = SubscribeOptions.builder().maxRate(1).filter("spread < 5").build();
            Session sub = node.session(0);
            node.subscribe(sub, 1, "q", throttledTight);
            node.received(sub);
            node.publish(null, 0, "q", "{\"spread\":1}");
            node.publish(null, 0, "q", "{\"spread\":2}");
            node.publish(null, 0, "q", "{\"spread\":9}");
            node.advanceNanos(2_000_000_000);
            node.flushHeld();
            assertThat(lines(node.received(sub))).containsExactly("TOPIC 1 q", "UPDATE 1 #1 VIEWED @1 {\"spread\":1}",
                    "UNMATCHED @1 1 #3");
        }
    }

    /** Members already told {@code UNMATCHED} are not told again when a value they were never sent stops passing. */
    @Test
    void aValueHeldAndDroppedUnseenAfterAnUnmatchedSendsNoSecondUnmatched() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            SubscribeOptions throttledTight = SubscribeOptions.builder().maxRate(1).filter("spread < 5").build();
            Session sub = node.session(0);
            node.subscribe(sub, 1, "f", throttledTight);
            node.received(sub);
            node.publish(null, 0, "f", "{\"spread\":1}");
            node.publish(null, 0, "f", "{\"spread\":9}");
            node.publish(null, 0, "f", "{\"spread\":2}"); // held: within the period
            node.publish(null, 0, "f", "{\"spread\":9}"); // and dropped unseen
            node.publish(null, 0, "f", "{\"spread\":3}");
            node.advanceNanos(1_000_000_000);
            node.flushHeld();
            assertThat(lines(node.received(sub))).containsExactly("TOPIC 1 f", "UPDATE 1 #1 VIEWED @1 {\"spread\":1}",
                    "UNMATCHED @1 1 #2", "UPDATE 1 #5 CONFLATED|VIEWED @1 {\"spread\":3}");
        }
    }

    /**
     * A member joining while the view holds a value its members were not sent (they were last told
     * {@code UNMATCHED}) is told what they are: the held value goes to them first, so that a later
     * {@code UNMATCHED} reaches every member that was shown a value.
     */
    @Test
    void aMemberJoiningWhileAValueIsHeldUnseenIsToldWhatTheOthersAreAndBothHearTheNextUnmatched() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            SubscribeOptions throttledTight = SubscribeOptions.builder().maxRate(1).filter("spread < 5").build();
            Session first = node.session(0);
            Session joiner = node.session(0);
            node.subscribe(first, 1, "j", throttledTight);
            node.received(first);
            node.publish(null, 0, "j", "{\"spread\":1}");
            node.publish(null, 0, "j", "{\"spread\":9}");
            node.publish(null, 0, "j", "{\"spread\":2}"); // held, unseen
            node.subscribe(joiner, 1, "j", throttledTight);
            node.publish(null, 0, "j", "{\"spread\":9}");
            assertThat(lines(node.received(first))).containsExactly("TOPIC 1 j", "UPDATE 1 #1 VIEWED @1 {\"spread\":1}",
                    "UNMATCHED @1 1 #2", "UPDATE 1 #3 CONFLATED|VIEWED @1 {\"spread\":2}", "UNMATCHED @1 1 #4");
            assertThat(lines(node.received(joiner))).filteredOn(l -> l.startsWith("SNAPSHOT") || l.startsWith("UNMATCHED"))
                    .containsExactly("SNAPSHOT 1 1 #3 VIEWED @1 {\"spread\":2}", "UNMATCHED @1 1 #4");
        }
    }

    @Test
    void aResumeThroughAViewSendsTheNewestValueOnlyWhenItIsNewerAndUnmatchedWhenItNoLongerPasses() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "q/a", "{\"spread\":1}");
            node.publish(null, 0, "q/a", "{\"spread\":2}");
            node.publish(null, 0, "q/b", "{\"spread\":3}");
            node.publish(null, 0, "q/c", "{\"spread\":1}");
            node.publish(null, 0, "q/c", "{\"spread\":9}");
            Session sub = node.session(0);
            node.subscribe(sub, 4, "q/#", Map.of("q/a", 1L, "q/b", 1L, "q/c", 1L), TIGHT);

            assertThat(lines(node.received(sub))).containsExactly("VIEW 4 @1", "TOPIC 1 q/a",
                    "SNAPSHOT 4 1 #2 VIEWED @1 {\"spread\":2}", "TOPIC 2 q/b", "TOPIC 3 q/c", "UNMATCHED @1 3 #2",
                    "SUBSCRIBED 4 3");
        }
    }

    @Test
    void aResumeAheadOfARestartedSingleNodeGetsWhatTheViewShowsAfterAGap() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "q/a", "{\"spread\":1}");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "q/#", Map.of("q/a", 5L), TIGHT);

            assertThat(lines(node.received(sub))).containsExactly("VIEW 1 @1", "TOPIC 1 q/a",
                    "SNAPSHOT 1 1 #1 GAP|VIEWED @1 {\"spread\":1}", "SUBSCRIBED 1 1");
        }
    }

    @Test
    void eachResumingSubscriptionOfOneViewOnASessionIsBroughtUpToDateByItsOwnReply() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "q/a", "{\"spread\":1}");
            node.publish(null, 0, "q/a", "{\"spread\":2}");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "q/#", Map.of("q/a", 1L), TIGHT);
            node.subscribe(sub, 2, "q/a", Map.of("q/a", 1L), TIGHT);

            assertThat(lines(node.received(sub))).containsExactly("VIEW 1 @1", "TOPIC 1 q/a",
                    "SNAPSHOT 1 1 #2 VIEWED @1 {\"spread\":2}", "SUBSCRIBED 1 1",
                    "VIEW 2 @1", "SNAPSHOT 2 1 #2 VIEWED @1 {\"spread\":2}", "SUBSCRIBED 2 1");
        }
    }

    @Test
    void aViewOnlyHoldsSessionsThatMayReadTheTopic() {
        try (EmbeddedNode node = new EmbeddedNode(
                "security: {anonymousRoles: [], roles: [{name: reader, subscribe: [\"public/#\"], publish: []}]}")) {
            Session limited = node.session(0);
            limited.permissions = Permissions.of(node.config().security(), List.of("reader"), "limited",
                    node.config().limits().pathLimits());
            node.publish(null, 0, "secret/x", "{\"bid\":1}");
            node.subscribe(limited, 1, "#", BID);
            assertThat(lines(node.received(limited))).containsExactly("VIEW 1 @1", "SUBSCRIBED 1 0");
            node.publish(null, 0, "public/y", "{\"bid\":2}");
            node.publish(null, 0, "secret/z", "{\"bid\":3}");
            assertThat(lines(node.received(limited))).containsExactly("TOPIC 2 public/y",
                    "UPDATE 2 #1 VIEWED @1 {\"bid\":2}");
        }
    }

    @Test
    void aConflatingMemberGetsTheNewestValueOfItsViewFlaggedAndApartFromThePlainStream() {
        try (EmbeddedNode node = new EmbeddedNode("features: {conflation: always}")) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "fx/eur");
            node.subscribe(sub, 2, "fx/eur", BID);
            node.publish(null, 0, "fx/eur", "{\"bid\":1,\"ask\":1}");
            node.publish(null, 0, "fx/eur", "{\"bid\":2,\"ask\":1}");
            node.publish(null, 0, "fx/eur", "{\"bid\":3,\"ask\":1}");

            assertThat(lines(node.received(sub))).containsExactly("SUBSCRIBED 1 0", "VIEW 2 @1", "SUBSCRIBED 2 0",
                    "TOPIC 1 fx/eur", "UPDATE 1 #3 CONFLATED {\"bid\":3,\"ask\":1}",
                    "TOPIC 1 fx/eur", "UPDATE 1 #3 CONFLATED|VIEWED @1 {\"bid\":3}");
        }
    }

    @Test
    void aPlainRewindStartsEachTopicWithItsLastUpdatesAsSnapshotsThenLiveWithNoGapOrDuplicate() {
        try (EmbeddedNode node = new EmbeddedNode("features: {deltas: true}")) {
            for (int i = 1; i <= 5; i++) {
                node.publish(null, 0, "r/a", "{\"n\":" + i + ",\"pad\":\"" + "p".repeat(60) + "\"}");
            }
            node.publish(null, 0, "r/b", "only");
            Session sub = node.session(0);
            node.subscribe(sub, 2, "r/#", Map.of(), SubscribeOptions.builder().rewind(3).build());
            node.publish(null, 0, "r/a", "{\"n\":6,\"pad\":\"" + "p".repeat(60) + "\"}");

            List<String> got = lines(node.received(sub));
            assertThat(got).as("full values, though the history holds deltas").containsExactly(
                    "TOPIC 1 r/a",
                    "SNAPSHOT 2 1 #3 {\"n\":3,\"pad\":\"" + "p".repeat(60) + "\"}",
                    "SNAPSHOT 2 1 #4 {\"n\":4,\"pad\":\"" + "p".repeat(60) + "\"}",
                    "SNAPSHOT 2 1 #5 {\"n\":5,\"pad\":\"" + "p".repeat(60) + "\"}",
                    "TOPIC 2 r/b", "SNAPSHOT 2 2 #1 only", "SUBSCRIBED 2 2",
                    got.get(7));
            assertThat(got.get(7)).as("live, as a delta against the last rewound value").startsWith("UPDATE 1 #6 DELTA");
        }
    }

    @Test
    void aRewindSinceATimeStartsAtTheFirstUpdateRecordedThenAndAlwaysHasTheNewest() throws Exception {
        try (EmbeddedNode node = new EmbeddedNode()) {
            node.publish(null, 0, "r/t", "old");
            long since = System.currentTimeMillis() + 1;
            Await.until(() -> System.currentTimeMillis() > since, Duration.ofSeconds(2), Duration.ofMillis(1),
                    () -> "the clock past the first update's");
            node.publish(null, 0, "r/t", "new1");
            node.publish(null, 0, "r/t", "new2");
            node.publish(null, 0, "r/quiet", "before");
            Session sub = node.session(0);
            node.subscribe(sub, 1, "r/#", Map.of(), SubscribeOptions.builder().rewindSince(since).build());

            assertThat(lines(node.received(sub))).containsExactly("TOPIC 1 r/t", "SNAPSHOT 1 1 #2 new1",
                    "SNAPSHOT 1 1 #3 new2", "TOPIC 2 r/quiet", "SNAPSHOT 1 2 #1 before", "SUBSCRIBED 1 2");
        }
    }

    @Test
    void aRewindThroughAViewSendsWhatTheViewShowsOfEachUpdateAndEndsUnmatchedWhenTheNewestDoesNotPass() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            String[] values = {"{\"s\":1,\"x\":1}", "{\"s\":1,\"x\":2}", "{\"s\":9,\"x\":3}", "{\"s\":2,\"x\":4}",
                    "{\"s\":8,\"x\":5}"};
            for (String v : values) {
                node.publish(null, 0, "r/v", v);
            }
            Session sub = node.session(1);
            node.subscribe(sub, 3, "r/v", Map.of(),
                    SubscribeOptions.builder().fields("s").filter("s < 5").rewind(5).build());
            node.publish(null, 0, "r/v", "{\"s\":3,\"x\":6}");

            assertThat(lines(node.received(sub))).containsExactly("VIEW 3 @1", "TOPIC 1 r/v",
                    "SNAPSHOT 3 1 #1 VIEWED @1 {\"s\":1}", "SNAPSHOT 3 1 #4 VIEWED @1 {\"s\":2}", "UNMATCHED @1 1 #5",
                    "SUBSCRIBED 3 1", "UPDATE 1 #6 VIEWED @1 {\"s\":3}");
        }
    }

    @Test
    void aStreamedReplyThroughAViewHoldsItsTopicsUpdatesUntilItsSubscribedAndThenSendsThemThroughTheView() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            String pad = "p".repeat(300);
            for (int i = 0; i < 1500; i++) {
                node.publish(null, 0, String.format("big/t%04d", i), "{\"n\":" + i + ",\"pad\":\"" + pad + "\"}");
                if (i % 500 == 499) {
                    node.deliver(); // the embedded fan-out ring has 1,024 slots
                }
            }
            Session sub = node.session(0);
            node.subscribe(sub, 1, "big/#", SubscribeOptions.builder().filter("n < 2000").build());
            assertThat(node.counters.subscribeRepliesPending()).as("streamed: more than a window").isEqualTo(1);
            node.deliverWindow();
            List<Received> first = EmbeddedNode.drained(sub);
            node.publish(null, 0, "big/t0000", "{\"n\":-1,\"pad\":\"" + pad + "\"}"); // joined, held
            node.publish(null, 0, "big/t1499", "{\"n\":-2,\"pad\":\"" + pad + "\"}"); // not reached yet

            List<String> all = new java.util.ArrayList<>(lines(first));
            all.addAll(lines(node.received(sub)));
            int subscribed = all.indexOf("SUBSCRIBED 1 1500");
            assertThat(all.get(0)).isEqualTo("VIEW 1 @1");
            assertThat(all.stream().filter(l -> l.startsWith("SNAPSHOT 1 "))).hasSize(1500);
            assertThat(all).contains("SNAPSHOT 1 1500 #2 VIEWED @1 {\"n\":-2,\"pad\":\"" + pad + "\"}");
            assertThat(all.subList(subscribed + 1, all.size())).as("held until SUBSCRIBED, then through the view")
                    .containsExactly("UPDATE 1 #2 VIEWED @1 {\"n\":-1,\"pad\":\"" + pad + "\"}");
            assertThat(node.counters.subscribeRepliesPending()).isZero();
        }
    }

    /** The node's view of {@code options}, which a subscription holds: looked at, its use given back. */
    private static View viewOf(EmbeddedNode node, SubscribeOptions options) {
        View view = node.views.acquire(options, Permissions.ALL.who());
        node.views.release(view);
        return view;
    }

    private static Topic topic(EmbeddedNode node, String path) {
        return node.sequencer.topic(path);
    }
}
