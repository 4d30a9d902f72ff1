package io.ringcast.server.internal;

import io.ringcast.protocol.PathLimits;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.function.Predicate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * What the cluster's snapshot ({@link TopicSnapshotContent}) asks the sequencer, through the
 * inbound ring: capture every topic, or take over the topics a snapshot holds. Made on the Raft
 * engine's thread, awaited there or on the snapshot writer's ({@link #await}); answered once, on
 * the sequencer thread ({@link TopicSequencer}).
 */
final class TopicSnapshotRequest {
    /** The topics to take over; null: capture. */
    final List<TopicStateFile.SavedTopic> topics;
    /** This node's path limits, for the topics taken over; null: capture. */
    final PathLimits pathLimits;
    /** The topics concerned: a Raft group's (its snapshot holds those only), or every topic. */
    final Predicate<String> inGroup;
    private final CompletableFuture<PiecedBytes> answer = new CompletableFuture<>();

    private TopicSnapshotRequest(List<TopicStateFile.SavedTopic> topics, PathLimits pathLimits,
                                 Predicate<String> inGroup) {
        this.topics = topics;
        this.pathLimits = pathLimits;
        this.inGroup = inGroup;
    }

    /** Asks for the topics {@code inGroup} accepts, in {@link TopicStateFile}'s format. */
    static TopicSnapshotRequest capture(Predicate<String> inGroup) {
        return new TopicSnapshotRequest(null, null, inGroup);
    }

    /** Asks to replace this node's topics that {@code inGroup} accepts with {@code topics}. */
    static TopicSnapshotRequest takeOver(List<TopicStateFile.SavedTopic> topics, PathLimits pathLimits,
                                         Predicate<String> inGroup) {
        return new TopicSnapshotRequest(List.copyOf(topics), pathLimits, inGroup);
    }

    boolean isCapture() {
        return topics == null;
    }

    /** The sequencer's answer: the topics captured, or null once taken over. Sequencer thread. */
    void answer(PiecedBytes captured) {
        answer.complete(captured);
    }

    /** The sequencer could not do it. Sequencer thread. */
    void fail(Exception why) {
        answer.completeExceptionally(why);
    }

    /**
     * Waits for the sequencer's answer: on the engine thread for a take-over (it blocks the engine,
     * as a full inbound ring does, until the sequencer has reached this request), on the snapshot
     * writer's for a capture.
     *
     * @return the topics captured; null for a take-over
     * @throws IOException when the sequencer failed, or the wait was interrupted (the node is stopping)
     */
    PiecedBytes await() throws IOException {
        try {
            return answer.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting for the sequencer to "
                    + (isCapture() ? "capture" : "take over") + " the snapshot's topics");
        } catch (ExecutionException e) {
            throw new IOException("the sequencer could not " + (isCapture() ? "capture" : "take over")
                    + " the snapshot's topics: " + e.getCause(), e.getCause());
        }
    }
}
