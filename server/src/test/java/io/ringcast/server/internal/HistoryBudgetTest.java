package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ringcast.server.internal.TopicFixtures.CACHED;
import static io.ringcast.server.internal.TopicFixtures.lastValue;
import static io.ringcast.server.internal.TopicFixtures.publish;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HistoryBudget}: all topics' histories within {@code history.nodeMaxBytes}, the topics
 * updated longest ago letting their older updates go first, then their newest values, and every
 * byte charged back when histories go.
 */
class HistoryBudgetTest {
    private static final String KB = "x".repeat(1000);
    private final List<Topic> topics = new ArrayList<>();

    private Topic topic(HistoryBudget budget, String path) {
        Topic t = new Topic(topics.size() + 1, path, path.split("/"), SubscriberSet.empty(1), 64, Long.MAX_VALUE,
                budget, CACHED);
        topics.add(t);
        return t;
    }

    @AfterEach
    void releaseEverything() {
        topics.forEach(Topic::releaseHistory);
    }

    @Test
    void theHistoriesStayWithinTheBoundTheTopicsUpdatedLongestAgoLettingGoFirst() {
        HistoryBudget budget = new HistoryBudget(20_000, Long.MAX_VALUE, () -> { });
        Topic a = topic(budget, "a");
        Topic b = topic(budget, "b");
        for (int i = 0; i < 8; i++) {
            publish(a, i + KB);
        }
        for (int i = 0; i < 8; i++) {
            publish(b, i + KB);
        }
        assertThat(budget.bytes()).as("16 updates of about 1 kB").isBetween(16_000L, 20_000L);
        assertThat(budget.updatesLetGo()).isZero();

        for (int i = 8; i < 14; i++) {
            publish(b, i + KB);
        }
        assertThat(budget.bytes()).isLessThanOrEqualTo(20_000);
        assertThat(b.historySize()).as("b, updated last, kept all its updates").isEqualTo(14);
        assertThat(a.historySize()).as("a, updated longest ago, let its older ones go").isLessThan(8);
        assertThat(a.canReplayAfter(7)).as("and keeps its newest").isTrue();
        assertThat(budget.updatesLetGo()).isEqualTo(8 - a.historySize());
        assertThat(budget.bytes()).isEqualTo(a.historyBytes() + b.historyBytes());
    }

    @Test
    void smallUpdatesStayWithinTheBoundOnHowManyAreKeptWhateverTheirBytes() {
        HistoryBudget budget = new HistoryBudget(Long.MAX_VALUE, 100, () -> { });
        List<Topic> many = new ArrayList<>();
        for (int t = 0; t < 20; t++) {
            Topic topic = topic(budget, "small/" + t);
            many.add(topic);
            for (int i = 0; i < 10; i++) {
                publish(topic, "v" + i);
            }
        }
        assertThat(budget.entries()).as("200 published, 100 kept")
                .isEqualTo(100).isEqualTo(many.stream().mapToLong(Topic::historySize).sum());
        // older updates go, the topics updated longest ago first, before any newest value
        assertThat(budget.updatesLetGo()).isEqualTo(100);
        assertThat(budget.valuesLetGo()).isZero();
        assertThat(many).extracting(Topic::historySize)
                .containsExactly(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9, 10, 10, 10, 10, 10, 10, 10, 10);

        many.forEach(Topic::releaseHistory);
        assertThat(budget.entries()).isZero();
        assertThat(budget.bytes()).isZero();
    }

    @Test
    void onceEveryTopicIsDownToItsNewestTheNewestValuesOfTheTopicsUpdatedLongestAgoGo() {
        AtomicInteger valuesLetGo = new AtomicInteger();
        HistoryBudget budget = new HistoryBudget(5_500, Long.MAX_VALUE, valuesLetGo::incrementAndGet);
        List<Topic> many = new ArrayList<>();
        for (int t = 0; t < 20; t++) {
            Topic topic = topic(budget, "many/" + t);
            many.add(topic);
            publish(topic, "first " + KB);
            publish(topic, "second " + KB);
        }
        // each topic's older update goes before any newest value: the last five topics keep their
        // newest (five of about 1 kB within 5.5 kB), the fifteen updated before them have no value
        assertThat(many.subList(0, 15)).allSatisfy(t -> assertThat(t.hasValue()).isFalse());
        assertThat(many.subList(15, 20)).allSatisfy(t -> {
            assertThat(t.historySize()).isEqualTo(1);
            assertThat(lastValue(t)).startsWith("second ");
        });
        assertThat(budget.bytes()).isLessThanOrEqualTo(5_500)
                .isEqualTo(many.stream().mapToLong(Topic::historyBytes).sum());
        assertThat(budget.valuesLetGo()).isEqualTo(15).isEqualTo(valuesLetGo.get());

        // the topic being recorded keeps its value, even alone over the bound
        Topic large = topic(budget, "large");
        publish(large, "y".repeat(9_000));
        assertThat(lastValue(large)).startsWith("yyy");
        assertThat(many).allSatisfy(t -> assertThat(t.hasValue()).isFalse());
        assertThat(budget.valuesLetGo()).isEqualTo(20);
    }

    @Test
    void theFramesLetGoAreReleasedAndEveryByteIsChargedBackWhenHistoriesGo() {
        HistoryBudget budget = new HistoryBudget(4_000, Long.MAX_VALUE, () -> { });
        Topic a = topic(budget, "a");
        List<ByteBuf> frames = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            frames.add(publish(a, i + KB).retain()); // a reference of the test's own, to see the topic's go
        }
        try {
            assertThat(a.historySize()).isLessThan(6);
            for (int i = 0; i < 6 - a.historySize(); i++) {
                assertThat(frames.get(i).refCnt()).as("frame %d let go", i).isEqualTo(1);
            }
            assertThat(frames.get(5).refCnt()).as("the newest kept").isEqualTo(2);

            Topic b = topic(budget, "b");
            publish(b, "1" + KB);
            publish(b, "2" + KB);
            a.releaseHistory();
            b.releaseHistory();
            assertThat(budget.bytes()).isZero();

            // released topics left the list: a new one over the bound lets go of its own updates only
            Topic c = topic(budget, "c");
            for (int i = 0; i < 6; i++) {
                publish(c, i + KB);
            }
            assertThat(budget.bytes()).isLessThanOrEqualTo(4_000).isEqualTo(c.historyBytes());
        } finally {
            frames.forEach(ByteBuf::release);
        }
    }

    @Test
    void aTopicsOwnMaxBytesStillBoundsItWithinABudgetLargeEnough() {
        HistoryBudget budget = new HistoryBudget(1_000_000, Long.MAX_VALUE, () -> { });
        Topic large = new Topic(1, "big", new String[] {"big"}, SubscriberSet.empty(1), 64, 5_000, budget, CACHED);
        topics.add(large);
        for (int i = 0; i < 10; i++) {
            publish(large, i + KB);
        }
        assertThat(large.historyBytes()).isLessThanOrEqualTo(5_000);
        assertThat(budget.bytes()).isEqualTo(large.historyBytes());
        assertThat(budget.updatesLetGo()).as("history.maxBytes let them go, not the node's bound").isZero();
    }
}
