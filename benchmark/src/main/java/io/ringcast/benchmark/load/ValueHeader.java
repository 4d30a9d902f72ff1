package io.ringcast.benchmark.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * What a subscriber's checks read from each value, whatever its {@link ValueFormat}: the run id,
 * the topic index, the counter and the intended send time. One per subscriber, filled by
 * {@link #read} for every value and read right after, so that reading allocates nothing.
 *
 * <p>Threads: its subscriber's event loop only.
 */
final class ValueHeader {
    private final ValueFormat format;
    int runId;
    int topicIndex;
    long counter;
    long intendedSendNs;

    ValueHeader(ValueFormat format) {
        this.format = format;
    }

    /**
     * Reads the header of the value of {@code valueLength} bytes at {@code valueIndex} of {@code buf},
     * in place; false when the value has none in this format (too short for the binary header, not
     * the generator's JSON), and the fields are then meaningless.
     */
    boolean read(ByteBuf buf, int valueIndex, int valueLength) {
        if (format == ValueFormat.JSON) {
            return JsonPayload.read(buf, valueIndex, valueLength, this);
        }
        if (valueLength < PayloadCodec.HEADER_BYTES) {
            return false;
        }
        runId = PayloadCodec.runId(buf, valueIndex);
        topicIndex = PayloadCodec.topicIndex(buf, valueIndex);
        counter = PayloadCodec.counter(buf, valueIndex);
        intendedSendNs = PayloadCodec.intendedSendNs(buf, valueIndex);
        return true;
    }

    /** {@link #read} of a copy, as the Java client hands its listeners (a JSON value is wrapped, not copied). */
    boolean read(byte[] value) {
        if (format == ValueFormat.JSON) {
            return JsonPayload.read(Unpooled.wrappedBuffer(value), 0, value.length, this);
        }
        if (value.length < PayloadCodec.HEADER_BYTES) {
            return false;
        }
        runId = PayloadCodec.runId(value);
        topicIndex = PayloadCodec.topicIndex(value);
        counter = PayloadCodec.counter(value);
        intendedSendNs = PayloadCodec.intendedSendNs(value);
        return true;
    }
}
