package io.ringcast.cluster;

/**
 * Where a node's cluster layer delivers the updates every node applies: the server puts each into
 * its sequencer's ring with the topic sequence given here, so every node numbers every topic alike.
 *
 * <p>Thread contract: called on the cluster thread only, for each partition in partition-sequence
 * order (updates of one topic therefore in topic-sequence order). It may block to push back; the
 * cluster thread then stops reading its peers.
 */
@FunctionalInterface
public interface UpdateSink {

    /**
     * Applies one update.
     *
     * @param path          the topic
     * @param topicSequence the sequence its owner gave it; consecutive for a topic, except after a
     *                      node catches up from a snapshot
     * @param value         the full value; the sink owns the array from here on
     */
    void apply(String path, long topicSequence, byte[] value);
}
