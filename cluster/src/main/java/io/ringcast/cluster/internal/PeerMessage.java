package io.ringcast.cluster.internal;

import java.util.List;

/**
 * The messages nodes send each other over their peer links (docs/clustering.md, "Between nodes").
 * Decoded by {@link PeerCodec}; each is handled on the cluster thread.
 */
sealed interface PeerMessage {

    /** First message on every link: who is speaking. */
    record Hello(String node) implements PeerMessage {
    }

    /**
     * A publish a node received, sent to its partition's owner. {@code (origin, requestId)} names
     * it for the answer; {@link #dedupKey} identifies it across retries.
     *
     * @param publisherId   the client's publisher id, 0 when it gave none
     * @param correlationId the client's correlation id (meaningful with a publisher id)
     */
    record Forward(long requestId, String origin, int partition, String path, byte[] value, long publisherId,
                   int correlationId) implements PeerMessage {
        String dedupKey() {
            return PeerMessage.dedupKey(publisherId, correlationId, origin, requestId);
        }
    }

    /** The owner's answer to a {@link Forward}: {@link #OK} with the topic sequence, or why not. */
    record ForwardResult(long requestId, int status, long topicSequence) implements PeerMessage {
        static final int OK = 0;
        /** The owner is on the minority side of a split. */
        static final int NO_MAJORITY = 1;
        /** The addressee does not own the partition (yet): route again. */
        static final int NOT_OWNER = 2;
    }

    /**
     * One sequenced update of a partition. Sent by the owner to its backup ({@code replicate}: ack
     * it with {@link Replicated}) and, once the backup has it, to every other node; also the
     * answer to a {@link Fetch}.
     */
    record Update(int partition, long partitionSequence, long topicSequence, String origin, long requestId,
                  String path, byte[] value, boolean replicate, long publisherId, int correlationId)
            implements PeerMessage {
        String dedupKey() {
            return PeerMessage.dedupKey(publisherId, correlationId, origin, requestId);
        }

        /** The same update, to be sent on without asking for a {@link Replicated}. */
        Update forwarded() {
            return new Update(partition, partitionSequence, topicSequence, origin, requestId, path, value, false,
                    publisherId, correlationId);
        }
    }

    /**
     * What identifies a publish across retries: the client's publisher id and correlation id, which
     * survive the client's reconnecting through another node; else the receiving node's request id,
     * which survives that node's retries only.
     */
    static String dedupKey(long publisherId, int correlationId, String origin, long requestId) {
        return publisherId != 0 ? "client " + Long.toHexString(publisherId) + '#' + correlationId
                : origin + '#' + requestId;
    }

    /** The backup has applied every update of the partition up to {@code upTo}. */
    record Replicated(int partition, long upTo) implements PeerMessage {
    }

    /** Send me the partition's updates after {@code after} (or a snapshot when the log no longer reaches back). */
    record Fetch(int partition, long after) implements PeerMessage {
    }

    /**
     * The partitions the sender sequences (or finishes sequencing before a handoff), with the last
     * partition sequence of each, as of view {@code viewId}.
     */
    record OwnerState(long viewId, int[] partitions, long[] last) implements PeerMessage {
    }

    /** The sender stopped sequencing the partition at {@code last}; the addressee owns it from {@code last + 1}. */
    record Handoff(int partition, long last) implements PeerMessage {
    }

    /** The partition's topics at partition sequence {@code partitionSequence}: the answer to a fetch the log cannot serve. */
    record PartitionSnapshot(int partition, long partitionSequence, List<TopicValue> topics) implements PeerMessage {
    }

    /** One topic of a {@link PartitionSnapshot}. */
    record TopicValue(String path, long topicSequence, byte[] value) {
    }
}
