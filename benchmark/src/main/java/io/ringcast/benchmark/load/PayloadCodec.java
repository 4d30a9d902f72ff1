package io.ringcast.benchmark.load;

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
 * that is not the last one plus one. Stateless; any thread.
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
}
