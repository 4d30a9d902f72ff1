package io.ringcast.server.internal;

/**
 * The sessions that receive one stream of a topic's updates, and the stream's identity: the
 * topic's plain subscribers (the {@link Topic} itself), or those of one view of it
 * ({@link TopicView}). The fan-out ring carries an audience's set with each update, and a session's
 * conflation holds back at most one update per audience, so a session with a plain and a viewed
 * subscription on one topic keeps both streams apart.
 *
 * <p>{@link #subscribers} is written by {@link SubscriberSets} only, on the sequencer thread; other
 * threads read the reference a fan-out event captured, and the final identity below.
 */
abstract class Audience {
    SubscriberSet subscribers;

    Audience(SubscriberSet subscribers) {
        this.subscribers = subscribers;
    }

    /** The topic whose updates the audience receives. */
    abstract Topic topic();

    /** The view the updates go through, 0 for the topic's plain subscribers. */
    abstract int viewId();
}
