package io.ringcast.server.internal;

/**
 * The node's bound on all topics' histories together ({@code history.nodeMaxBytes}): the bytes
 * every topic's history takes, newest values included, where {@code history.length} and
 * {@code history.maxBytes} bound one topic's and nothing bounded the sum, which grew with the topic
 * count until the node ran out of direct memory and stopped (one anonymous publisher of 20-kB values
 * to new topics did that within seconds).
 *
 * <p>It bounds the updates kept as well ({@code history.nodeMaxEntries}): each holds about 160 B of
 * heap beside its frame, so small values under a bound on bytes filled a node's heap (five nodes of
 * 128 MB, the demo's 500 topics at history 4,096: 20 MB more live heap every 45 s, Netty's buffer
 * objects and their recycler handles, while the heap guard refused every new topic).
 *
 * <p>Past either bound, what goes first is what a client is least likely to miss: the older updates of
 * the topics updated longest ago (a resume from before them is told of the gap, with the newest value);
 * only when every topic is down to its newest value do the newest values of the topics updated
 * longest ago go (a new subscriber of such a topic gets no value until its next update, as with the
 * last-value cache off; a resume is told of the gap). The topic being recorded keeps its value. Two
 * lists, least recently updated first, linked through the topics themselves: the topics whose history
 * holds more than the newest ({@link Topic#olderLinkOlder}), and every topic with a value
 * ({@link Topic#valueLinkOlder}). A record moves its topic to both ends in O(1), and each update is let
 * go once, so a record costs O(1) amortized.
 *
 * <p>Thread contract: the sequencer thread only (the thread that owns the topics).
 */
final class HistoryBudget {
    private final long maxBytes;
    private final long maxEntries;
    /** Told of each newest value let go: the node's count of cached values. */
    private final Runnable valueLetGo;
    private long bytes;
    private long entries;
    private long updatesLetGo;
    private long valuesLetGo;
    private Topic olderOldest;
    private Topic olderNewest;
    private Topic valueOldest;
    private Topic valueNewest;

    /**
     * @param maxBytes   {@code history.nodeMaxBytes} in force; {@link Long#MAX_VALUE} for no bound
     * @param maxEntries {@code history.nodeMaxEntries} in force; {@link Long#MAX_VALUE} for no bound
     * @param valueLetGo told of each topic whose newest value is let go
     */
    HistoryBudget(long maxBytes, long maxEntries, Runnable valueLetGo) {
        if (maxBytes <= 0 || maxEntries <= 0) {
            throw new IllegalArgumentException("a history budget of " + maxBytes + " bytes and " + maxEntries
                    + " updates");
        }
        this.maxBytes = maxBytes;
        this.maxEntries = maxEntries;
        this.valueLetGo = valueLetGo;
    }

    /** No bound but each topic's own: for topics made outside a sequencer (tests, tools). */
    static HistoryBudget unbounded() {
        return new HistoryBudget(Long.MAX_VALUE, Long.MAX_VALUE, () -> { });
    }

    /** A history grew ({@code change > 0}) or shrank by {@code change} bytes. */
    void charge(long change) {
        bytes += change;
        assert bytes >= 0 : "history bytes below zero: " + bytes;
    }

    /** A history came to hold {@code change} more updates (fewer when negative). */
    void count(int change) {
        entries += change;
        assert entries >= 0 : "history updates below zero: " + entries;
    }

    /** Past either bound. */
    private boolean over() {
        return bytes > maxBytes || entries > maxEntries;
    }

    /**
     * The topic recorded an update (its bytes charged): it moves to the ends, then, past the bound,
     * the topics updated longest ago let their older updates go, then their newest values, until the
     * histories are within the bound or only this topic's newest is left.
     */
    void recorded(Topic topic) {
        if (valueNewest != topic) {
            unlinkValue(topic);
            appendValue(topic);
        }
        if (topic.historySize() > 1) {
            if (olderNewest != topic) {
                unlinkOlder(topic);
                appendOlder(topic);
            }
        } else {
            unlinkOlder(topic);
        }
        while (over() && olderOldest != null) {
            Topic front = olderOldest;
            if (front.forgetOldestUpdate()) {
                updatesLetGo++;
            }
            if (front.historySize() <= 1) {
                unlinkOlder(front);
            }
        }
        while (over() && valueOldest != topic) {
            valueOldest.releaseHistory(); // leaves both lists
            valuesLetGo++;
            valueLetGo.run();
        }
    }

    /** The topic let its whole history go (its bytes charged back): it leaves both lists. */
    void released(Topic topic) {
        unlinkOlder(topic);
        unlinkValue(topic);
    }

    /** The bytes all histories take now, newest values included. */
    long bytes() {
        return bytes;
    }

    /** The updates all histories hold now, newest values included. */
    long entries() {
        return entries;
    }

    /** Older updates let go so far to keep within the bound. */
    long updatesLetGo() {
        return updatesLetGo;
    }

    /** Newest values let go so far to keep within the bound, once every topic was down to its newest. */
    long valuesLetGo() {
        return valuesLetGo;
    }

    private void appendOlder(Topic topic) {
        topic.olderLinkOlder = olderNewest;
        topic.olderLinkNewer = null;
        if (olderNewest != null) {
            olderNewest.olderLinkNewer = topic;
        } else {
            olderOldest = topic;
        }
        olderNewest = topic;
        topic.inOlderList = true;
    }

    private void unlinkOlder(Topic topic) {
        if (!topic.inOlderList) {
            return;
        }
        if (topic.olderLinkOlder != null) {
            topic.olderLinkOlder.olderLinkNewer = topic.olderLinkNewer;
        } else {
            olderOldest = topic.olderLinkNewer;
        }
        if (topic.olderLinkNewer != null) {
            topic.olderLinkNewer.olderLinkOlder = topic.olderLinkOlder;
        } else {
            olderNewest = topic.olderLinkOlder;
        }
        topic.olderLinkOlder = null;
        topic.olderLinkNewer = null;
        topic.inOlderList = false;
    }

    private void appendValue(Topic topic) {
        topic.valueLinkOlder = valueNewest;
        topic.valueLinkNewer = null;
        if (valueNewest != null) {
            valueNewest.valueLinkNewer = topic;
        } else {
            valueOldest = topic;
        }
        valueNewest = topic;
        topic.inValueList = true;
    }

    private void unlinkValue(Topic topic) {
        if (!topic.inValueList) {
            return;
        }
        if (topic.valueLinkOlder != null) {
            topic.valueLinkOlder.valueLinkNewer = topic.valueLinkNewer;
        } else {
            valueOldest = topic.valueLinkNewer;
        }
        if (topic.valueLinkNewer != null) {
            topic.valueLinkNewer.valueLinkOlder = topic.valueLinkOlder;
        } else {
            valueNewest = topic.valueLinkOlder;
        }
        topic.valueLinkOlder = null;
        topic.valueLinkNewer = null;
        topic.inValueList = false;
    }
}
