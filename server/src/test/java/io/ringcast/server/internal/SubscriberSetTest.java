package io.ringcast.server.internal;

import io.ringcast.server.internal.FanOutFixture.Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The immutable, per-loop set of a topic's subscribers that each fan-out event carries. */
@Timeout(10)
class SubscriberSetTest {

    @Test
    void anEmptySetHasNoSessionOnAnyLoop() {
        SubscriberSet empty = SubscriberSet.empty(3);
        assertThat(empty.size()).isZero();
        assertThat(empty.anyCompressed()).isFalse();
        for (int loop = 0; loop < 3; loop++) {
            assertThat(empty.forLoop(loop)).isEmpty();
        }
    }

    @Test
    void ofGroupsTheSessionsByLoopKeepingTheirOrder() {
        try (FanOutFixture fx = new FanOutFixture(3)) {
            Peer a0 = fx.session(0);
            Peer a2 = fx.session(2);
            Peer b0 = fx.session(0);
            SubscriberSet set = SubscriberSet.of(List.of(a0.session, a2.session, b0.session), 3);

            assertThat(set.size()).isEqualTo(3);
            assertThat(set.forLoop(0)).containsExactly(a0.session, b0.session);
            assertThat(set.forLoop(1)).isEmpty();
            assertThat(set.forLoop(2)).containsExactly(a2.session);
            assertThat(set.contains(a0.session)).isTrue();
            assertThat(set.contains(a2.session)).isTrue();
        }
    }

    @Test
    void withAddsToTheSessionsLoopAndLeavesTheOldSetAsItWas() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a0 = fx.session(0);
            Peer a1 = fx.session(1);
            Peer b1 = fx.session(1);
            SubscriberSet before = SubscriberSet.empty(2).with(a0.session).with(a1.session);
            ChunkedSessions loop1Before = before.forLoop(1);

            SubscriberSet after = before.with(b1.session);

            assertThat(after.forLoop(1)).containsExactly(a1.session, b1.session);
            assertThat(after.forLoop(0)).containsExactly(a0.session);
            assertThat(after.size()).isEqualTo(3);
            assertThat(before.size()).as("copy on write").isEqualTo(2);
            assertThat(before.contains(b1.session)).isFalse();
            assertThat(before.forLoop(1)).isSameAs(loop1Before).containsExactly(a1.session);
        }
    }

    @Test
    void withOfAMemberAndWithoutOfAStrangerReturnTheSameSet() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer member = fx.session(1);
            Peer stranger = fx.session(1);
            SubscriberSet set = SubscriberSet.empty(2).with(member.session);

            assertThat(set.with(member.session)).isSameAs(set);
            assertThat(set.without(stranger.session)).isSameAs(set);
        }
    }

    @Test
    void withoutRemovesOnlyThatSessionAndLeavesTheOldSetAsItWas() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer a = fx.session(0);
            Peer b = fx.session(0);
            Peer c = fx.session(0);
            Peer d = fx.session(1);
            SubscriberSet before = fx.subscribers(a, b, c, d);

            SubscriberSet after = before.without(b.session);

            assertThat(after.forLoop(0)).containsExactly(a.session, c.session);
            assertThat(after.forLoop(1)).containsExactly(d.session);
            assertThat(after.size()).isEqualTo(3);
            assertThat(after.contains(b.session)).isFalse();
            assertThat(before.forLoop(0)).containsExactly(a.session, b.session, c.session);
            assertThat(before.size()).isEqualTo(4);

            SubscriberSet none = after.without(a.session).without(c.session).without(d.session);
            assertThat(none.size()).isZero();
            assertThat(none.forLoop(0)).isEmpty();
            assertThat(none.forLoop(1)).isEmpty();
        }
    }

    @Test
    void containsLooksOnlyAtTheSessionsOwnLoop() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer onLoop0 = fx.session(0);
            Peer onLoop1 = fx.session(1);
            SubscriberSet set = fx.subscribers(onLoop0);
            assertThat(set.contains(onLoop0.session)).isTrue();
            assertThat(set.contains(onLoop1.session)).isFalse();
        }
    }

    @Test
    void anyCompressedFollowsTheSessionsThatNegotiatedDeflateThroughWithAndWithout() {
        try (FanOutFixture fx = new FanOutFixture(2)) {
            Peer plain = fx.session(0);
            Peer deflating = fx.session(1, true);
            SubscriberSet set = SubscriberSet.empty(2).with(plain.session);
            assertThat(set.anyCompressed()).isFalse();

            SubscriberSet withDeflating = set.with(deflating.session);
            assertThat(withDeflating.anyCompressed()).isTrue();
            assertThat(withDeflating.without(deflating.session).anyCompressed()).isFalse();
            assertThat(SubscriberSet.of(List.of(deflating.session), 2).anyCompressed()).isTrue();
        }
    }
}
