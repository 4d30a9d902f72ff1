package io.ringcast.server.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The topics that expire ({@code expireAfterMs} in {@code features}), in the order a publish last
 * updated them: one queue per distinct {@code expireAfterMs}, oldest first, linked through the
 * topics themselves ({@link Topic#expiryOlder}). Since every topic of a queue waits the same time,
 * its oldest is always the first due: a publish moves its topic to its queue's end in O(1), and
 * {@link #expire} looks only at the fronts. A config names a few distinct times, so there are few
 * queues.
 *
 * <p>Thread contract: the sequencer thread only.
 */
final class TopicExpiry {
    private final Map<Long, Queue> queues = new HashMap<>(4);

    private static final class Queue {
        Topic oldest;
        Topic newest;
        int size;
    }

    /**
     * A publish updated (or made) the topic at {@code nowMillis}: it moves to the end of the
     * queue of its {@code expireAfterMs}, or leaves any queue when it no longer expires.
     */
    void touched(Topic topic, long nowMillis) {
        topic.lastPublishMillis = nowMillis;
        long after = topic.features.expireAfterMs();
        if (topic.expiryQueue != 0) {
            Queue q = queues.get(topic.expiryQueue);
            if (q.newest == topic && topic.expiryQueue == after) {
                return; // the usual case under load: the same topic again
            }
            unlink(q, topic);
        }
        if (after > 0) {
            append(queues.computeIfAbsent(after, a -> new Queue()), topic, after);
        }
    }

    /** The topic's features changed (a hot reload): it moves to the queue of its new {@code expireAfterMs}, keeping its time. */
    void reloaded(Topic topic) {
        long after = topic.features.expireAfterMs();
        if (topic.expiryQueue == after) {
            return;
        }
        if (topic.expiryQueue != 0) {
            unlink(queues.get(topic.expiryQueue), topic);
        }
        if (after > 0) {
            // its place by time: a reload is rare, and the walk from the end stops at the first older
            Queue q = queues.computeIfAbsent(after, a -> new Queue());
            Topic older = q.newest;
            while (older != null && older.lastPublishMillis > topic.lastPublishMillis) {
                older = older.expiryOlder;
            }
            insertAfter(q, older, topic, after);
        }
    }

    /** The topic is removed: it leaves its queue. */
    void forget(Topic topic) {
        if (topic.expiryQueue != 0) {
            unlink(queues.get(topic.expiryQueue), topic);
        }
    }

    /**
     * Hands {@code expired} every topic due at {@code nowMillis}, oldest first per queue; the
     * consumer removes each (and so {@link #forget}s it), or {@link #touched} it to keep it.
     *
     * @return the next time a topic is due, or {@link Long#MAX_VALUE} when none expires
     */
    long expire(long nowMillis, Consumer<Topic> expired) {
        long next = Long.MAX_VALUE;
        for (Map.Entry<Long, Queue> e : queues.entrySet()) {
            long after = e.getKey();
            Queue q = e.getValue();
            Topic oldest;
            while ((oldest = q.oldest) != null && oldest.lastPublishMillis + after <= nowMillis) {
                expired.accept(oldest);
                assert q.oldest != oldest || oldest.lastPublishMillis + after > nowMillis
                        : "an expired topic must leave its queue, or be touched again";
            }
            if (q.oldest != null) {
                next = Math.min(next, q.oldest.lastPublishMillis + after);
            }
        }
        queues.values().removeIf(q -> q.size == 0);
        return next;
    }

    /** The next time a topic is due, or {@link Long#MAX_VALUE}. */
    long nextDue() {
        long next = Long.MAX_VALUE;
        for (Map.Entry<Long, Queue> e : queues.entrySet()) {
            Topic oldest = e.getValue().oldest;
            if (oldest != null) {
                next = Math.min(next, oldest.lastPublishMillis + e.getKey());
            }
        }
        return next;
    }

    /** Topics that expire, for tests and metrics. */
    int size() {
        int n = 0;
        for (Queue q : queues.values()) {
            n += q.size;
        }
        return n;
    }

    private static void append(Queue q, Topic topic, long after) {
        insertAfter(q, q.newest, topic, after);
    }

    /** Links {@code topic} right after {@code older} (null: at the front). */
    private static void insertAfter(Queue q, Topic older, Topic topic, long after) {
        Topic newer = older == null ? q.oldest : older.expiryNewer;
        topic.expiryOlder = older;
        topic.expiryNewer = newer;
        if (older == null) {
            q.oldest = topic;
        } else {
            older.expiryNewer = topic;
        }
        if (newer == null) {
            q.newest = topic;
        } else {
            newer.expiryOlder = topic;
        }
        topic.expiryQueue = after;
        q.size++;
    }

    private static void unlink(Queue q, Topic topic) {
        Topic older = topic.expiryOlder;
        Topic newer = topic.expiryNewer;
        if (older == null) {
            q.oldest = newer;
        } else {
            older.expiryNewer = newer;
        }
        if (newer == null) {
            q.newest = older;
        } else {
            newer.expiryOlder = older;
        }
        topic.expiryOlder = null;
        topic.expiryNewer = null;
        topic.expiryQueue = 0;
        q.size--;
    }
}
