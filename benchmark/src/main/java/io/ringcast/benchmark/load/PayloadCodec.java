package io.ringcast.benchmark.load;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Reads and writes the header every load-generator value starts with; the rest of the value is
 * padding up to {@code --payload-bytes}. Big-endian:
 *
 * <pre>
 *  0  int   run id          a random number per run, so values of earlier runs are told apart
 *  4  int   publisher id
 *  8  int   topic index     the i of bench/t{i}: O(1) array lookups on the subscriber side
 * 12  long  counter         1, 2, 3 ... per topic within the run (one publisher owns each topic)
 * 20  long  intended send time, System.nanoTime() of the schedule, not of the actual send
 * </pre>
 *
 * The counter is the end-to-end check: the server's sequence says what the server did, the counter
 * says what the publisher did, so a value lost, doubled or reordered anywhere shows as a counter
 * that is not the last one plus one.
 *
 * <p>Each field is read from a {@code byte[]} (what the Java client hands its listeners) or in place
 * from a {@link ByteBuf} at the value's index (what a lean subscriber reads from the frame, without
 * copying it); both read the offsets below, so the layout is written down once. Stateless; any thread.
 */
final class PayloadCodec {
    /** Bytes of the header; the smallest {@code --payload-bytes}. */
    static final int HEADER_BYTES = 28;

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static final int RUN_ID_OFFSET = 0;
    private static final int PUBLISHER_OFFSET = 4;
    private static final int TOPIC_OFFSET = 8;
    private static final int COUNTER_OFFSET = 12;
    private static final int INTENDED_OFFSET = 20;

    private PayloadCodec() {
    }

    /** A new value of {@code payloadBytes} bytes: the header, then the topic's padding. */
    static byte[] encode(int payloadBytes, Padding padding, int runId, int publisherId, int topicIndex, long counter,
                         long intendedSendNs) {
        assert payloadBytes >= HEADER_BYTES : payloadBytes;
        byte[] value = new byte[payloadBytes];
        padding.fill(value, HEADER_BYTES, topicIndex);
        INT.set(value, RUN_ID_OFFSET, runId);
        INT.set(value, PUBLISHER_OFFSET, publisherId);
        INT.set(value, TOPIC_OFFSET, topicIndex);
        LONG.set(value, COUNTER_OFFSET, counter);
        LONG.set(value, INTENDED_OFFSET, intendedSendNs);
        return value;
    }

    /** Whether {@code value} was written by the run {@code runId} (false for anything shorter than a header). */
    static boolean isFromRun(byte[] value, int runId) {
        return value.length >= HEADER_BYTES && (int) INT.get(value, RUN_ID_OFFSET) == runId;
    }

    static int runId(byte[] value) {
        return (int) INT.get(value, RUN_ID_OFFSET);
    }

    static int publisherId(byte[] value) {
        return (int) INT.get(value, PUBLISHER_OFFSET);
    }

    static int topicIndex(byte[] value) {
        return (int) INT.get(value, TOPIC_OFFSET);
    }

    static long counter(byte[] value) {
        return (long) LONG.get(value, COUNTER_OFFSET);
    }

    static long intendedSendNs(byte[] value) {
        return (long) LONG.get(value, INTENDED_OFFSET);
    }

    /**
     * Whether the value of {@code valueLength} bytes at {@code valueIndex} of {@code buf} was written by
     * the run {@code runId} (false for anything shorter than a header). Reads in place, like the
     * readers below; {@code buf}'s indices are left as they are.
     */
    static boolean isFromRun(ByteBuf buf, int valueIndex, int valueLength, int runId) {
        return valueLength >= HEADER_BYTES && buf.getInt(valueIndex + RUN_ID_OFFSET) == runId;
    }

    static int runId(ByteBuf buf, int valueIndex) {
        return buf.getInt(valueIndex + RUN_ID_OFFSET);
    }

    static int publisherId(ByteBuf buf, int valueIndex) {
        return buf.getInt(valueIndex + PUBLISHER_OFFSET);
    }

    static int topicIndex(ByteBuf buf, int valueIndex) {
        return buf.getInt(valueIndex + TOPIC_OFFSET);
    }

    static long counter(ByteBuf buf, int valueIndex) {
        return buf.getLong(valueIndex + COUNTER_OFFSET);
    }

    static long intendedSendNs(ByteBuf buf, int valueIndex) {
        return buf.getLong(valueIndex + INTENDED_OFFSET);
    }
}
