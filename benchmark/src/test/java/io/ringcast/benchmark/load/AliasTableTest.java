package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The alias map of a lean subscriber's connection, against a HashMap: any u32 alias, growth, redefinition. */
class AliasTableTest {
    @Test
    void answersWhatWasPutUnknownOtherwise() {
        AliasTable table = new AliasTable(4);
        table.put(1, 0);
        table.put(2, AliasTable.NOT_A_RUN_TOPIC);
        table.put(0, 5); // 0 and the top of the u32 range are aliases like any other
        table.put(-1, 6);
        assertThat(table.topicIndex(1)).isZero();
        assertThat(table.topicIndex(2)).isEqualTo(AliasTable.NOT_A_RUN_TOPIC);
        assertThat(table.topicIndex(0)).isEqualTo(5);
        assertThat(table.topicIndex(-1)).isEqualTo(6);
        assertThat(table.topicIndex(3)).isEqualTo(AliasTable.UNKNOWN);
        table.put(1, 9); // the same TOPIC again, or an alias reused: the newest wins
        assertThat(table.topicIndex(1)).isEqualTo(9);
    }

    @Test
    void growsAndAgreesWithAHashMap() {
        AliasTable table = new AliasTable(16);
        Map<Integer, Integer> expected = new HashMap<>();
        SplittableRandom random = new SplittableRandom(17);
        for (int i = 1; i <= 5000; i++) {
            table.put(i, i - 1); // the server's consecutive aliases
            expected.put(i, i - 1);
            int alias = random.nextInt();
            int topic = random.nextInt(-1, 1_000_000);
            table.put(alias, topic);
            expected.put(alias, topic);
        }
        expected.forEach((alias, topic) -> assertThat(table.topicIndex(alias)).as("alias %d", alias).isEqualTo(topic));
        assertThat(table.topicIndex(5001)).isEqualTo(expected.getOrDefault(5001, AliasTable.UNKNOWN));
    }
}
