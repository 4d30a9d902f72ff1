package io.ringcast.cluster;

/**
 * Where a node's cluster layer delivers the updates every node applies: the server puts each into
 * its sequencer's ring with the topic sequence given here, so every node numbers every topic alike.
 *
 * <p>Thread contract: called on the Raft engine's runner thread only, in log order (updates of one
 * topic therefore in topic-sequence order). It may block to push back (the engine then stops
 * applying, and replicating, until it returns): never call it from an event loop.
 */
@FunctionalInterface
public interface UpdateSink {

    /**
     * Applies one update.
     *
     * @param path          the topic
     * @param topicSequence the sequence its group's log gave it; consecutive for a topic, except
     *                      after a node restores a snapshot
     * @param value         the full value; the sink owns the array from here on
     */
    void apply(String path, long topicSequence, byte[] value);
}
