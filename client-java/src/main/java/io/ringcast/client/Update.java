package io.ringcast.client;

import java.nio.charset.StandardCharsets;

/**
 * One value of one topic, as handed to {@link UpdateListener#onUpdate}. Immutable apart from
 * the array {@link #value()} returns, which is shared by every listener that receives this
 * update: read it, do not change it.
 */
public interface Update {

    /** {@return the topic path, e.g. {@code fx/EURUSD/bid}} */
    String topic();

    /**
     * {@return the topic's sequence of this value: 1 for the first publish, then strictly increasing;
     * 1 again for the first publish after the topic was removed ({@link UpdateListener#onRemoved})}
     */
    long sequence();

    /** {@return the value's bytes, copied out of the network frame; shared, do not modify} */
    byte[] value();

    /** {@return whether this is a snapshot, an update or a snapshot after a gap} */
    UpdateKind kind();

    /** {@return the value decoded as UTF-8} */
    default String text() {
        return new String(value(), StandardCharsets.UTF_8);
    }
}
