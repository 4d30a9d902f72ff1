package io.ringcast.client.internal;

import io.netty.util.collection.IntObjectHashMap;
import io.ringcast.protocol.WireCodec;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.TopicPath;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client's subscriptions by id and the topics it has heard of by path, across connections
 * (a topic until it is removed): which open subscriptions match a topic (cached on the topic), and
 * the resume list a subscription is sent again with.
 *
 * <p>Thread contract: event-loop confined, owned by {@link ClientSession}.
 */
final class SubscriptionTable {
    /** Limits for the local syntax checks: the protocol's widest; the server enforces its own. */
    static final PathLimits PERMISSIVE_LIMITS = new PathLimits(65535, 1024);
    /** Subscription ids stay below publish correlation ids, so an {@code ERROR}'s id names one or the other. */
    static final int LAST_ID = PublishWindow.FIRST_CORRELATION_ID - 1;

    /** Bytes of one position's incarnation in the {@code incarnations} option: a {@code u32}. */
    private static final int INCARNATION_BYTES = Integer.BYTES;

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

    /** The topic with this path, known from now on until it is removed ({@link #forget}). */
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
     * Forgets a removed topic: its sequence, value and incarnation, and what each subscription with
     * a view received of it; a {@code TOPIC} of the path later starts afresh, from sequence 1, and
     * no resume list names it.
     */
    void forget(TopicState t) {
        t.removed = true;
        topics.remove(t.path, t);
        for (ClientSubscription s : matching(t)) {
            if (s.hasView()) {
                s.viewedTopics.remove(t);
            }
        }
    }

    /**
     * The resume list a confirmed subscription is sent again with, and the options to send it with:
     * the last sequence of every topic the subscription matches that it has one of, as many as fit
     * in {@code roomBytes}, since a message never spans frames: for a plain subscription the
     * topics' last sequences, shared by every plain one; for one with a view, its own per topic,
     * received through its view. The server takes a topic the list leaves out as one the client
     * never saw: it replays it from #1 (through a view: sends its newest value), and
     * {@link UpdateDelivery} drops what was delivered already, or sends a snapshot after a gap
     * when its history no longer reaches back that far.
     *
     * <p>The options are the subscription's, with {@code incarnations} (each position's topic's,
     * in the list's order) when the list has at most {@link WireCodec#MAX_RESUME_INCARNATIONS}
     * positions and the client knows an incarnation of one of them: a server then takes a
     * position of a topic removed and created again since as 0, not as a sequence of the new one.
     * They count in the room: when the list with them does not fit, it is cut further.
     *
     * @param roomBytes what is left of the frame for the list, after the selector and the
     *                  subscription's own options
     */
    ResumeList resumeList(ClientSubscription s, int roomBytes, int maxFrameBytes) {
        ArrayList<TopicState> candidates = new ArrayList<>();
        ArrayList<Long> sequences = new ArrayList<>();
        if (s.hasView()) {
            s.viewedTopics.forEach((t, viewed) -> {
                candidates.add(t);
                sequences.add(viewed.lastSequence);
            });
        } else {
            for (TopicState t : topics.values()) {
                if (s.selector.matches(t.segments)) {
                    candidates.add(t);
                    sequences.add(t.lastSequence);
                }
            }
        }
        Fit plain = new Fit(candidates, sequences, roomBytes, 0, Integer.MAX_VALUE);
        Fit sent = plain;
        SubscribeOptions options = s.options;
        if (plain.count <= WireCodec.MAX_RESUME_INCARNATIONS && plain.anyIncarnation) {
            // the option's head (and the block's count byte when the subscription has no options): what
            // the option with one position adds beyond that position's u32
            int optionHeadBytes = WireCodec.subscribeOptionsBytes(options.withIncarnations(new int[1]))
                    - WireCodec.subscribeOptionsBytes(options.withIncarnations(new int[0])) - INCARNATION_BYTES;
            Fit with = plain.usedBytes + plain.count * INCARNATION_BYTES + optionHeadBytes <= roomBytes ? plain
                    : new Fit(candidates, sequences, roomBytes - optionHeadBytes, INCARNATION_BYTES,
                            WireCodec.MAX_RESUME_INCARNATIONS);
            if (with.anyIncarnation) { // else the ones it knows were cut: the list without the option is longer
                sent = with;
                options = options.withIncarnations(with.incarnations());
            }
        }
        if (sent.left > 0) {
            LOG.warn("resume list of subscription '{}' cut to {} topics to fit the server's frame limit of {} "
                    + "bytes; {} topics are answered as never seen: replayed from their first update, or their "
                    + "newest value through a view (what was delivered is dropped), or a snapshot after a gap",
                    s.selector.text(), sent.count, maxFrameBytes, sent.left);
        }
        return new ResumeList(sent.positions(), options, sent.usedBytes);
    }

    /**
     * What a resuming {@code SUBSCRIBE} carries besides its selector.
     *
     * @param positions     last sequence per topic path, in the order they go on the wire
     * @param options       the subscription's options, with {@code incarnations} parallel to
     *                      {@code positions} when they go
     * @param positionBytes the bytes the positions take ({@link WireCodec#resumeEntryBytes} each)
     */
    record ResumeList(Map<String, Long> positions, SubscribeOptions options, int positionBytes) {
    }

    /**
     * The positions of a resume list that fit in its room, in the candidates' order: each costs its
     * entry and {@code extraBytes} (an incarnation's, when they go), and one that does not fit is
     * counted, not taken, so a later shorter one may still be.
     */
    private static final class Fit {
        private final ArrayList<TopicState> candidates;
        private final ArrayList<Long> sequences;
        private final BitSet taken = new BitSet();
        int count;
        int usedBytes;
        int left;
        boolean anyIncarnation;

        Fit(ArrayList<TopicState> candidates, ArrayList<Long> sequences, int roomBytes, int extraBytes, int maxCount) {
            this.candidates = candidates;
            this.sequences = sequences;
            int room = roomBytes;
            for (int i = 0; i < candidates.size(); i++) {
                if (sequences.get(i) <= 0) {
                    continue; // nothing received of it: the server counts it as a topic the client never saw
                }
                TopicState t = candidates.get(i);
                int entryBytes = WireCodec.resumeEntryBytes(t.pathBytes);
                if (count == maxCount || entryBytes + extraBytes > room) {
                    left++;
                } else {
                    taken.set(i);
                    count++;
                    usedBytes += entryBytes;
                    room -= entryBytes + extraBytes;
                    anyIncarnation |= t.incarnation != 0;
                }
            }
        }

        Map<String, Long> positions() {
            Map<String, Long> positions = new LinkedHashMap<>(count * 2);
            for (int i = taken.nextSetBit(0); i >= 0; i = taken.nextSetBit(i + 1)) {
                positions.put(candidates.get(i).path, sequences.get(i));
            }
            return positions;
        }

        /** The incarnations of the positions taken, in the same order as {@link #positions()}. */
        int[] incarnations() {
            int[] incarnations = new int[count];
            int n = 0;
            for (int i = taken.nextSetBit(0); i >= 0; i = taken.nextSetBit(i + 1)) {
                incarnations[n++] = candidates.get(i).incarnation;
            }
            return incarnations;
        }
    }
}
