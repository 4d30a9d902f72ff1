package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.Subscription;
import io.ringcast.client.UpdateKind;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Selectors, snapshots and overlapping subscriptions, through the Java client against a real server. */
@Timeout(60)
class SubscriptionTest {
    static RingcastServer server;
    static RingcastClient publisher;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start();
        publisher = RingcastClient.builder().addresses(server.webSocketUrl()).clientName("publisher").build();
        publisher.connect().get(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        publisher.close();
        server.close();
    }

    static RingcastClient connect() throws Exception {
        return TestServers.connect(server);
    }

    static long publish(String topic, String value) throws Exception {
        return publisher.publish(topic, value.getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
    }

    @Test
    void selectorsMatchTopicsCreatedAfterSubscribing() throws Exception {
        try (RingcastClient c = connect()) {
            Recorded exact = new Recorded();
            Recorded oneLevel = new Recorded();
            Recorded subtree = new Recorded();
            Recorded everything = new Recorded();
            c.subscribe("later/fx/EURUSD/bid", exact).confirmed().get(10, TimeUnit.SECONDS);
            c.subscribe("later/fx/+/bid", oneLevel).confirmed().get(10, TimeUnit.SECONDS);
            c.subscribe("later/fx/#", subtree).confirmed().get(10, TimeUnit.SECONDS);
            c.subscribe("#", everything).confirmed().get(10, TimeUnit.SECONDS);

            String[] topics = {"later/fx/EURUSD/bid", "later/fx/GBPUSD/bid", "later/fx/GBPUSD/ask", "later/fx",
                    "later/fx/EURUSD/bid/depth", "later/rates/bid"};
            for (String t : topics) {
                publish(t, "v");
            }
            // '#' also sees other tests' topics on this server: wait for these ones, published last to first seen
            Await.until(() -> everything.topics().containsAll(java.util.List.of(topics)), "every topic on '#'");
            Await.until(() -> subtree.topics().size() == 5, "subtree");
            assertThat(subtree.topics()).containsExactlyInAnyOrder("later/fx/EURUSD/bid", "later/fx/GBPUSD/bid",
                    "later/fx/GBPUSD/ask", "later/fx", "later/fx/EURUSD/bid/depth");
            assertThat(oneLevel.topics()).containsExactlyInAnyOrder("later/fx/EURUSD/bid", "later/fx/GBPUSD/bid");
            assertThat(exact.topics()).containsExactly("later/fx/EURUSD/bid");
            assertThat(exact.updates).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        }
    }

    @Test
    void newSubscriberGetsLastValueFirstAsSnapshot() throws Exception {
        publish("snapshot/a", "one");
        publish("snapshot/a", "two");
        long three = publish("snapshot/a", "three");
        try (RingcastClient c = connect()) {
            Recorded r = new Recorded();
            c.subscribe("snapshot/a", r).confirmed().get(10, TimeUnit.SECONDS);
            Await.until(() -> r.updates.size() == 1, "the snapshot");
            assertThat(r.updates.get(0)).isEqualTo(new Recorded.Got("snapshot/a", three, UpdateKind.SNAPSHOT, "three"));
            long four = publish("snapshot/a", "four");
            Await.until(() -> r.updates.size() == 2, "the next update");
            assertThat(r.updates.get(1)).isEqualTo(new Recorded.Got("snapshot/a", four, UpdateKind.UPDATE, "four"));
        }
    }

    @Test
    void overlappingSubscriptionsEachGetEveryUpdateOnce() throws Exception {
        publish("overlap/a", "before");
        try (RingcastClient c = connect()) {
            Recorded wide = new Recorded();
            Recorded narrow = new Recorded();
            c.subscribe("overlap/#", wide).confirmed().get(10, TimeUnit.SECONDS);
            Subscription n = c.subscribe("overlap/a", narrow);
            n.confirmed().get(10, TimeUnit.SECONDS);
            // both listeners got the current value once, as their own snapshot
            assertThat(wide.updates).extracting(Recorded.Got::kind).containsExactly(UpdateKind.SNAPSHOT);
            Await.until(() -> narrow.updates.size() == 1, "the narrow snapshot");
            assertThat(narrow.updates.get(0).kind()).isEqualTo(UpdateKind.SNAPSHOT);

            long s = publish("overlap/a", "after");
            Await.until(() -> wide.updates.size() == 2 && narrow.updates.size() == 2, "one update each");
            assertThat(wide.updates.get(1).sequence()).isEqualTo(s);
            assertThat(narrow.updates.get(1).sequence()).isEqualTo(s);

            n.close();
            long s2 = publish("overlap/a", "after-unsubscribe");
            Await.until(() -> wide.lastSequence("overlap/a") == s2, "the wide subscription keeps receiving");
            assertThat(narrow.updates).hasSize(2);
        }
    }

    @Test
    void invalidSelectorIsRefusedLocallyWithTheReason() throws Exception {
        try (RingcastClient c = connect()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.subscribe("fx/#/bid", new Recorded()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'#' must be the last segment");
        }
    }
}
