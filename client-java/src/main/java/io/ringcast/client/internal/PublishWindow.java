package io.ringcast.client.internal;

import io.netty.util.collection.IntObjectHashMap;
import io.ringcast.client.RingcastException;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * The client's publishes from the application to their ack, across connections: those waiting
 * for a session or for room in the window, those sent and not acked (by correlation id), and
 * those to send again on the next session ({@code REPUBLISH}) because their connection was lost
 * or a cluster node refused them ({@code NO_MAJORITY}) or could not tell their outcome
 * ({@code REPLICATION_TIMEOUT}). Those go again in the order they were first sent, whatever order
 * their refusals came in: the cluster applies a publisher's publishes in the order its session
 * sends them. Writes nothing itself: the
 * {@link ClientSession} asks what to send and tells what was sent.
 *
 * <p>Removals ({@link RemoveRequest}) wait in the same queue, so that publishes and removals go
 * out in the order they were made, and take their correlation ids from the same cycle; they take
 * no room in the window (the ledger's rule is about publishes) and are never sent again: one
 * sent and not answered when the connection is lost fails.
 *
 * <p>Thread contract: event-loop confined, owned by {@link ClientSession}.
 *
 * <p>Correlation ids cycle through {@code [2^30, 2^31)}, above every subscription id.
 */
final class PublishWindow {
    static final int FIRST_CORRELATION_ID = 1 << 30;
    /**
     * Publishes sent and not acked at most (the protocol's rule for a client that gives a
     * publisher id: the server's ledger remembers that many, so a publish sent again that it does
     * not find was never applied). More wait in memory and go out as acks come.
     */
    static final int MAX_UNACKED = 1024;

    /** Publishes and removals waiting for a session, or behind a publish waiting for room, in call order. */
    private final ArrayDeque<CorrelatedRequest> waiting = new ArrayDeque<>();
    /** Sent publishes by {@link #unackedKey} of their correlation id. */
    private final IntObjectHashMap<PublishRequest> unacked = new IntObjectHashMap<>();
    /** Sent removals by correlation id: few at a time, so the id's own hash does. */
    private final IntObjectHashMap<RemoveRequest> unansweredRemovals = new IntObjectHashMap<>();
    /**
     * Publishes to send again first on the next session, oldest (first sent) first: those whose
     * connection was lost before their ack, and those a cluster node refused or could not tell.
     */
    private final PriorityQueue<PublishRequest> sendAgain =
            new PriorityQueue<>(Comparator.comparingLong(r -> r.sendOrder));
    private int nextCorrelationId = FIRST_CORRELATION_ID;
    private long sendOrder;

    /** Whether a new publish may go out now rather than wait: none waits before it and the window has room. */
    boolean canSendNew() {
        return waiting.isEmpty() && hasRoom();
    }

    boolean hasRoom() {
        return unacked.size() < MAX_UNACKED;
    }

    /** Whether no publish or removal waits: a removal may go out now. */
    boolean noneWaiting() {
        return waiting.isEmpty();
    }

    void addWaiting(CorrelatedRequest r) {
        waiting.add(r);
    }

    /** The oldest publish or removal waiting, left in the queue; or null. */
    CorrelatedRequest peekWaiting() {
        return waiting.peek();
    }

    /** The oldest publish or removal waiting, or null. */
    CorrelatedRequest pollWaiting() {
        return waiting.poll();
    }

    /** The publish first sent earliest of those to send again on a new session, or null. */
    PublishRequest pollToResend() {
        return sendAgain.poll();
    }

    /** Gives a new publish its correlation id and holds it until its ack; returns the id. */
    int sent(PublishRequest p) {
        int id = nextCorrelationId();
        p.correlationId = id;
        p.sendOrder = sendOrder++;
        unacked.put(unackedKey(id), p);
        return id;
    }

    /** Gives a removal its correlation id and holds it until its answer; returns the id. */
    int removalSent(RemoveRequest r) {
        int id = nextCorrelationId();
        r.correlationId = id;
        r.sendOrder = sendOrder++;
        unansweredRemovals.put(id, r);
        return id;
    }

    /** The removal sent with this correlation id, no longer held, or null. */
    RemoveRequest removalAnswered(int correlationId) {
        return unansweredRemovals.remove(correlationId);
    }

    /** Holds a publish sent again with the correlation id it had until its ack. */
    void resent(PublishRequest p) {
        unacked.put(unackedKey(p.correlationId), p);
    }

    /** The unacked publish with this correlation id, no longer held, or null. */
    PublishRequest answered(int correlationId) {
        return unacked.remove(unackedKey(correlationId));
    }

    /** A cluster node refused it, or could not tell its outcome: it goes again, through the next node. */
    void retryElsewhere(PublishRequest p) {
        sendAgain.add(p);
    }

    /** Whether every publish and removal sent has had its answer. */
    boolean noneUnanswered() {
        return unacked.isEmpty() && unansweredRemovals.isEmpty();
    }

    int unackedCount() {
        return unacked.size();
    }

    /**
     * The session ended: the publishes sent and not acked may or may not have been applied; they go
     * again next. So may the removals sent and not answered, which fail, in the order they were
     * sent: sent again, one could remove a topic created since.
     */
    void connectionLost() {
        sendAgain.addAll(Arrays.asList(takeUnacked()));
        for (RemoveRequest r : takeUnansweredRemovals()) {
            r.lost();
        }
    }

    /**
     * Fails every publish and removal held: the unanswered ones first (in the order they were
     * sent), then those to send again, then the waiting ones.
     */
    void failAll(RingcastException error) {
        for (PublishRequest p : takeUnacked()) {
            p.fail(error);
        }
        for (RemoveRequest r : takeUnansweredRemovals()) {
            r.fail(error);
        }
        PublishRequest p;
        while ((p = sendAgain.poll()) != null) {
            p.fail(error);
        }
        CorrelatedRequest r;
        while ((r = waiting.poll()) != null) {
            r.fail(error);
        }
    }

    private int nextCorrelationId() {
        int id;
        do {
            id = nextCorrelationId;
            nextCorrelationId = id == Integer.MAX_VALUE ? FIRST_CORRELATION_ID : id + 1;
            // taken again after a wrap only: in flight is far below 2^30
        } while (unacked.containsKey(unackedKey(id)) || unansweredRemovals.containsKey(id));
        return id;
    }

    /** The removals sent and not answered, in the order they were sent; none are left. */
    private RemoveRequest[] takeUnansweredRemovals() {
        RemoveRequest[] lost = unansweredRemovals.values().toArray(new RemoveRequest[0]);
        unansweredRemovals.clear();
        Arrays.sort(lost, Comparator.comparingLong(r -> r.sendOrder));
        return lost;
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
}
