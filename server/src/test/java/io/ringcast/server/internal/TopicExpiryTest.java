package io.ringcast.server.internal;

import io.ringcast.server.config.Conflation;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link TopicExpiry}: topics due once their {@code expireAfterMs} passed without a publish, oldest first. */
class TopicExpiryTest {
    private final TopicExpiry expiry = new TopicExpiry();
    private final TopicTree tree = new TopicTree();

    private Topic topic(String path, long expireAfterMs) {
        Topic t = TopicFixtures.topic(tree.size() + 1, path, 4);
        t.features(new TopicFeatures(true, false, false, Conflation.OFF, expireAfterMs));
        tree.add(t);
        return t;
    }

    /** Expires what is due at {@code now}, each leaving its queue; returns their paths and the next due time. */
    private List<String> expireAt(long now, long[] next) {
        List<String> due = new ArrayList<>();
        next[0] = expiry.expire(now, t -> {
            due.add(t.path);
            expiry.forget(t);
        });
        return due;
    }

    @Test
    void aTopicIsDueItsExpireAfterMsAfterItsLastPublishAndAPublishPutsItBack() {
        Topic a = topic("a", 100);
        Topic b = topic("b", 100);
        expiry.touched(a, 1_000);
        expiry.touched(b, 1_050);
        expiry.touched(a, 1_080); // a publish: a is now the newest
        long[] next = new long[1];

        assertThat(expireAt(1_149, next)).isEmpty();
        assertThat(next[0]).isEqualTo(1_150);
        assertThat(expireAt(1_150, next)).containsExactly("b");
        assertThat(next[0]).isEqualTo(1_180);
        assertThat(expireAt(5_000, next)).containsExactly("a");
        assertThat(next[0]).as("nothing left to expire").isEqualTo(Long.MAX_VALUE);
        assertThat(expiry.size()).isZero();
    }

    @Test
    void eachExpireAfterMsIsItsOwnQueueAndATopicThatNeverExpiresIsInNone() {
        Topic slow = topic("slow", 1_000);
        Topic fast = topic("fast", 10);
        Topic kept = topic("kept", 0);
        expiry.touched(slow, 0);
        expiry.touched(fast, 500);
        expiry.touched(kept, 0);
        long[] next = new long[1];

        assertThat(expiry.size()).isEqualTo(2);
        assertThat(expiry.nextDue()).isEqualTo(510);
        assertThat(expireAt(600, next)).containsExactly("fast");
        assertThat(expireAt(10_000, next)).containsExactly("slow");
    }

    @Test
    void aReloadMovesATopicToTheQueueOfItsNewTimeInTheOrderOfItsLastPublish() {
        Topic a = topic("a", 100);
        Topic b = topic("b", 200);
        Topic c = topic("c", 200);
        expiry.touched(b, 0);
        expiry.touched(a, 10);
        expiry.touched(c, 20);
        a.features(new TopicFeatures(true, false, false, Conflation.OFF, 200));
        expiry.reloaded(a);
        long[] next = new long[1];

        assertThat(expireAt(10_000, next)).as("oldest first, a between b and c").containsExactly("b", "a", "c");

        Topic d = topic("d", 100);
        expiry.touched(d, 0);
        d.features(new TopicFeatures(true, false, false, Conflation.OFF, 0));
        expiry.reloaded(d);
        assertThat(expiry.size()).as("a topic that no longer expires leaves its queue").isZero();
    }
}
