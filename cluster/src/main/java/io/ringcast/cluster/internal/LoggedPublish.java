package io.ringcast.cluster.internal;

import io.ringcast.log.PublisherLedgers;
import io.ringcast.log.PublishingSessions;

import java.util.Arrays;
import java.util.Objects;

/**
 * One publish as a group's log carries it, in a batch with others and with removals
 * ({@link TopicLogCodec}, {@link LoggedRemoval}): who published it, its identity for the duplicate
 * ledger, and the update itself. It has passed the node's checks (permissions, path, size, rate)
 * before it was logged; what the log still decides is whether it is applied and with which
 * sequence ({@link TopicLog}).
 *
 * @param principal     the login identity of the publishing session, the ledger's key with the
 *                      publisher id; null when {@code publisherId} is 0 (then it is not logged)
 * @param publisherId   the id its client gave in {@code HELLO}; 0 for none (no ledger: never
 *                      recognised as a duplicate)
 * @param session       the publishing session, a number no other session of the cluster uses (0 for
 *                      none: no order check); only with a publisher id. {@link PublishingSessions#ordered}
 *                      when the client numbered its connection in {@code HELLO}: then the log
 *                      knows which of two sessions of a publisher came later
 *                      ({@link PublisherLedgers.Ledger#screen}); else random, below those
 * @param sessionSequence the publish's place among those its session handed to the log: 1 for the
 *                      first, then one more each (0 with no session). The log applies a publish
 *                      only if the one before it in its session was decided, so that a publish
 *                      lost with a leader is never overtaken by its successors ({@link TopicLog})
 * @param correlationId the client's correlation id of the publish
 * @param republish     whether it came as {@code REPUBLISH} (sent again after a lost connection)
 * @param path          the topic
 * @param value         the full value; not copied
 * @param existingTopicOnly the node that took it was refusing new topics when it did (its heap past
 *                      {@code limits.heapRefusePercent}): every node applies it only to a topic that
 *                      exists, and refuses it {@code TOO_MANY_TOPICS} otherwise, so that the decision
 *                      of one node's guard is the same decision on every node
 */
public record LoggedPublish(String principal, long publisherId, long session, long sessionSequence, int correlationId,
                            boolean republish, String path, byte[] value, boolean existingTopicOnly)
        implements LoggedRecord {

    public LoggedPublish {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(value, "value");
        if (publisherId == 0) {
            principal = null; // no ledger: the principal decides nothing, and is not logged
            session = 0;      // nor is an order kept without one
        } else {
            Objects.requireNonNull(principal, "principal of a publish with a publisher id");
        }
        if (session == 0) {
            sessionSequence = 0;
        } else if (sessionSequence < 1) {
            throw new IllegalArgumentException("session sequence " + sessionSequence + " of session "
                    + Long.toHexString(session) + " must be at least 1");
        }
    }

    /** A publish that may create its topic. */
    public LoggedPublish(String principal, long publisherId, long session, long sessionSequence, int correlationId,
                         boolean republish, String path, byte[] value) {
        this(principal, publisherId, session, sessionSequence, correlationId, republish, path, value, false);
    }

    /** A publish whose order in its session is not checked. */
    public LoggedPublish(String principal, long publisherId, int correlationId, boolean republish, String path,
                         byte[] value) {
        this(principal, publisherId, 0, 0, correlationId, republish, path, value);
    }

    /** Whether the log checks it comes right after the one before it in its session. */
    public boolean hasSession() {
        return session != 0;
    }

    /** Whether it is checked against its publisher's ledger. */
    public boolean hasPublisher() {
        return publisherId != 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LoggedPublish p && publisherId == p.publisherId && session == p.session
                && sessionSequence == p.sessionSequence && correlationId == p.correlationId
                && republish == p.republish && existingTopicOnly == p.existingTopicOnly && Objects.equals(principal, p.principal) && path.equals(p.path)
                && Arrays.equals(value, p.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(principal, publisherId, session, sessionSequence, correlationId, republish, path,
                Arrays.hashCode(value), existingTopicOnly);
    }

    @Override
    public String toString() {
        return (republish ? "REPUBLISH " : "PUBLISH ") + correlationId + " to '" + path + "' (" + value.length
                + " bytes)" + (publisherId == 0 ? "" : " of publisher " + Long.toHexString(publisherId) + " of " + principal)
                + (session == 0 ? "" : ", #" + sessionSequence + " of session " + Long.toHexString(session))
                + (existingTopicOnly ? ", to an existing topic only" : "");
    }
}
