package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class FanOutHarnessTest {

    @Test
    void everyUpdateReachesEverySubscriberAndEveryBufferIsReleased() throws Exception {
        int subscribers = 50;
        int topics = 20;
        try (FanOutHarness h = new FanOutHarness(subscribers, 2, topics, 200, 1024)) {
            long before = h.delivered();
            assertThat(before).isEqualTo((long) topics * subscribers + subscribers);
            int updates = 5_000; // several times the ring: the sequencer waits for the readers
            for (int i = 0; i < updates; i++) {
                h.publish(i % topics, i % 64 == 63 || i == updates - 1);
            }
            h.awaitDelivered(before + (long) updates * subscribers);
            assertThat(h.delivered()).isEqualTo(before + (long) updates * subscribers);
        }
    }
}
