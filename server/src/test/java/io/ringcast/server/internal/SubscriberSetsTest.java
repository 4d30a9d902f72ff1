package io.ringcast.server.internal;

import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One instance per distinct subscriber set: topics with the same subscribers share it, whatever
 * order the sessions joined in, and a set no topic has any more leaves the table.
 */
@Timeout(10)
class SubscriberSetsTest {

    @Test
    void topicsWithTheSameSubscribersShareOneSetWhateverTheOrderTheyJoinedIn() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a = fx.session(0);
            Peer b = fx.session(1);
            Peer c = fx.session(0);
            SubscriberSets sets = new SubscriberSets(2);
            Topic t = fx.topic(1, "t");
            Topic u = fx.topic(2, "u");
            Topic created = fx.topic(3, "new");

            sets.add(t, a.session);
            sets.add(t, b.session);
            sets.add(t, c.session);
            sets.add(u, c.session);
            sets.add(u, a.session);
            sets.add(u, b.session);
            sets.assign(created, List.of(b.session, c.session, a.session));

            assertThat(u.subscribers).isSameAs(t.subscribers).isSameAs(created.subscribers);
            assertThat(t.subscribers.forLoop(0)).containsExactly(a.session, c.session);
            assertThat(t.subscribers.forLoop(1)).containsExactly(b.session);
            assertThat(sets.distinct()).as("the intermediate sets of t and u are gone").isEqualTo(1);
        }
    }

    @Test
    void aSessionLeavingEveryTopicBringsThemBackToOneSharedSet() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSets sets = new SubscriberSets(1);
            Topic t = fx.topic(1, "t");
            Topic u = fx.topic(2, "u");
            for (Topic topic : List.of(t, u)) {
                sets.add(topic, a.session);
                sets.add(topic, b.session);
            }
            SubscriberSet both = t.subscribers;

            sets.remove(t, b.session);
            sets.remove(u, b.session);

            assertThat(t.subscribers).isSameAs(u.subscribers).isNotSameAs(both);
            assertThat(t.subscribers.forLoop(0)).containsExactly(a.session);
            assertThat(sets.distinct()).isEqualTo(1);

            sets.remove(t, a.session);
            sets.remove(u, a.session);
            assertThat(t.subscribers).isSameAs(u.subscribers).isSameAs(sets.empty());
            assertThat(sets.distinct()).isZero();
        }
    }

    @Test
    void aSessionThatLeftKeepsNoMemoOfTheSetsThatLiveOn() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer stays = fx.session(0);
            Peer leaves = fx.session(0);
            SubscriberSets sets = new SubscriberSets(1);
            Topic t = fx.topic(1, "t");
            Topic u = fx.topic(2, "u");
            Topic onlyStays = fx.topic(3, "w"); // keeps {stays} in the table throughout
            sets.add(onlyStays, stays.session);
            for (Topic topic : List.of(t, u)) {
                sets.add(topic, stays.session);
                sets.add(topic, leaves.session); // {stays} remembers: + leaves -> {stays, leaves}
            }
            for (Topic topic : List.of(t, u)) {
                sets.remove(topic, leaves.session);
            }

            SubscriberSet live = t.subscribers;
            assertThat(live).isSameAs(u.subscribers).isSameAs(onlyStays.subscribers);
            assertThat(live.memoAdded).as("a closed session must not stay reachable").isNull();
            assertThat(live.memoAddedResult).isNull();
            assertThat(sets.distinct()).isEqualTo(1);
        }
    }

    @Test
    void aSetLeftByEveryTopicIsBuiltAgainWhenATopicNeedsItOnceMore() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            SubscriberSets sets = new SubscriberSets(1);
            Topic t = fx.topic(1, "t");
            sets.add(t, a.session);
            SubscriberSet onlyA = t.subscribers;
            sets.add(t, b.session);
            assertThat(sets.distinct()).as("{a} left the table").isEqualTo(1);

            sets.remove(t, b.session);
            sets.add(t, b.session); // the memo of {a} points at {a, b}, still in use: reused
            SubscriberSet both = t.subscribers;
            sets.remove(t, b.session);

            assertThat(t.subscribers).isNotSameAs(onlyA).isEqualTo(onlyA);
            assertThat(sets.distinct()).isEqualTo(1);
            Topic u = fx.topic(2, "u");
            sets.add(u, a.session);
            assertThat(u.subscribers).isSameAs(t.subscribers);
            sets.add(u, b.session);
            assertThat(u.subscribers).as("{a, b} was left by t: a new instance, the only one").isEqualTo(both);
            assertThat(sets.distinct()).isEqualTo(2);
        }
    }
}
