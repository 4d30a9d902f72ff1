package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The JetStream stream's names and settings, and what makes a stream left by an earlier run differ. */
class JetStreamStreamTest {
    static LoadSpec spec(int servers, int topics) {
        List<String> urls = java.util.stream.IntStream.range(0, servers).mapToObj(i -> "nats://127.0.0.1:" + (4221 + i))
                .toList();
        return new LoadSpec(urls, false, topics, 200, 1000, 1, 10, "#", 1000, 0, 1, "nio", Padding.ZEROS, List.of(),
                SubscriberClient.LEAN, ValueFormat.BINARY, LoadSpec.DEFAULT_JSON_FIELDS, 0, Target.JETSTREAM);
    }

    @Test
    void everyTopicHasTheSubjectOfItsPathAndTheStreamHoldsThemAll() {
        String[] subjects = JetStreamStream.subjects(spec(5, 100));
        assertThat(subjects).hasSize(100);
        assertThat(subjects[0]).isEqualTo("bench.t0000");
        assertThat(subjects[99]).isEqualTo("bench.t0099");
        assertThat(subjects[42]).startsWith("bench.").doesNotContain("/");
        assertThat(JetStreamStream.configuration(5).getSubjects()).containsExactly(JetStreamStream.ALL_SUBJECTS);
    }

    @Test
    void aMessageIdNamesOneValueOfTheRun() {
        assertThat(JetStreamStream.messageId(7, 3, 12)).isEqualTo("7-3-12");
        assertThat(JetStreamStream.messageId(7, 31, 2)).isNotEqualTo(JetStreamStream.messageId(7, 3, 12));
    }

    @Test
    void oneReplicaPerServerUpToFive() {
        assertThat(JetStreamStream.replicasFor(spec(1, 10))).isEqualTo(1);
        assertThat(JetStreamStream.replicasFor(spec(5, 10))).isEqualTo(5);
        assertThat(JetStreamStream.replicasFor(spec(7, 10))).isEqualTo(5);
    }

    @Test
    void theSettingsThatDifferAreNamed() {
        StreamConfiguration wanted = JetStreamStream.configuration(5);
        assertThat(JetStreamStream.differences(JetStreamStream.configuration(5), wanted)).isEmpty();
        StreamConfiguration older = StreamConfiguration.builder(wanted).replicas(3).storageType(StorageType.Memory)
                .duplicateWindow(Duration.ofSeconds(30)).build();
        assertThat(JetStreamStream.differences(older, wanted)).hasSize(3)
                .anySatisfy(d -> assertThat(d).isEqualTo("storage memory instead of file"))
                .anySatisfy(d -> assertThat(d).isEqualTo("replicas 3 instead of 5"))
                .anySatisfy(d -> assertThat(d).startsWith("duplicate window"));
    }
}
