package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.TopicPath;
import io.ringcast.protocol.UpdateFlags;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.BiFunction;

/**
 * Takes over the topics a previous run saved ({@link TopicStateFile}): sequence, history and last
 * value, under this run's aliases and features. Runs on the thread that starts the node, before
 * the sequencer thread does, and hands over through the ring's start; or, for a cluster snapshot,
 * on the sequencer thread ({@link TopicSequencer}).
 */
final class TopicRestore {
    private static final Logger log = LoggerFactory.getLogger(TopicRestore.class);

    private final UpdateEncoder encoder;
    private final ServerCounters counters;

    TopicRestore(UpdateEncoder encoder, ServerCounters counters) {
        this.encoder = encoder;
        this.counters = counters;
    }

    /**
     * @param createTopic gives the topic of this run to restore into (path, segments), with its
     *                    subscribers: a new one, or one that keeps no history any more
     * @return how many topics were restored; a saved path this run's limits refuse is skipped, and logged
     */
    int restore(Iterable<TopicStateFile.SavedTopic> saved, PathLimits limits,
                BiFunction<String, String[], Topic> createTopic) {
        int restored = 0;
        for (TopicStateFile.SavedTopic t : saved) {
            String[] segments;
            try {
                segments = TopicPath.validate(t.path(), limits);
            } catch (ProtocolException e) {
                log.warn("saved topic '{}' not restored: {}", t.path(), e.reason());
                continue;
            }
            Topic topic = createTopic.apply(t.path(), segments);
            if (t.incarnation() != 0) {
                topic.incarnation = t.incarnation(); // the clients of the last run know it by this one
            }
            if (topic.features.lastValueCache()) {
                restoreHistory(topic, t);
            }
            topic.sequence = t.sequence();
            restored++;
        }
        return restored;
    }

    private void restoreHistory(Topic topic, TopicStateFile.SavedTopic t) {
        List<TopicStateFile.Entry> history = t.history();
        if (history.isEmpty() && t.lastValue() != null) {
            // a cluster snapshot's topic: its value alone, kept as its newest update, in full
            topic.sequence = t.sequence();
            ByteBuf frame = encoder.savedUpdateFrame(topic.alias, t.sequence(), 0, t.lastValue());
            topic.record(frame, OutboundFrame.HEADER_RESERVE_BYTES, null);
            counters.valuesCached(1);
            return;
        }
        for (int i = 0; i < history.size(); i++) {
            TopicStateFile.Entry entry = history.get(i);
            topic.sequence = entry.sequence();
            ByteBuf frame = encoder.savedUpdateFrame(topic.alias, entry.sequence(), entry.flags(), entry.payload());
            boolean newestHoldsDelta = i == history.size() - 1 && (entry.flags() & UpdateFlags.DELTA) != 0;
            topic.record(frame, OutboundFrame.HEADER_RESERVE_BYTES,
                    newestHoldsDelta ? encoder.copyOf(Unpooled.wrappedBuffer(t.lastValue())) : null);
        }
        if (!history.isEmpty()) {
            counters.valuesCached(1);
        }
    }
}
