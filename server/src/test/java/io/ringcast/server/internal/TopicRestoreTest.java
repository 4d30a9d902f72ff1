package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.DeltaFormatException;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static io.ringcast.server.internal.ReceivedFrames.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Topics carried across a graceful restart: a node saves them ({@link TopicSequencer#save}) once
 * its sequencer thread has ended, and a fresh node restores them ({@link TopicSequencer#restore})
 * before its sequencer starts, under its own aliases, limits and features.
 */
@Timeout(10)
class TopicRestoreTest {
    private static final String QUOTE = "{\"symbol\":\"EURUSD\",\"bid\":1.08412,\"ask\":1.08415,\"venue\":\"XLON\",\"n\":1}";

    @TempDir
    Path dir;

    /** Runs {@code commands} on a node configured by {@code yaml}, stops it and saves its topics. */
    private List<TopicStateFile.SavedTopic> savedAfter(String yaml, Consumer<EmbeddedNode> commands) throws Exception {
        Path file = dir.resolve("state.bin");
        try (EmbeddedNode before = EmbeddedNode.stoppedAfter(yaml, commands)) {
            before.save(file);
        }
        return TopicStateFile.read(file);
    }

    private static void publishAll(EmbeddedNode node, String path, String... values) {
        for (String v : values) {
            node.publish(null, 0, path, v);
        }
    }

    @Test
    void restoredTopicsKeepTheirValueAndSequenceAndCarryOnUnderThisRunsAliases() throws Exception {
        List<TopicStateFile.SavedTopic> saved = savedAfter("{}", n -> {
            publishAll(n, "deep/path/here", "d1"); // alias 1 before the restart
            publishAll(n, "a", "a1", "a2", "a3");
            publishAll(n, "b", "b1");
        });
        assertThat(saved).hasSize(3);

        try (EmbeddedNode node = EmbeddedNode.restoring("limits: {maxPathDepth: 2}", saved)) {
            assertThat(node.restoredTopics).as("the path deeper than this run allows is skipped").isEqualTo(2);
            assertThat(node.counters.topics()).isEqualTo(2);
            assertThat(node.counters.valuesCached()).isEqualTo(2);
            Session sub = node.session(0);
            node.subscribe(sub, 1, "#");
            List<Received> got = node.received(sub);
            assertThat(of(got, MessageType.TOPIC)).extracting(Received::text).containsExactlyInAnyOrder("a", "b");
            assertThat(of(got, MessageType.TOPIC)).extracting(Received::alias).containsExactlyInAnyOrder(1, 2);
            assertThat(of(got, MessageType.SNAPSHOT)).extracting(Received::text, Received::sequence)
                    .containsExactlyInAnyOrder(tuple("a3", 3L), tuple("b1", 1L));

            node.publish(null, 0, "a", "a4");
            node.publish(null, 0, "new", "n1");
            List<Received> updates = of(node.received(sub), MessageType.UPDATE);
            assertThat(updates).extracting(Received::text, Received::sequence)
                    .containsExactly(tuple("a4", 4L), tuple("n1", 1L));
            assertThat(updates.get(1).alias()).as("new topics take the next alias").isEqualTo(3);
        }
    }

    @Test
    void aResumeIsReplayedFromTheRestoredHistoryUnderTheNewAlias() throws Exception {
        List<TopicStateFile.SavedTopic> saved = savedAfter("{}", n -> {
            publishAll(n, "x", "x1");
            publishAll(n, "a", "a1", "a2", "a3");
        });
        try (EmbeddedNode node = EmbeddedNode.restoring("{}", saved)) {
            Session resumed = node.session(1);
            node.subscribe(resumed, 1, "a", Map.of("a", 1L));
            List<Received> got = node.received(resumed);
            assertThat(got).extracting(Received::type, Received::sequence, Received::text).containsExactly(
                    tuple(MessageType.TOPIC, 0L, "a"), tuple(MessageType.UPDATE, 2L, "a2"),
                    tuple(MessageType.UPDATE, 3L, "a3"), tuple(MessageType.SUBSCRIBED, 1L, ""));
            assertThat(got.get(1).alias()).isEqualTo(got.get(0).alias());
            assertThat(got.get(2).alias()).isEqualTo(got.get(0).alias());
        }
    }

    @Test
    void aShorterHistoryInTheNewRunKeepsTheNewestSavedUpdates() throws Exception {
        List<TopicStateFile.SavedTopic> saved = savedAfter("history: {length: 8}",
                n -> publishAll(n, "t", "v1", "v2", "v3", "v4", "v5", "v6"));
        assertThat(saved.get(0).history()).hasSize(6);
        try (EmbeddedNode node = EmbeddedNode.restoring("history: {length: 4}", saved)) {
            Session within = node.session(0);
            node.subscribe(within, 1, "t", Map.of("t", 2L));
            assertThat(of(node.received(within), MessageType.UPDATE)).extracting(Received::text)
                    .containsExactly("v3", "v4", "v5", "v6");

            Session behind = node.session(1);
            node.subscribe(behind, 1, "t", Map.of("t", 1L));
            assertThat(of(node.received(behind), MessageType.SNAPSHOT))
                    .extracting(Received::flags, Received::sequence, Received::text)
                    .containsExactly(tuple(UpdateFlags.GAP, 6L, "v6"));
        }
    }

    @Test
    void restoredDeltasReplayAndTheNextDeltaIsAgainstTheRestoredValue() throws Exception {
        String v2 = QUOTE.replace("1.08415", "1.08416");
        String v3 = v2.replace("\"n\":1", "\"n\":2");
        String v4 = v3.replace("1.08412", "1.08413");
        List<TopicStateFile.SavedTopic> saved = savedAfter("features: {deltas: true}",
                n -> publishAll(n, "fx", QUOTE, v2, v3));
        assertThat(saved.get(0).history()).extracting(TopicStateFile.Entry::flags)
                .containsExactly(0, UpdateFlags.DELTA, UpdateFlags.DELTA);

        try (EmbeddedNode node = EmbeddedNode.restoring("features: {deltas: true}", saved)) {
            Session fresh = node.session(0);
            node.subscribe(fresh, 1, "fx");
            assertThat(of(node.received(fresh), MessageType.SNAPSHOT)).extracting(Received::text)
                    .as("the full value, not the saved delta").containsExactly(v3);

            Session resumed = node.session(1);
            node.subscribe(resumed, 1, "fx", Map.of("fx", 1L));
            List<Received> replay = of(node.received(resumed), MessageType.UPDATE);
            assertThat(replay).extracting(Received::flags).containsExactly(UpdateFlags.DELTA, UpdateFlags.DELTA);
            String rebuilt = applied(applied(QUOTE, replay.get(0)), replay.get(1));
            assertThat(rebuilt).isEqualTo(v3);

            node.publish(null, 0, "fx", v4);
            Received next = of(node.received(fresh), MessageType.UPDATE).get(0);
            assertThat(next.flags()).isEqualTo(UpdateFlags.DELTA);
            assertThat(next.sequence()).isEqualTo(4);
            assertThat(applied(v3, next)).isEqualTo(v4);
        }
    }

    private static String applied(String base, Received delta) throws DeltaFormatException {
        ByteBuf out = Unpooled.buffer();
        try {
            Delta.apply(Unpooled.copiedBuffer(base, StandardCharsets.UTF_8), Unpooled.wrappedBuffer(delta.bytes()), out);
            return out.toString(StandardCharsets.UTF_8);
        } finally {
            out.release();
        }
    }

    @Test
    void withTheCacheOffInTheNewRunOnlyTheSequenceIsRestored() throws Exception {
        List<TopicStateFile.SavedTopic> saved = savedAfter("{}", n -> publishAll(n, "t", "v1", "v2", "v3"));
        try (EmbeddedNode node = EmbeddedNode.restoring("features: {lastValueCache: false}", saved)) {
            assertThat(node.counters.valuesCached()).isZero();
            Session resumed = node.session(0);
            node.subscribe(resumed, 1, "t", Map.of("t", 1L));
            assertThat(of(node.received(resumed), MessageType.SNAPSHOT))
                    .extracting(Received::flags, Received::sequence)
                    .containsExactly(tuple(UpdateFlags.GAP | UpdateFlags.NO_VALUE, 3L));
            node.publish(null, 0, "t", "v4");
            assertThat(of(node.received(resumed), MessageType.UPDATE)).extracting(Received::sequence).containsExactly(4L);
        }
    }

    @Test
    void aTopicSavedWithoutAValueIsRestoredWithItsSequenceAndNoValue() throws Exception {
        List<TopicStateFile.SavedTopic> saved = savedAfter("features: {lastValueCache: false}",
                n -> publishAll(n, "t", "v1", "v2"));
        assertThat(saved.get(0).history()).isEmpty();
        assertThat(saved.get(0).lastValue()).isNull();
        try (EmbeddedNode node = EmbeddedNode.restoring("{}", saved)) {
            Session sub = node.session(0);
            node.subscribe(sub, 1, "t");
            assertThat(node.received(sub)).extracting(Received::type)
                    .containsExactly(MessageType.TOPIC, MessageType.SUBSCRIBED);
            node.publish(null, 0, "t", "v3");
            assertThat(of(node.received(sub), MessageType.UPDATE)).extracting(Received::sequence).containsExactly(3L);
        }
    }

    @Test
    void savingWhileTheSequencerThreadRunsIsRefused() {
        try (EmbeddedNode running = new EmbeddedNode()) {
            running.publish(null, 0, "t", "v");
            assertThatThrownBy(() -> running.save(dir.resolve("early.bin")))
                    .isInstanceOf(AssertionError.class).hasMessageContaining("after the sequencer stopped");
        }
    }
}
