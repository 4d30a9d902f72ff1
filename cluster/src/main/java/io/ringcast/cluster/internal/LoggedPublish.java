package io.ringcast.cluster.internal;

import java.util.Arrays;
import java.util.Objects;

/**
 * One publish as a group's log carries it, in a batch with others ({@link TopicLogCodec}): who
 * published it, its identity for the duplicate ledger, and the update itself. It has passed the
 * node's checks (permissions, path, size, rate) before it was logged; what the log still decides is
 * whether it is applied and with which sequence ({@link TopicLog}).
 *
 * @param principal     the login identity of the publishing session, the ledger's key with the
 *                      publisher id; null when {@code publisherId} is 0 (then it is not logged)
 * @param publisherId   the id its client gave in {@code HELLO}; 0 for none (no ledger: never
 *                      recognised as a duplicate)
 * @param correlationId the client's correlation id of the publish
 * @param republish     whether it came as {@code REPUBLISH} (sent again after a lost connection)
 * @param path          the topic
 * @param value         the full value; not copied
 */
public record LoggedPublish(String principal, long publisherId, int correlationId, boolean republish, String path,
                            byte[] value) {

    public LoggedPublish {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(value, "value");
        if (publisherId == 0) {
            principal = null; // no ledger: the principal decides nothing, and is not logged
        } else {
            Objects.requireNonNull(principal, "principal of a publish with a publisher id");
        }
    }

    /** Whether it is checked against its publisher's ledger. */
    public boolean hasPublisher() {
        return publisherId != 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LoggedPublish p && publisherId == p.publisherId && correlationId == p.correlationId
                && republish == p.republish && Objects.equals(principal, p.principal) && path.equals(p.path)
                && Arrays.equals(value, p.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(principal, publisherId, correlationId, republish, path, Arrays.hashCode(value));
    }

    @Override
    public String toString() {
        return (republish ? "REPUBLISH " : "PUBLISH ") + correlationId + " to '" + path + "' (" + value.length
                + " bytes)" + (publisherId == 0 ? "" : " of publisher " + Long.toHexString(publisherId) + " of " + principal);
    }
}
