package io.ringcast.client.internal;

import io.netty.util.collection.IntObjectHashMap;
import io.ringcast.protocol.WireCodec;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.TopicPath;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;

/**
 * The client's subscriptions by id and the topics it has heard of by path, for its whole life
 * across connections: which open subscriptions match a topic (cached on the topic), and the
 * resume list a subscription is sent again with.
 *
 * <p>Thread contract: event-loop confined, owned by {@link ClientSession}.
 */
final class SubscriptionTable {
    /** Limits for the local syntax checks: the protocol's widest; the server enforces its own. */
    static final PathLimits PERMISSIVE_LIMITS = new PathLimits(65535, 1024);
    /** Subscription ids stay below publish correlation ids, so an {@code ERROR}'s id names one or the other. */
    static final int LAST_ID = PublishWindow.FIRST_CORRELATION_ID - 1;

    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionTable.class);
    private static final ClientSubscription[] NO_SUBSCRIPTIONS = TopicState.NO_SUBSCRIPTIONS;
    private final IntObjectHashMap<ClientSubscription> byId = new IntObjectHashMap<>();
    private final Map<String, TopicState> topics = new HashMap<>();
    /** Bumped on every change to {@link #byId}; topics cache their matches per version. */
    private int version;
    private int nextId = 1;

    /** Gives the subscription the next id and registers it; false, changing nothing, when ids ran out. */
    boolean add(ClientSubscription s) {
        if (nextId > LAST_ID) {
            return false;
        }
        s.id = nextId++;
        byId.put(s.id, s);
        version++;
        return true;
    }

    ClientSubscription get(int id) {
        return byId.get(id);
    }

    /** Whether this very subscription is registered (not refused, closed, or never added). */
    boolean contains(ClientSubscription s) {
        return s.id != 0 && byId.get(s.id) == s;
    }

    /** Removes and returns the subscription with this id, or null. */
    ClientSubscription remove(int id) {
        ClientSubscription s = byId.remove(id);
        if (s != null) {
            version++;
        }
        return s;
    }

    /** Every open subscription, in the order they were made. */
    ClientSubscription[] inIdOrder() {
        ClientSubscription[] open = all();
        Arrays.sort(open, Comparator.comparingInt(s -> s.id));
        return open;
    }

    /** Every open subscription, a copy that may be iterated while listeners change the table. */
    ClientSubscription[] all() {
        return byId.values().toArray(NO_SUBSCRIPTIONS);
    }

    void clear() {
        byId.clear();
        version++;
    }

    /** The topic with this path, known from now on for the client's life. */
    TopicState topic(String path) throws ProtocolException {
        TopicState t = topics.get(path);
        if (t == null) {
            t = new TopicState(path, TopicPath.validate(path, PERMISSIVE_LIMITS));
            topics.put(path, t);
        }
        return t;
    }

    /** Open subscriptions matching the topic, cached on the topic until the subscriptions change. */
    ClientSubscription[] matching(TopicState t) {
        if (t.matchesVersion != version) {
            ArrayList<ClientSubscription> found = null;
            for (ClientSubscription s : byId.values()) {
                if (s.selector.matches(t.segments)) {
                    if (found == null) {
                        found = new ArrayList<>(4);
                    }
                    found.add(s);
                }
            }
            t.matches = found == null ? NO_SUBSCRIPTIONS : found.toArray(NO_SUBSCRIPTIONS);
            t.matchesVersion = version;
        }
        return t.matches;
    }

    /**
     * Fills {@code into} with the last sequence of every topic the subscription matches that it
     * has one of, as many as fit in {@code roomBytes}, since a message never spans frames: for a
     * plain subscription the topics' last sequences, shared by every plain one; for one with a
     * view, its own per topic, received through its view. The server takes a topic the list
     * leaves out as one the client never saw: it replays it from #1 (through a view: sends its
     * newest value), and {@link UpdateDelivery} drops what was delivered already, or sends a
     * snapshot after a gap when its history no longer reaches back that far.
     *
     * @return the bytes the entries take
     */
    int fillResumeList(ClientSubscription s, int roomBytes, int maxFrameBytes, Map<String, Long> into) {
        ResumeList list = new ResumeList(roomBytes, into);
        if (s.hasView()) {
            s.viewedTopics.forEach((t, viewed) -> list.add(t, viewed.lastSequence));
        } else {
            for (TopicState t : topics.values()) {
                if (s.selector.matches(t.segments)) {
                    list.add(t, t.lastSequence);
                }
            }
        }
        if (list.left > 0) {
            LOG.warn("resume list of subscription '{}' cut to {} topics to fit the server's frame limit of {} "
                    + "bytes; {} topics are answered as never seen: replayed from their first update, or their "
                    + "newest value through a view (what was delivered is dropped), or a snapshot after a gap",
                    s.selector.text(), into.size(), maxFrameBytes, list.left);
        }
        return list.usedBytes;
    }

    /** A resume list being filled up to its room: entries that do not fit are counted, not added. */
    private static final class ResumeList {
        private final int roomBytes;
        private final Map<String, Long> into;
        int usedBytes;
        int left;

        ResumeList(int roomBytes, Map<String, Long> into) {
            this.roomBytes = roomBytes;
            this.into = into;
        }

        void add(TopicState t, long lastSequence) {
            if (lastSequence <= 0) {
                return; // nothing received of it: the server counts it as a topic the client never saw
            }
            int entryBytes = WireCodec.resumeEntryBytes(t.pathBytes);
            if (usedBytes + entryBytes > roomBytes) {
                left++;
            } else {
                into.put(t.path, lastSequence);
                usedBytes += entryBytes;
            }
        }
    }
}
