package io.ringcast.server.internal;

import io.ringcast.server.config.Conflation;

/**
 * The toggles in force for one topic, resolved from {@code features} by {@link FeatureResolver}.
 * Deltas are off wherever the last-value cache is: a delta needs the previous value kept.
 * Immutable.
 *
 * @param lastValueCache keep the newest value and history
 * @param deltas         send updates as deltas when smaller
 * @param compression    compress updates for sessions that negotiated permessage-deflate
 * @param conflation     what a subscriber that falls behind gets
 * @param expireAfterMs  removed when no publish updated it for this long; 0: never
 */
record TopicFeatures(boolean lastValueCache, boolean deltas, boolean compression, Conflation conflation,
                     long expireAfterMs) {
    TopicFeatures {
        deltas = deltas && lastValueCache;
    }

    /** Features of a topic that never expires. */
    TopicFeatures(boolean lastValueCache, boolean deltas, boolean compression, Conflation conflation) {
        this(lastValueCache, deltas, compression, conflation, 0);
    }
}
