package io.ringcast.cluster;

/**
 * Where a node's cluster layer delivers the updates and removals every node applies: the server puts
 * each into its sequencer's ring with the topic sequence given here, so every node numbers every
 * topic alike.
 *
 * <p>Thread contract: called on the Raft engine's runner thread only (one per group under Ratis), in
 * log order: a topic's updates and its removal therefore in the order the log decided them, its
 * updates in topic-sequence order. It may block to push back (the engine then stops applying, and
 * replicating, until it returns): never call it from an event loop.
 */
@FunctionalInterface
public interface UpdateSink {

    /**
     * Applies one update.
     *
     * @param path          the topic
     * @param topicSequence the sequence its group's log gave it; consecutive for a topic, except
     *                      after a node restores a snapshot; 1 for the first update of a topic made
     *                      anew after a {@link #removed removal}
     * @param incarnation   the topic's incarnation, decided by the log when the topic was made: the
     *                      same on every node, and different between a path's removed topic and the
     *                      one made after it (docs/protocol.md, "Removing topics"); 0 (not known)
     *                      for a topic a node read from a snapshot written before incarnations
     * @param value         the full value; the sink owns the array from here on
     */
    void apply(String path, long topicSequence, int incarnation, byte[] value);

    /**
     * The topic at {@code path} was removed (a client's {@code REMOVE}, an HTTP request, an
     * expiry): every node removes it here, after its update {@code lastSequence} and before the
     * first update of a topic made at the path after it, which starts from sequence 1 with another
     * incarnation. Called on the engine's thread, in log order, like {@link #apply}. The default
     * does nothing.
     *
     * @param path         the topic, exactly
     * @param lastSequence the sequence of its last update, as the log numbered it
     * @param incarnation  the removed topic's incarnation (0: not known): a node that is handed a
     *                     removal again (a catch-up that replays entries) leaves a topic made at the
     *                     path after it alone
     */
    default void removed(String path, long lastSequence, int incarnation) {
    }
}
