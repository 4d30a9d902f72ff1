package io.ringcast.server.internal;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SelectorIndex}: which subscriptions a newly created topic goes to, for exact, {@code +}
 * and {@code #} selectors, and that removing one subscription leaves every other in place.
 */
class SelectorIndexTest {
    private final SelectorIndex index = new SelectorIndex();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final Session alice = session(1);
    private final Session bob = session(2);

    private Session session(long id) {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        channels.add(ch);
        return new Session(id, ch.pipeline().firstContext(), 0, false);
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    static Selector selector(String text) {
        try {
            return Selector.parse(text, PathLimits.DEFAULT);
        } catch (ProtocolException e) {
            throw new AssertionError(e);
        }
    }

    /** "name:subscriptionId" of every match, in visiting order. */
    private List<String> matches(String path) {
        List<String> out = new ArrayList<>();
        index.forEachMatch(path.split("/"), (s, id) -> out.add((s == alice ? "alice" : s == bob ? "bob" : s.name) + ":" + id));
        return out;
    }

    @Test
    void exactSelectorMatchesOnlyItsPath() {
        index.add(selector("fx/EURUSD"), alice, 1);

        assertThat(matches("fx/EURUSD")).containsExactly("alice:1");
        assertThat(matches("fx")).isEmpty();
        assertThat(matches("fx/EURUSD/bid")).isEmpty();
        assertThat(matches("fx/GBPUSD")).isEmpty();
    }

    @Test
    void plusMatchesExactlyOneSegmentAnywhere() {
        index.add(selector("fx/+/bid"), alice, 1);
        index.add(selector("+"), bob, 2);

        assertThat(matches("fx/EURUSD/bid")).containsExactly("alice:1");
        assertThat(matches("fx/GBPUSD/bid")).containsExactly("alice:1");
        assertThat(matches("fx/EURUSD/ask")).isEmpty();
        assertThat(matches("fx/bid")).isEmpty();
        assertThat(matches("fx/a/b/bid")).isEmpty();
        assertThat(matches("eq")).containsExactly("bob:2");
        assertThat(matches("eq/AAPL")).isEmpty();
    }

    @Test
    void hashMatchesItsParentAndEverythingBelow() {
        index.add(selector("fx/#"), alice, 1);

        assertThat(matches("fx")).as("the parent, as in MQTT").containsExactly("alice:1");
        assertThat(matches("fx/EURUSD")).containsExactly("alice:1");
        assertThat(matches("fx/EURUSD/bid/level/2")).containsExactly("alice:1");
        assertThat(matches("eq/fx")).isEmpty();
        assertThat(matches("fxx")).isEmpty();
    }

    @Test
    void hashAloneMatchesEveryTopicOnce() {
        index.add(selector("#"), alice, 9);

        assertThat(matches("a")).containsExactly("alice:9");
        assertThat(matches("a/b")).containsExactly("alice:9");
        assertThat(matches("a/b/c/d/e")).containsExactly("alice:9");
    }

    @Test
    void plusThenHashMatchesEveryTopicUnderAnyFirstSegment() {
        index.add(selector("+/#"), alice, 1);

        assertThat(matches("a")).containsExactly("alice:1");
        assertThat(matches("a/b/c")).containsExactly("alice:1");
    }

    @Test
    void everySubscriptionOfOneSessionThatMatchesIsVisited() {
        index.add(selector("fx/EURUSD"), alice, 1);
        index.add(selector("fx/+"), alice, 2);
        index.add(selector("fx/#"), alice, 3);
        index.add(selector("#"), alice, 4);
        index.add(selector("+/EURUSD"), alice, 5);

        assertThat(matches("fx/EURUSD")).containsExactlyInAnyOrder("alice:1", "alice:2", "alice:3", "alice:4",
                "alice:5");
        assertThat(matches("fx/GBPUSD")).containsExactlyInAnyOrder("alice:2", "alice:3", "alice:4");
    }

    @Test
    void removingOneSubscriptionLeavesTheSessionsOtherSubscriptionsAndOtherSessions() {
        index.add(selector("fx/+"), alice, 1);
        index.add(selector("fx/+"), alice, 2);
        index.add(selector("fx/+"), bob, 1);
        index.add(selector("fx/#"), alice, 3);
        index.add(selector("fx/#"), alice, 4);
        index.add(selector("fx/#"), bob, 3);

        index.remove(selector("fx/+"), alice, 1);
        index.remove(selector("fx/#"), alice, 4);

        assertThat(matches("fx/EURUSD")).containsExactlyInAnyOrder("alice:2", "bob:1", "alice:3", "bob:3");
    }

    @Test
    void removingWhatIsNotThereChangesNothing() {
        index.add(selector("fx/EURUSD"), alice, 1);

        index.remove(selector("fx/EURUSD"), alice, 2);
        index.remove(selector("fx/EURUSD"), bob, 1);
        index.remove(selector("eq/AAPL"), alice, 1);
        index.remove(selector("eq/+/x/#"), alice, 1);

        assertThat(matches("fx/EURUSD")).containsExactly("alice:1");
    }

    @Test
    void removedSubscriptionsMatchNothingAndTheSameShapeCanBeAddedAgain() {
        for (String s : List.of("fx/EURUSD", "fx/+", "fx/#", "#")) {
            index.add(selector(s), alice, 1);
            index.remove(selector(s), alice, 1);
        }
        assertThat(matches("fx/EURUSD")).isEmpty();

        index.add(selector("fx/+"), bob, 7);
        assertThat(matches("fx/EURUSD")).containsExactly("bob:7");
    }

    @Test
    void manySessionsOnOneSelectorAreEachVisited() {
        List<Session> sessions = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            Session s = session(100 + i);
            sessions.add(s);
            index.add(selector("news/+"), s, i);
        }
        List<Session> visited = new ArrayList<>();
        index.forEachMatch(new String[]{"news", "today"}, (s, id) -> visited.add(s));

        assertThat(visited).containsExactlyInAnyOrderElementsOf(sessions);
    }
}
