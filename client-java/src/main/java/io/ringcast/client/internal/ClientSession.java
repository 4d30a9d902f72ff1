package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.collection.IntObjectHashMap;
import io.ringcast.client.PublishOutcomeUnknownException;
import io.ringcast.client.RingcastException;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.Delta;
import io.ringcast.protocol.DeltaFormatException;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.TopicPath;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client's protocol state that outlives connections, and its one way to the wire:
 * <ul>
 *   <li>subscriptions by id, open until the application closes them or the server refuses them;</li>
 *   <li>topics by path with the last sequence delivered: an {@code UPDATE} at or below it is a
 *       duplicate and dropped, and resume lists are built from it;</li>
 *   <li>publishes waiting for a session, and publishes sent and waiting for their ack;</li>
 *   <li>while a session is open ({@link #attach} .. {@link #detach}), its channel and the
 *       {@link FrameBatcher} that packs outbound messages into frames.</li>
 * </ul>
 *
 * <p>Thread contract: event-loop confined. Application threads reach it only through
 * {@link CommandProxy}; inbound messages come from {@link ConnectionHandler} on the same loop.
 * The entry points assert it. Listeners are called from here, on the event loop.
 *
 * <p>Ids: subscription ids count up from 1 and publish correlation ids cycle through
 * {@code [2^30, 2^31)}, so an {@code ERROR}'s correlation id names one or the other without
 * looking at its code.
 */
final class ClientSession {
    /** Limits for the local syntax checks: the protocol's widest; the server enforces its own. */
    static final PathLimits PERMISSIVE_LIMITS = new PathLimits(65535, 1024);
    static final int FIRST_PUBLISH_CORRELATION_ID = 1 << 30;
    static final int LAST_SUBSCRIPTION_ID = FIRST_PUBLISH_CORRELATION_ID - 1;
    /** Frames one drain may write before it yields the event loop to reads. */
    static final int MAX_FRAMES_PER_DRAIN = 8;
    static final int UNSUBSCRIBE_BYTES = WireCodec.HEADER_BYTES + 4;
    static final int PING_BYTES = WireCodec.HEADER_BYTES + 8;
    /**
     * Publishes sent and not acked at most (the protocol's rule for a client that gives a
     * publisher id: the server's ledger remembers that many, so a publish sent again that it does
     * not find was never applied). More wait in memory and go out as acks come.
     */
    static final int PUBLISH_WINDOW = 1024;

    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);
    private static final ClientSubscription[] NO_SUBSCRIPTIONS = TopicState.NO_SUBSCRIPTIONS;
    private static final byte[] NO_VALUE = new byte[0];

    private final EventLoop eventLoop;
    private final IntObjectHashMap<ClientSubscription> subscriptions = new IntObjectHashMap<>();
    private final Map<String, TopicState> topics = new HashMap<>();
    private final ArrayDeque<PublishRequest> waitingPublishes = new ArrayDeque<>();
    /** Sent publishes by {@link #unackedKey} of their correlation id. */
    private final IntObjectHashMap<PublishRequest> unacked = new IntObjectHashMap<>();
    private final FrameBatcher frames = new FrameBatcher();
    /** Bumped on every change to {@link #subscriptions}; topics cache their matches per version. */
    private int subscriptionsVersion;
    private int nextSubscriptionId = 1;
    private int nextCorrelationId = FIRST_PUBLISH_CORRELATION_ID;
    private long sendOrder;
    private long pingNonce;
    /** The open session's channel, null between sessions. */
    private Channel channel;
    /** Counts sessions attached; {@link ClientSubscription#liveConnection} compares with it. */
    private int connection;
    private RingcastException closedError;
    private long duplicatesDropped;
    /**
     * How many server addresses the client has: a publish a cluster node refuses because it is on
     * the minority side of a split is retried through the others, up to once each.
     */
    private final int addressCount;
    /** Publishes a minority node refused, to send again through the next node, oldest first. */
    private final ArrayDeque<PublishRequest> retryElsewhere = new ArrayDeque<>();
    /** This session's node is on the minority side: new publishes wait, and the session ends once nothing is unacked. */
    private boolean leavingMinorityNode;
    /**
     * Sent in {@code HELLO} on every connection: with it and correlation ids never reused, a publish
     * whose connection was lost before its ack is sent again ({@code REPUBLISH}) and applied once.
     */
    private final long publisherId = newPublisherId();
    /** Publishes whose connection was lost before their ack, to send again first on the next, oldest first. */
    private final ArrayDeque<PublishRequest> sendAgain = new ArrayDeque<>();

    ClientSession(EventLoop eventLoop, int addressCount) {
        this.eventLoop = eventLoop;
        this.addressCount = addressCount;
    }

    // ------------------------------------------------------------------ commands (CommandProxy)

    void subscribe(ClientSubscription s) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            s.abandon(closedError);
            return;
        }
        if (s.isClosed()) {
            return; // closed before it got here
        }
        if (nextSubscriptionId > LAST_SUBSCRIPTION_ID) {
            s.refused(new RingcastException("subscription ids exhausted: " + LAST_SUBSCRIPTION_ID + " made"));
            return;
        }
        s.id = nextSubscriptionId++;
        subscriptions.put(s.id, s);
        subscriptionsVersion++;
        if (channel != null) {
            sendSubscribe(s);
        }
    }

    void unsubscribe(ClientSubscription s) {
        assert eventLoop.inEventLoop();
        if (s.id == 0 || subscriptions.get(s.id) != s) {
            return; // never registered, refused, or the client closed
        }
        subscriptions.remove(s.id);
        subscriptionsVersion++;
        if (channel != null) {
            WireCodec.writeUnsubscribe(frames.reserve(UNSUBSCRIBE_BYTES), s.id);
        }
    }

    void publish(PublishRequest p) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            p.fail(closedError);
        } else if (channel != null && !leavingMinorityNode && waitingPublishes.isEmpty()
                && unacked.size() < PUBLISH_WINDOW) {
            sendPublish(p);
        } else {
            waitingPublishes.add(p);
        }
    }

    /** Whether a drain should stop: the socket is backed up, or the drain wrote its share of frames. */
    boolean mustYield() {
        return channel != null && (!channel.isWritable() || frames.framesSinceFlush() >= MAX_FRAMES_PER_DRAIN);
    }

    /** Whether commands can be taken now: no session (they wait in memory), or a writable one. */
    boolean canTakeCommands() {
        return channel == null || channel.isWritable();
    }

    /** Ends a batch: writes the last frame and flushes once. */
    void flush() {
        assert eventLoop.inEventLoop();
        frames.flush();
    }

    /** Pauses a batch that has more to come: flushes the full frames, keeps filling the last one. */
    void flushWritten() {
        assert eventLoop.inEventLoop();
        frames.flushWritten();
    }

    /** Sends {@code PING} (the write side was idle). */
    void ping() {
        assert eventLoop.inEventLoop();
        if (channel != null) {
            WireCodec.writePing(frames.reserve(PING_BYTES), ++pingNonce);
            frames.flush();
        }
    }

    // ------------------------------------------------------------------ sessions (ConnectionHandler)

    /**
     * A session started ({@code WELCOME}): sends every open subscription (those the server had
     * confirmed before with their resume lists), then the publishes that waited, in one flush.
     */
    void attach(Channel ch, int serverMaxFrameBytes) {
        assert eventLoop.inEventLoop();
        assert channel == null : "a session is attached already";
        if (closedError != null) {
            return;
        }
        channel = ch;
        connection++;
        leavingMinorityNode = false;
        frames.start(ch, serverMaxFrameBytes);
        ClientSubscription[] open = subscriptions.values().toArray(NO_SUBSCRIPTIONS);
        Arrays.sort(open, Comparator.comparingInt(s -> s.id)); // in the order they were made
        for (ClientSubscription s : open) {
            sendSubscribe(s);
        }
        PublishRequest p;
        while ((p = sendAgain.poll()) != null) {
            sendRepublish(p);
        }
        while ((p = retryElsewhere.poll()) != null) {
            // with its id: an earlier send on a lost connection may have been applied
            sendRepublish(p);
        }
        sendWaitingPublishes();
        frames.flush();
    }

    /** Sends publishes that waited while the window has room, oldest first; not flushed. */
    private void sendWaitingPublishes() {
        while (channel != null && !leavingMinorityNode && unacked.size() < PUBLISH_WINDOW
                && !waitingPublishes.isEmpty()) {
            sendPublish(waitingPublishes.poll());
        }
    }

    /**
     * The session ended: forgets the channel, keeps the publishes sent and not acked (they may or
     * may not have been applied) to send again on the next session, and with
     * {@code tellSubscriptions} gives every subscription's listener the reason (a fatal server error).
     */
    void detach(RingcastException reasonOrNull, boolean tellSubscriptions) {
        assert eventLoop.inEventLoop();
        if (channel == null) {
            return;
        }
        channel = null;
        frames.stop();
        for (PublishRequest p : takeUnacked()) {
            sendAgain.add(p);
        }
        if (tellSubscriptions && reasonOrNull != null) {
            for (ClientSubscription s : subscriptions.values().toArray(NO_SUBSCRIPTIONS)) {
                s.notifyError(reasonOrNull);
            }
        }
    }

    /** The client closed: fails everything pending with {@code error}; later commands fail with it too. */
    void close(RingcastException error) {
        assert eventLoop.inEventLoop();
        if (closedError != null) {
            return;
        }
        closedError = error;
        channel = null;
        frames.stop();
        for (PublishRequest p : takeUnacked()) {
            p.fail(error);
        }
        PublishRequest p;
        while ((p = sendAgain.poll()) != null) {
            p.fail(error);
        }
        while ((p = retryElsewhere.poll()) != null) {
            p.fail(error);
        }
        while ((p = waitingPublishes.poll()) != null) {
            p.fail(error);
        }
        for (ClientSubscription s : subscriptions.values().toArray(NO_SUBSCRIPTIONS)) {
            s.abandon(error);
        }
        subscriptions.clear();
        subscriptionsVersion++;
    }

    boolean isClosed() {
        return closedError != null;
    }

    // ------------------------------------------------------------------ inbound (ConnectionHandler)

    /** The topic with this path, known from now on for the client's life. */
    TopicState topic(String path) throws ProtocolException {
        TopicState t = topics.get(path);
        if (t == null) {
            t = new TopicState(path, TopicPath.validate(path, PERMISSIVE_LIMITS));
            topics.put(path, t);
        }
        return t;
    }

    /**
     * {@code SNAPSHOT}: to the subscription it names, or with id 0 to every matching one. Always
     * delivered (it is a subscription's starting value even when the topic's sequence is known).
     * Any snapshot sets the topic's last sequence, even backwards: it is the server's current one,
     * at or above anything this session was sent, so a higher number the client remembers comes
     * from a server that lost its state and numbers the topic from 1 again.
     */
    void onSnapshot(int subscriptionId, TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex,
                    int valueLength) {
        assert eventLoop.inEventLoop();
        boolean gap = (flags & UpdateFlags.GAP) != 0;
        boolean noValue = gap && (flags & UpdateFlags.NO_VALUE) != 0;
        byte[] value = noValue ? NO_VALUE : ByteBufUtil.getBytes(frame, valueIndex, valueLength);
        t.lastSequence = sequence;
        t.lastValue = noValue ? null : value;
        UpdateKind kind = noValue ? UpdateKind.GAP_WITHOUT_VALUE
                : gap ? UpdateKind.SNAPSHOT_AFTER_GAP : UpdateKind.SNAPSHOT;
        if (subscriptionId == 0) {
            ClientSubscription[] matches = matching(t);
            if (matches.length > 0) {
                ReceivedUpdate u = new ReceivedUpdate(t.path, sequence, value, kind);
                for (ClientSubscription s : matches) {
                    s.deliver(u);
                }
            }
        } else {
            ClientSubscription s = subscriptions.get(subscriptionId);
            if (s != null) {
                s.deliver(new ReceivedUpdate(t.path, sequence, value, kind));
            }
        }
    }

    /**
     * {@code UPDATE}: dropped when not newer than the topic's last sequence, else (a delta applied
     * to the previous value first) to every live matching subscription.
     *
     * @throws ProtocolException when a delta cannot be applied: it does not follow the value the
     *                           client has, or it is corrupt. Nothing is delivered; the connection
     *                           ends and the client resumes from its last good value.
     */
    void onUpdate(TopicState t, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        assert eventLoop.inEventLoop();
        if (sequence <= t.lastSequence) {
            duplicatesDropped++;
            return;
        }
        byte[] value;
        if ((flags & UpdateFlags.DELTA) != 0) {
            value = applyDelta(t, sequence, frame, valueIndex, valueLength);
        } else {
            value = ByteBufUtil.getBytes(frame, valueIndex, valueLength);
        }
        t.lastSequence = sequence;
        t.lastValue = value;
        UpdateKind kind = (flags & UpdateFlags.CONFLATED) != 0 ? UpdateKind.CONFLATED : UpdateKind.UPDATE;
        ReceivedUpdate u = null;
        for (ClientSubscription s : matching(t)) {
            if (s.liveConnection == connection) {
                if (u == null) {
                    u = new ReceivedUpdate(t.path, sequence, value, kind);
                }
                s.deliver(u);
            }
        }
    }

    private static byte[] applyDelta(TopicState t, long sequence, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        if (t.lastValue == null || t.lastSequence != sequence - 1) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "delta for " + t.path + " #" + sequence
                    + " does not follow the value the client has (#" + t.lastSequence
                    + (t.lastValue == null ? ", none kept" : "") + ")");
        }
        ByteBuf target = Unpooled.buffer(Math.max(t.lastValue.length, valueLength));
        try {
            Delta.apply(Unpooled.wrappedBuffer(t.lastValue), frame.slice(valueIndex, valueLength), target);
            return ByteBufUtil.getBytes(target);
        } catch (DeltaFormatException e) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "bad delta for " + t.path + " #" + sequence + ": "
                    + e.getMessage());
        } finally {
            target.release();
        }
    }

    void onPublishAck(int correlationId, long sequence) {
        assert eventLoop.inEventLoop();
        PublishRequest p = unacked.remove(unackedKey(correlationId));
        if (p != null) {
            p.acked(sequence);
        }
        leaveMinorityNodeOnceAnswered();
        sendWaitingPublishes();
    }

    /** After a {@code NO_MAJORITY}: once every publish sent to this node is answered, move to the next address. */
    private void leaveMinorityNodeOnceAnswered() {
        if (leavingMinorityNode && unacked.isEmpty() && channel != null) {
            channel.close();
        }
    }

    void onSubscribed(int subscriptionId) {
        assert eventLoop.inEventLoop();
        ClientSubscription s = subscriptions.get(subscriptionId);
        if (s != null) {
            s.confirmedOnce = true;
            s.liveConnection = connection;
            s.confirm();
        }
    }

    /**
     * A non-fatal {@code ERROR}: fails the publish or drops the subscription its correlation id
     * names. {@code code} is null for a code this version does not know.
     *
     * @return whether the id named a pending publish or an open subscription
     */
    boolean onRequestError(ErrorCode code, int wireCode, int correlationId, String reason) {
        assert eventLoop.inEventLoop();
        String message = (code != null ? code.name() : "error " + wireCode) + ": " + reason;
        RingcastException error = code == ErrorCode.PUBLISH_OUTCOME_UNKNOWN
                ? new PublishOutcomeUnknownException(message) : new RingcastException(message, code, 0);
        if (correlationId >= FIRST_PUBLISH_CORRELATION_ID) {
            PublishRequest p = unacked.remove(unackedKey(correlationId));
            if (p == null) {
                return false;
            }
            if (code == ErrorCode.NO_MAJORITY && ++p.minorityRefusals < addressCount) {
                // nothing was applied: send it again through another node, once the others are answered
                retryElsewhere.add(p);
                leavingMinorityNode = true;
                LOG.info("publish to '{}' refused by a node on the minority side of a split; trying another address",
                        p.topic);
            } else {
                p.fail(error);
            }
            leaveMinorityNodeOnceAnswered();
            sendWaitingPublishes();
            return true;
        }
        ClientSubscription s = subscriptions.remove(correlationId);
        if (s == null) {
            return false;
        }
        subscriptionsVersion++;
        s.refused(error);
        return true;
    }

    // ------------------------------------------------------------------ diagnostics

    long duplicatesDropped() {
        return duplicatesDropped;
    }

    long framesWritten() {
        return frames.framesWritten();
    }

    int unackedPublishes() {
        return unacked.size();
    }

    // ------------------------------------------------------------------ private

    private void sendSubscribe(ClientSubscription s) {
        int maxFrameBytes = frames.maxFrameBytes();
        int bytes = WireCodec.HEADER_BYTES + 4 + 2 + s.selectorBytes + 4;
        if (bytes > maxFrameBytes) {
            subscriptions.remove(s.id);
            subscriptionsVersion++;
            s.refused(new RingcastException("selector '" + s.selector.text() + "' does not fit in the server's "
                    + "frame limit of " + maxFrameBytes + " bytes", ErrorCode.INVALID_SELECTOR, 0));
            return;
        }
        Map<String, Long> resume = Collections.emptyMap();
        if (s.confirmedOnce) {
            resume = new LinkedHashMap<>();
            int left = 0;
            for (TopicState t : topics.values()) {
                if (t.lastSequence > 0 && s.selector.matches(t.segments)) {
                    int entryBytes = 2 + t.pathBytes + 8;
                    if (bytes + entryBytes > maxFrameBytes) {
                        left++;
                    } else {
                        resume.put(t.path, t.lastSequence);
                        bytes += entryBytes;
                    }
                }
            }
            if (left > 0) {
                // a message never spans frames: these topics come back as plain snapshots
                LOG.warn("resume list of subscription '{}' cut to {} topics to fit the server's frame limit of {} "
                        + "bytes; {} topics resume from a snapshot", s.selector.text(), resume.size(), maxFrameBytes, left);
            }
            s.liveConnection = connection;
        }
        WireCodec.writeSubscribe(frames.reserve(bytes), s.id, s.selector.text(), resume);
    }

    private void sendPublish(PublishRequest p) {
        if (failsUnlessItFits(p)) {
            return;
        }
        int id = nextCorrelationId();
        p.correlationId = id;
        p.sendOrder = sendOrder++;
        unacked.put(unackedKey(id), p);
        WireCodec.writePublish(frames.reserve(p.messageBytes), id, p.topic, p.value);
    }

    /** Fails the publish with {@code VALUE_TOO_LARGE} when it exceeds this server's frame limit; whether it did. */
    private boolean failsUnlessItFits(PublishRequest p) {
        int maxFrameBytes = frames.maxFrameBytes();
        if (p.messageBytes <= maxFrameBytes) {
            return false;
        }
        p.fail(new RingcastException("publish to '" + p.topic + "' takes " + p.messageBytes
                + " bytes, more than the server's frame limit of " + maxFrameBytes, ErrorCode.VALUE_TOO_LARGE, 0));
        return true;
    }

    private int nextCorrelationId() {
        int id;
        do {
            id = nextCorrelationId;
            nextCorrelationId = id == Integer.MAX_VALUE ? FIRST_PUBLISH_CORRELATION_ID : id + 1;
        } while (unacked.containsKey(unackedKey(id))); // after a wrap only; in flight is far below 2^30
        return id;
    }

    /**
     * Netty's {@code IntObjectHashMap} hashes an int to itself and probes linearly, so sequential
     * correlation ids would sit in one long run of slots, and each removal scans the run: 100k
     * acks cost seconds. Multiplying by an odd constant (Fibonacci hashing) is a bijection on int
     * that spreads consecutive ids over the table.
     */
    private static int unackedKey(int correlationId) {
        return correlationId * 0x9E3779B9;
    }

    /** The publishes sent and not acked, in the order they were sent; none are left unacked. */
    private PublishRequest[] takeUnacked() {
        PublishRequest[] lost = unacked.values().toArray(new PublishRequest[0]);
        unacked.clear();
        Arrays.sort(lost, Comparator.comparingLong(r -> r.sendOrder));
        return lost;
    }

    /** A publish sent before whose ack never came, with the correlation id it had, as {@code REPUBLISH}. */
    private void sendRepublish(PublishRequest p) {
        if (failsUnlessItFits(p)) {
            return;
        }
        unacked.put(unackedKey(p.correlationId), p);
        WireCodec.writeRepublish(frames.reserve(p.messageBytes), p.correlationId, p.topic, p.value);
    }

    private static long newPublisherId() {
        long id;
        do {
            id = new SecureRandom().nextLong();
        } while (id == 0);
        return id;
    }

    long publisherId() {
        return publisherId;
    }

    /** Open subscriptions matching the topic, cached on the topic until the subscriptions change. */
    private ClientSubscription[] matching(TopicState t) {
        if (t.matchesVersion != subscriptionsVersion) {
            ArrayList<ClientSubscription> found = null;
            for (ClientSubscription s : subscriptions.values()) {
                if (s.selector.matches(t.segments)) {
                    if (found == null) {
                        found = new ArrayList<>(4);
                    }
                    found.add(s);
                }
            }
            t.matches = found == null ? NO_SUBSCRIPTIONS : found.toArray(NO_SUBSCRIPTIONS);
            t.matchesVersion = subscriptionsVersion;
        }
        return t.matches;
    }
}
