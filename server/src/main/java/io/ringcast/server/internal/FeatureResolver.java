package io.ringcast.server.internal;

import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.Features;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Resolves the {@link TopicFeatures} of a topic from a {@link Features} section: each toggle from
 * the most specific matching override that sets it, else the global default. Specificity: more
 * literal segments, then more segments, then {@code +} over {@code #}; among equals the later entry
 * in the list wins. Immutable once built; the sequencer resolves a topic when it creates it and
 * again for every topic on a hot reload.
 */
final class FeatureResolver {
    private static final Comparator<Entry> LEAST_SPECIFIC_FIRST = Comparator
            .comparingInt((Entry e) -> e.literalSegments)
            .thenComparingInt(e -> e.selector.depth())
            .thenComparingInt(e -> e.endsWithSubtree ? 0 : 1);

    private final Features features;
    /** Overrides from least to most specific (stable, so list order among equals): applied in turn, the last match wins. */
    private final List<Entry> entries;

    FeatureResolver(Features features, PathLimits pathLimits) {
        this.features = features;
        List<Entry> sorted = new ArrayList<>();
        for (Features.SubtreeOverride o : features.overrides()) {
            try {
                sorted.add(new Entry(Selector.parse(o.selector(), pathLimits), o));
            } catch (ProtocolException e) {
                throw new IllegalArgumentException("features override selector was not validated: " + o.selector(), e);
            }
        }
        sorted.sort(LEAST_SPECIFIC_FIRST);
        this.entries = List.copyOf(sorted);
    }

    Features features() {
        return features;
    }

    TopicFeatures resolve(String[] segments) {
        boolean cache = features.lastValueCache();
        boolean deltas = features.deltas();
        boolean compression = features.compression();
        Conflation conflation = features.conflation();
        long expireAfterMs = features.expireAfterMs();
        for (Entry e : entries) {
            if (!e.selector.matches(segments)) {
                continue;
            }
            Features.SubtreeOverride o = e.override;
            if (o.lastValueCache() != null) {
                cache = o.lastValueCache();
            }
            if (o.deltas() != null) {
                deltas = o.deltas();
            }
            if (o.compression() != null) {
                compression = o.compression();
            }
            if (o.conflation() != null) {
                conflation = o.conflation();
            }
            if (o.expireAfterMs() != null) {
                expireAfterMs = o.expireAfterMs();
            }
        }
        return new TopicFeatures(cache, deltas, compression, conflation, expireAfterMs);
    }

    private static final class Entry {
        final Selector selector;
        final Features.SubtreeOverride override;
        final int literalSegments;
        final boolean endsWithSubtree;

        Entry(Selector selector, Features.SubtreeOverride override) {
            this.selector = selector;
            this.override = override;
            int literals = 0;
            for (int i = 0; i < selector.depth(); i++) {
                String s = selector.segment(i);
                if (!s.equals(Selector.ONE_SEGMENT) && !s.equals(Selector.SUBTREE)) {
                    literals++;
                }
            }
            this.literalSegments = literals;
            this.endsWithSubtree = selector.segment(selector.depth() - 1).equals(Selector.SUBTREE);
        }
    }
}
