package io.ringcast.server.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A single node's memory of what each publisher published lately, so that a {@code REPUBLISH}
 * (a publish its client sent again after losing the connection before the ack) is applied once and
 * answered with the sequence it got the first time. Keyed by the publisher id the client gives in
 * {@code HELLO}, which outlives its connections; bounded in publishers (the one whose last
 * session started publishing longest ago is forgotten first) and, per publisher, in publishes (a
 * ring of the newest ones).
 *
 * <p>Thread contract: the sequencer thread only. A ledger costs nothing per publish but two array
 * writes; it is looked up once per session, on its first publish.
 */
final class PublisherLedgers {
    /** Publishes remembered per publisher: more than a client has unacked when its connection drops. */
    static final int PUBLISHES_PER_PUBLISHER = 1024;
    /** Publishers remembered: about 12 KiB each. */
    static final int MAX_PUBLISHERS = 4096;

    private final int publishesPerPublisher;
    private final Map<Long, Ledger> byPublisher;

    PublisherLedgers() {
        this(MAX_PUBLISHERS, PUBLISHES_PER_PUBLISHER);
    }

    PublisherLedgers(int maxPublishers, int publishesPerPublisher) {
        this.publishesPerPublisher = publishesPerPublisher;
        this.byPublisher = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Ledger> eldest) {
                return size() > maxPublishers;
            }
        };
    }

    /** The publisher's ledger, made on its first publish. */
    Ledger of(long publisherId) {
        return byPublisher.computeIfAbsent(publisherId, id -> new Ledger(publishesPerPublisher));
    }

    int size() {
        return byPublisher.size();
    }

    /** One publisher's newest publishes: correlation id and the topic sequence each got. */
    static final class Ledger {
        private final int[] correlationIds;
        private final long[] sequences;
        private int next;
        private int size;

        Ledger(int capacity) {
            correlationIds = new int[capacity];
            sequences = new long[capacity];
        }

        void record(int correlationId, long sequence) {
            correlationIds[next] = correlationId;
            sequences[next] = sequence;
            next = next + 1 == correlationIds.length ? 0 : next + 1;
            size = Math.min(size + 1, correlationIds.length);
        }

        /** The sequence the publish with this correlation id got, or 0 when it is not remembered. */
        long sequenceOf(int correlationId) {
            // newest first: a publish sent again is one of the last the client sent
            for (int i = 1; i <= size; i++) {
                int slot = Math.floorMod(next - i, correlationIds.length);
                if (correlationIds[slot] == correlationId) {
                    return sequences[slot];
                }
            }
            return 0;
        }
    }
}
