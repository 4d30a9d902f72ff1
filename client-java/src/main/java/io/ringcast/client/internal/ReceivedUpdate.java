package io.ringcast.client.internal;

import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;

/** An {@link Update} as delivered to listeners; one instance is shared by all of them. */
record ReceivedUpdate(String topic, long sequence, byte[] value, UpdateKind kind) implements Update {

    @Override
    public String toString() {
        return "Update[" + kind + " " + topic + " #" + sequence + ", " + value.length + " bytes]";
    }
}
