package io.ringcast.cluster.internal.jgroups;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.EncryptHeader;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Says who is refused for want of the cluster's key: a protocol right below {@code SYM_ENCRYPT}
 * that reads the key version every encrypted message carries and, when it is not this node's, logs
 * a warning naming the sender (at most once a minute per sender). {@code SYM_ENCRYPT} drops such a
 * message and tells only its trace log; one that arrives without encryption it drops and logs as an
 * error itself. Passes every message on, unchanged.
 */
final class OtherKeyLog extends Protocol {
    private static final Logger log = LoggerFactory.getLogger(OtherKeyLog.class);
    private static final long LOG_EVERY_NS = 60_000_000_000L;
    private static final short ENCRYPT_ID = ClassConfigurator.getProtocolId(SYM_ENCRYPT.class);

    private final SYM_ENCRYPT encrypt;
    private final String nodeName;
    private final Map<Address, Long> lastLogged = new ConcurrentHashMap<>();

    /** @param encrypt the protocol above, whose key version is this node's */
    OtherKeyLog(SYM_ENCRYPT encrypt, String nodeName) {
        this.encrypt = encrypt;
        this.nodeName = nodeName;
    }

    @Override
    public Object up(Message msg) {
        check(msg);
        return up_prot.up(msg);
    }

    @Override
    public void up(MessageBatch batch) {
        for (Message msg : batch) {
            check(msg);
        }
        up_prot.up(batch);
    }

    private void check(Message msg) {
        EncryptHeader header = msg.getHeader(ENCRYPT_ID);
        if (header == null || header.version() == null || Arrays.equals(header.version(), encrypt.symVersion())) {
            return;
        }
        Address sender = msg.getSrc();
        long now = System.nanoTime();
        Long last = lastLogged.get(sender);
        if (last == null || now - last > LOG_EVERY_NS) {
            lastLogged.put(sender, now);
            log.warn("{}: refused {}, which encrypts with another cluster key: its messages are dropped;"
                    + " give every node the same cluster.secretFile", nodeName, sender);
        }
    }
}
