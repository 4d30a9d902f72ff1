package io.ringcast.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The leader's count of followers that acknowledge its log ({@link LeaderWatch} refuses publishes
 * when they and itself are fewer than a majority). Times are given, not waited for.
 */
class FollowerAcknowledgementsTest {
    private static final long SILENCE_MS = 1000;
    private final FollowerAcknowledgements acks = new FollowerAcknowledgements(SILENCE_MS);

    private static long ms(long ms) {
        return TimeUnit.MILLISECONDS.toNanos(ms);
    }

    private static ClusterStatus.Follower follower(String name, long matchIndex, long lastAppended) {
        return new ClusterStatus.Follower(name, matchIndex, lastAppended - matchIndex);
    }

    @Test
    void followersWhosePlaceInTheLogStopsMovingStopCountingOnceTheSilencePasses() {
        // a one-way cut: node-2 and node-3 no longer take the leader's entries, node-4 and node-5 do
        assertThat(acks.acknowledging(List.of(follower("node-2", 10, 12), follower("node-3", 10, 12),
                follower("node-4", 10, 12), follower("node-5", 10, 12)), ms(0))).isEqualTo(4);
        assertThat(acks.acknowledging(List.of(follower("node-2", 10, 40), follower("node-3", 10, 40),
                follower("node-4", 38, 40), follower("node-5", 39, 40)), ms(600))).isEqualTo(4);
        assertThat(acks.acknowledging(List.of(follower("node-2", 10, 80), follower("node-3", 10, 80),
                follower("node-4", 78, 80), follower("node-5", 77, 80)), ms(1100))).isEqualTo(2);
    }

    @Test
    void followersThatHeardNothingOfTheLeaderForTheSilenceCountNoMoreThoughTheLeaderStillHearsThem() {
        // the case hearing alone got wrong: all four followers are alive and heard, none takes an entry
        acks.acknowledging(List.of(follower("node-2", 5, 5), follower("node-3", 5, 5), follower("node-4", 5, 5),
                follower("node-5", 5, 5)), ms(0));
        assertThat(acks.acknowledging(List.of(follower("node-2", 5, 20), follower("node-3", 5, 20),
                follower("node-4", 5, 20), follower("node-5", 5, 20)), ms(1001))).isZero();
    }

    @Test
    void onlyTheFollowersSilentForLongerThanAskedAreNamedSilent() {
        // node-2 follows another view after a merge; node-3 lags behind but takes entries; node-4 is level
        acks.acknowledging(List.of(follower("node-2", 10, 10), follower("node-3", 10, 10), follower("node-4", 10, 10)),
                ms(0));
        acks.acknowledging(List.of(follower("node-2", 10, 500), follower("node-3", 300, 500), follower("node-4", 500, 500)),
                ms(7_000));
        assertThat(acks.silentFor(ms(8_000), ms(8_000))).isEmpty();
        assertThat(acks.silentFor(ms(8_000), ms(8_001))).containsExactly("node-2");
        assertThat(acks.silentFor(ms(500), ms(7_400))).containsExactly("node-2");
        assertThat(acks.silentFor(ms(300), ms(7_400))).containsExactlyInAnyOrder("node-2", "node-3", "node-4");
    }

    @Test
    void anIdleFollowerLevelWithTheLogKeepsCountingThoughItsPlaceDoesNotMove() {
        acks.acknowledging(List.of(follower("node-2", 7, 7)), ms(0));
        assertThat(acks.acknowledging(List.of(follower("node-2", 7, 7)), ms(5000))).isEqualTo(1);
    }

    @Test
    void aFollowerFirstSeenCountsFromThenSoANewLeaderIsNotRefusedBeforeItsFollowersCouldAnswer() {
        assertThat(acks.acknowledging(List.of(follower("node-2", 0, 50)), ms(10_000))).isEqualTo(1);
        assertThat(acks.acknowledging(List.of(follower("node-2", 0, 50)), ms(10_999))).isEqualTo(1);
        assertThat(acks.acknowledging(List.of(follower("node-2", 0, 50)), ms(11_001))).isZero();
    }

    @Test
    void whatALeaderKnewOfItsFollowersIsForgottenWhenItLeadsAgainLater() {
        acks.acknowledging(List.of(follower("node-2", 3, 9)), ms(0));
        acks.clear(); // it lost the leadership; much later it leads again, the follower still at 3
        assertThat(acks.acknowledging(List.of(follower("node-2", 3, 9)), ms(60_000))).isEqualTo(1);
    }
}
