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

    /**
     * Every audience starts from the table's one empty set, which lives as long as the node: its
     * memo of a session's first join named the session after it closed (views once started from an
     * empty set of their own, which no removal ever reached).
     */
    @Test
    void aClosedSessionIsNamedByNoMemoOfTheEmptySetAudiencesStartFrom() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            Peer leaves = fx.session(0);
            Peer stays = fx.session(0);
            SubscriberSets sets = new SubscriberSets(1);
            Topic topic = fx.topic(1, "a", sets.empty());
            sets.add(topic, leaves.session);
            sets.add(topic, stays.session);
            sets.remove(topic, leaves.session); // ends on {stays}, not on the empty set
            assertThat(sets.empty().memoAdded).as("the empty set's memo of the first join").isSameAs(leaves.session);

            sets.sessionClosed(leaves.session);
            assertThat(sets.empty().memoAdded).as("the empty set's memo once the session closed").isNull();
            assertThat(sets.empty().memoAddedResult).isNull();
            assertThat(topic.subscribers.memoAdded).isNotSameAs(leaves.session);
            assertThat(topic.subscribers.memoRemoved).isNotSameAs(leaves.session);
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

    /**
     * Sessions joining a topic one after another make a set per step, each the memo of the one
     * before. A set no topic has any more must not keep its memo's result alive: the chain from the
     * empty set reached every set ever made, and so every session, closed or not, ever subscribed
     * (10,000 subscribers of '#' held 375 MB that way, and the node spent its time in full GCs).
     */
    @Test
    void aSetNoTopicHasKeepsNoOtherSetReachableSoJoiningAndLeavingSessionsLeaveNothingBehind() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            SubscriberSets sets = new SubscriberSets(1);
            List<Topic> topics = List.of(fx.topic(1, "a"), fx.topic(2, "b"), fx.topic(3, "c"));
            for (Topic t : topics) {
                sets.assign(t, List.of()); // the empty set, as a topic the sequencer makes
            }
            List<Peer> peers = new java.util.ArrayList<>();
            for (int i = 0; i < 200; i++) {
                Peer p = fx.session(0);
                peers.add(p);
                for (Topic t : topics) {
                    sets.add(t, p.session);
                }
            }
            assertThat(reachableThroughMemos(sets.empty())).as("sets the empty set keeps alive").isLessThanOrEqualTo(3);
            assertThat(reachableThroughMemos(topics.get(0).subscribers)).isLessThanOrEqualTo(4);
            for (Peer p : peers) {
                for (Topic t : topics) {
                    sets.remove(t, p.session);
                }
            }
            assertThat(topics.get(0).subscribers).isSameAs(sets.empty());
            assertThat(reachableThroughMemos(sets.empty())).as("after every session left").isLessThanOrEqualTo(3);
        }
    }

    /**
     * Thousands of clients subscribing to one selector join each of its topics one after another,
     * and leave the same way. Each step makes a set one session apart from the last: with one flat
     * array per loop that copied every member, 10,000 subscribers of {@code #} took a node with
     * 1,000 topics 8.8 s of its sequencer, and 19,000 took 27 s. A step must copy about a chunk.
     */
    @Test
    void thousandsOfSessionsJoiningAndLeavingOneByOneCopyAChunkAStepNotEveryMember() {
        try (FanOutFixture fx = new FanOutFixture(1)) {
            SubscriberSets sets = new SubscriberSets(1);
            List<Topic> topics = List.of(fx.topic(1, "a"), fx.topic(2, "b"));
            List<Peer> peers = new java.util.ArrayList<>();
            for (int i = 0; i < 5_000; i++) {
                peers.add(fx.session(0));
            }
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long before = threads.getCurrentThreadAllocatedBytes();
            for (Peer p : peers) {
                for (Topic t : topics) {
                    sets.add(t, p.session, true);
                }
                for (Topic t : topics) {
                    sets.release(t, p.session);
                }
            }
            long joining = threads.getCurrentThreadAllocatedBytes() - before;
            assertThat(topics.get(0).subscribers.size()).isEqualTo(5_000);
            before = threads.getCurrentThreadAllocatedBytes();
            for (Peer p : peers) {
                for (Topic t : topics) {
                    sets.remove(t, p.session);
                }
            }
            long leaving = threads.getCurrentThreadAllocatedBytes() - before;
            assertThat(topics.get(0).subscribers).isSameAs(sets.empty());
            // a copy of every member at each join or leave: 2,500 members of 4 bytes on average, 50 MB for
            // each 5,000 (52 MB measured for the joins); a chunk and the index: 5.4 MB for the joins
            assertThat(joining).as("bytes allocated by 5,000 joins and releases").isLessThan(15L << 20);
            assertThat(leaving).as("bytes allocated by 5,000 leaves").isLessThan(15L << 20);
        }
    }

    /** How many sets {@code from} reaches through memos, itself excluded. */
    private static int reachableThroughMemos(SubscriberSet from) {
        java.util.Set<SubscriberSet> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        java.util.ArrayDeque<SubscriberSet> todo = new java.util.ArrayDeque<>(List.of(from));
        while (!todo.isEmpty()) {
            SubscriberSet s = todo.poll();
            for (SubscriberSet next : java.util.Arrays.asList(s.memoAddedResult, s.memoRemovedResult, s.memoReleasedResult)) {
                if (next != null && next != from && seen.add(next)) {
                    todo.add(next);
                }
            }
        }
        return seen.size();
    }
}
