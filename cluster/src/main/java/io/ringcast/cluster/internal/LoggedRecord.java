package io.ringcast.cluster.internal;

/**
 * One record of a group's log entry ({@link TopicLogCodec}): a publish ({@link LoggedPublish}) or the
 * removal of a topic ({@link LoggedRemoval}). An entry carries them in the order they reached the
 * node's batcher, and {@link TopicLog} decides them in that order.
 */
sealed interface LoggedRecord permits LoggedPublish, LoggedRemoval {

    /** The topic it concerns. */
    String path();
}
