package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What clients' {@code SUBSCRIBE}s make the node keep, an estimate of its heap in bytes, charged to
 * the session ({@link Session#subscribeBytes}) and to its principal (anonymous sessions are one):
 * <ul>
 *   <li>a request, with its resume list, from the moment it is read until the sequencer has answered
 *       it: for a session whose reply is being streamed, the requests it sent behind that reply wait
 *       ({@link Session#pendingRequests}), and the reply itself holds its resume list until its end;</li>
 *   <li>the resume positions kept for topics the node does not have ({@link OpenSubscription#missing}),
 *       until the topic comes or the subscription closes.</li>
 * </ul>
 * A request that would take a session past {@code limits.subscribeBytesPerSession}, or its
 * principal past {@code limits.subscribeBytesPerPrincipal}, is refused before anything of it is kept
 * ({@link #charge}); each kept byte is credited back when the sequencer drops it, and all of a
 * session's when it closes. So a client repeating large resume lists, or queueing them behind a
 * reply it does not read, is refused instead of growing the heap, and many sessions of one principal
 * share one bound.
 *
 * <p>Thread contract: {@link #charge} on the session's event loop, the credits on the sequencer
 * (and on the event loop for a request it charged and then refused); both change the principal's sum and the session's inside the map's per-key
 * {@link ConcurrentHashMap#compute}, so the two sums agree.
 */
final class SubscribeMemory {
    /** A request's own objects (its selector, options, the sequencer's record of it), whatever its resume list. */
    static final int REQUEST_BYTES = 512;
    /** A resume entry's map node, string and boxed sequence, beside the path's characters. */
    static final int RESUME_ENTRY_BYTES = 96;

    private final long perSession;
    private final long perPrincipal;
    private final ConcurrentHashMap<String, long[]> byPrincipal = new ConcurrentHashMap<>();
    private final AtomicLong total = new AtomicLong();

    /**
     * @param perSession   {@code limits.subscribeBytesPerSession}
     * @param perPrincipal {@code limits.subscribeBytesPerPrincipal}
     */
    SubscribeMemory(long perSession, long perPrincipal) {
        this.perSession = perSession;
        this.perPrincipal = perPrincipal;
    }

    /** No bound: for sequencers built without a node (tests, the JMH harness). */
    static SubscribeMemory unbounded() {
        return new SubscribeMemory(Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /** What a {@code SUBSCRIBE} with this resume list is charged while it waits for its answer. */
    static long requestBytes(Map<String, Long> resume) {
        return REQUEST_BYTES + resumeBytes(resume.keySet());
    }

    /** What keeping the resume positions of {@code paths} is charged. */
    static long resumeBytes(Iterable<String> paths) {
        long bytes = 0;
        for (String path : paths) {
            bytes += resumeEntryBytes(path);
        }
        return bytes;
    }

    /** What keeping one resume position of {@code path} is charged. */
    static long resumeEntryBytes(String path) {
        return RESUME_ENTRY_BYTES + 2L * path.length();
    }

    /**
     * Charges {@code bytes} to the session and its principal, or refuses them, keeping nothing.
     *
     * @return {@link Verdict#PASSED}, or {@code TOO_MANY_SUBSCRIPTIONS} naming the limit it would pass
     */
    Verdict charge(Session session, long bytes) {
        int[] refused = {0};
        long[] held = {0};
        byPrincipal.compute(session.permissions.who(), (who, sum) -> {
            long principalBytes = sum == null ? 0 : sum[0];
            if (session.subscribeBytes.get() + bytes > perSession) {
                refused[0] = 1;
                held[0] = session.subscribeBytes.get();
                return sum;
            }
            if (principalBytes + bytes > perPrincipal) {
                refused[0] = 2;
                held[0] = principalBytes;
                return sum;
            }
            session.subscribeBytes.addAndGet(bytes);
            total.addAndGet(bytes);
            if (sum == null) {
                return new long[] {bytes};
            }
            sum[0] += bytes;
            return sum;
        });
        return switch (refused[0]) {
            case 0 -> Verdict.PASSED;
            case 1 -> Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription refused: its resume list ("
                    + bytes + " bytes kept while it waits) and the " + held[0] + " bytes this session's subscribe "
                    + "requests hold already would pass limits.subscribeBytesPerSession = " + perSession
                    + "; wait for the answers to the earlier ones, or send a shorter resume list");
            default -> Verdict.refused(ErrorCode.TOO_MANY_SUBSCRIPTIONS, "subscription refused: its resume list ("
                    + bytes + " bytes kept while it waits) and the " + held[0] + " bytes the subscribe requests of "
                    + session.permissions.who() + " hold already would pass limits.subscribeBytesPerPrincipal = "
                    + perPrincipal);
        };
    }

    /** Gives back {@code bytes} the session no longer holds. */
    void credit(Session session, long bytes) {
        if (bytes == 0) {
            return;
        }
        assert bytes > 0 : bytes;
        byPrincipal.compute(session.permissions.who(), (who, sum) -> {
            assert sum != null && sum[0] >= bytes && session.subscribeBytes.get() >= bytes
                    : "credit of " + bytes + " bytes more than " + who + " was charged";
            session.subscribeBytes.addAndGet(-bytes);
            total.addAndGet(-bytes);
            sum[0] -= bytes;
            return sum[0] == 0 ? null : sum;
        });
    }

    /** Gives back all the session holds: it closed, and the sequencer dropped its requests and subscriptions. */
    void creditAll(Session session) {
        credit(session, session.subscribeBytes.get());
    }

    /** Bytes held now, over all sessions. Any thread. */
    long total() {
        return total.get();
    }

    /** Principals holding something now. Any thread. */
    int principals() {
        return byPrincipal.size();
    }
}
