package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.ringcast.server.internal.SelectorIndexTest.selector;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link TopicTree}: topics by path, and the existing topics an exact, {@code +} or {@code #} selector matches. */
class TopicTreeTest {
    private final TopicTree tree = new TopicTree();

    private void add(String... paths) {
        for (String path : paths) {
            tree.add(TopicFixtures.topic(tree.size() + 1, path, 4));
        }
    }

    private List<String> matches(String selector) {
        List<String> out = new ArrayList<>();
        tree.forEachMatch(selector(selector), t -> out.add(t.path));
        return out;
    }

    @Test
    void topicIsFoundByItsPathAndCounted() {
        add("fx/EURUSD", "fx");

        assertThat(tree.get("fx/EURUSD").path).isEqualTo("fx/EURUSD");
        assertThat(tree.get("fx").alias).isEqualTo(2);
        assertThat(tree.get("fx/GBPUSD")).isNull();
        assertThat(tree.size()).isEqualTo(2);
        assertThat(tree.all()).extracting(t -> t.path).containsExactlyInAnyOrder("fx/EURUSD", "fx");
    }

    @Test
    void exactSelectorMatchesItsTopicOnly() {
        add("fx/EURUSD", "fx/EURUSD/bid", "fx");

        assertThat(matches("fx/EURUSD")).containsExactly("fx/EURUSD");
        assertThat(matches("fx/GBPUSD")).isEmpty();
    }

    @Test
    void plusMatchesTopicsOneSegmentDeepAndSkipsInnerNodesWithoutATopic() {
        add("fx/EURUSD/bid", "fx/GBPUSD/bid", "fx/GBPUSD/ask", "eq/AAPL/bid", "fx/EURUSD");

        assertThat(matches("fx/+/bid")).containsExactlyInAnyOrder("fx/EURUSD/bid", "fx/GBPUSD/bid");
        assertThat(matches("+/+/bid")).containsExactlyInAnyOrder("fx/EURUSD/bid", "fx/GBPUSD/bid", "eq/AAPL/bid");
        assertThat(matches("fx/+")).as("fx/GBPUSD is a path, not a topic").containsExactly("fx/EURUSD");
        assertThat(matches("+")).isEmpty();
    }

    @Test
    void hashMatchesTheTopicItHangsFromAndEveryTopicBelow() {
        add("fx", "fx/EURUSD", "fx/EURUSD/bid", "fxx", "eq/fx");

        assertThat(matches("fx/#")).containsExactlyInAnyOrder("fx", "fx/EURUSD", "fx/EURUSD/bid");
        assertThat(matches("fx/EURUSD/#")).containsExactlyInAnyOrder("fx/EURUSD", "fx/EURUSD/bid");
        assertThat(matches("+/#")).containsExactlyInAnyOrder("fx", "fx/EURUSD", "fx/EURUSD/bid", "fxx", "eq/fx");
    }

    @Test
    void hashAtTheRootMatchesEveryTopicOnceAndNoRootTopic() {
        add("a", "a/b", "a/b/c", "z");

        assertThat(matches("#")).containsExactlyInAnyOrder("a", "a/b", "a/b/c", "z");
    }

    @Test
    void manyTopicsEachMatchedByTheSelectorsThatMatchTheirPath() {
        List<String> bids = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            add("m/" + i + "/bid", "m/" + i + "/ask");
            bids.add("m/" + i + "/bid");
        }

        assertThat(tree.size()).isEqualTo(1000);
        assertThat(matches("m/+/bid")).containsExactlyInAnyOrderElementsOf(bids);
        assertThat(matches("m/#")).hasSize(1000).doesNotHaveDuplicates();
        assertThat(matches("m/499/+")).containsExactlyInAnyOrder("m/499/bid", "m/499/ask");
    }

    @Test
    void aRemovedTopicIsNoLongerFoundAndItsEmptyBranchGoes() {
        add("fx/EURUSD/bid", "fx/EURUSD/ask", "eq/AAPL");

        tree.remove(tree.get("fx/EURUSD/bid"));
        assertThat(tree.get("fx/EURUSD/bid")).isNull();
        assertThat(matches("fx/#")).containsExactly("fx/EURUSD/ask");
        tree.remove(tree.get("fx/EURUSD/ask"));
        assertThat(matches("#")).containsExactly("eq/AAPL");
        assertThat(matches("+/+/+")).isEmpty();
        assertThat(tree.size()).isEqualTo(1);
        assertThat(tree.createdSize()).as("places kept until compacted").isEqualTo(3);
        assertThat(tree.inCreationOrder(0).removed).isTrue();
    }

    @Test
    void theCreationOrderDropsRemovedTopicsOnceTheyOutnumberTheRestAndNoReplyWalksIt() {
        for (int i = 0; i < 5000; i++) {
            add("t/" + i);
        }
        add("kept");
        for (int i = 0; i < 5000; i++) {
            tree.remove(tree.get("t/" + i));
        }

        assertThat(tree.compact(1)).as("a streamed reply walks the order").isFalse();
        assertThat(tree.createdSize()).isEqualTo(5001);
        assertThat(tree.compact(0)).isTrue();
        assertThat(tree.createdSize()).isEqualTo(1);
        assertThat(tree.inCreationOrder(0).path).isEqualTo("kept");
    }
}
