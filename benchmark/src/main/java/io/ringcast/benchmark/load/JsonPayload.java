package io.ringcast.benchmark.load;

import io.netty.buffer.ByteBuf;
import io.ringcast.protocol.SubscribeOptions;
import java.nio.charset.StandardCharsets;

/**
 * The load generator's values as JSON ({@code --value-format json}): a flat object that the
 * server's {@code fields} and {@code filter} can read, so that subscription views can be measured
 * (docs/subscription-options.md). Every value of a run has the same keys in the same order:
 *
 * <pre>
 * {"r":RUN,"p":PUBLISHER,"t":TOPIC,"c":COUNTER,"s":INTENDED_SEND_NS,"f0":N,...,"f9":N,"x":"PADDING"}
 * </pre>
 *
 * {@code r}, {@code p}, {@code t}, {@code c} and {@code s} are the binary header's fields
 * ({@link PayloadCodec}: run id, publisher id, topic index, per-topic counter, intended send time);
 * {@code f0} .. {@code f<n-1>} ({@code --json-fields}) are four-digit integers that move with the
 * counter, as prices do; {@code x} is a string of {@code --padding} that makes the value
 * {@code --payload-bytes} long.
 *
 * <p><b>View shapes.</b> Shape {@code i} ({@link #viewShape}) projects {@code r}, {@code t},
 * {@code c}, {@code s} and its own {@code f<i>}, and filters on {@code c > 0 and f<i> >= 1000},
 * which every value passes. So a viewed subscriber still gets what its checks and its latency need,
 * every update reaches it (the counter makes every projection new, so none is skipped as unchanged),
 * and shapes differ from one another in their fields and their filter's text, so each is a view
 * of its own on the server.
 *
 * <p>{@link #read} takes the header back from a value or from its projection, in place from a
 * frame, allocating nothing. Stateless; any thread.
 */
final class JsonPayload {
    /** The most {@code f} fields a value holds ({@code --json-fields}). */
    static final int MAX_FIELDS = 100;
    /** The lowest value of an {@code f} field: every one has four digits, so the filters pass them all. */
    static final int FIELD_MIN = 1000;
    private static final int FIELD_SPAN = 9000;

    /** What a projection must keep for the subscribers' checks: run id, topic index, counter, send time. */
    static final String[] HEADER_FIELDS = {"r", "t", "c", "s"};

    private static final int RUN = 1;
    private static final int TOPIC = 2;
    private static final int COUNTER = 4;
    private static final int SENT = 8;
    private static final int ALL = RUN | TOPIC | COUNTER | SENT;

    /** What stands for a padding byte that a JSON string cannot hold as it is: its low six bits pick one. */
    private static final byte[] SAFE = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"
            .getBytes(StandardCharsets.US_ASCII);

    private JsonPayload() {
    }

    /** The key of the {@code i}th field: {@code f0}, {@code f1} ... */
    static String field(int i) {
        return "f" + i;
    }

    /**
     * The smallest {@code --payload-bytes} for values of {@code fields} {@code f} fields: the object
     * with every number at its widest (a run id of 10 digits, a publisher id of 3, a topic index of
     * 6, a counter of 19, a negative send time of 20) and an empty padding string.
     */
    static int minBytes(int fields) {
        int bytes = "{\"r\":".length() + 10 + ",\"p\":".length() + 3 + ",\"t\":".length() + 6
                + ",\"c\":".length() + 19 + ",\"s\":".length() + 20 + ",\"x\":\"\"}".length();
        for (int f = 0; f < fields; f++) {
            bytes += ",\"\":".length() + field(f).length() + 4;
        }
        return bytes;
    }

    /** The value of field {@code f} in update {@code counter} of topic {@code topicIndex}: 1000 to 9999. */
    static int fieldValue(int f, int topicIndex, long counter) {
        return FIELD_MIN + (int) Math.floorMod(counter * 7 + topicIndex * 31L + f * 131L, (long) FIELD_SPAN);
    }

    /**
     * A new value of exactly {@code payloadBytes} bytes (at least {@link #minBytes}{@code (fields)},
     * which {@link LoadSpec} checks): the object above, its padding the topic's {@code padding} with
     * every byte a JSON string cannot hold as it is (a quote, a backslash, a control or non-ASCII
     * byte) replaced by a letter or digit.
     */
    static byte[] encode(int payloadBytes, Padding padding, int fields, int runId, int publisherId, int topicIndex,
                         long counter, long intendedSendNs) {
        StringBuilder head = new StringBuilder(payloadBytes);
        head.append("{\"r\":").append(runId).append(",\"p\":").append(publisherId).append(",\"t\":").append(topicIndex)
                .append(",\"c\":").append(counter).append(",\"s\":").append(intendedSendNs);
        for (int f = 0; f < fields; f++) {
            head.append(",\"").append(field(f)).append("\":").append(fieldValue(f, topicIndex, counter));
        }
        head.append(",\"x\":\"");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.US_ASCII);
        int padEnd = payloadBytes - 2; // then the string's quote and the object's brace
        if (headBytes.length > padEnd) {
            throw new IllegalArgumentException("a JSON value with " + fields + " fields needs more than " + payloadBytes
                    + " bytes (at least " + minBytes(fields) + ")");
        }
        byte[] value = new byte[payloadBytes];
        padding.fill(value, headBytes.length, topicIndex);
        System.arraycopy(headBytes, 0, value, 0, headBytes.length);
        for (int i = headBytes.length; i < padEnd; i++) {
            value[i] = jsonSafe(value[i]);
        }
        value[padEnd] = '"';
        value[padEnd + 1] = '}';
        return value;
    }

    private static byte jsonSafe(byte b) {
        return b >= 0x20 && b < 0x7f && b != '"' && b != '\\' ? b : SAFE[b & 63];
    }

    /**
     * The options of view shape {@code shape} (0, 1, ...): fields {@code r}, {@code t}, {@code c},
     * {@code s} and {@code f<shape>}, filter {@code c > 0 and f<shape> >= 1000}. Values need at least
     * {@code shape + 1} fields.
     */
    static SubscribeOptions viewShape(int shape) {
        String own = field(shape);
        String[] fields = new String[HEADER_FIELDS.length + 1];
        System.arraycopy(HEADER_FIELDS, 0, fields, 0, HEADER_FIELDS.length);
        fields[HEADER_FIELDS.length] = own;
        return SubscribeOptions.builder().fields(fields).filter("c > 0 and " + own + " >= " + FIELD_MIN).build();
    }

    /**
     * Reads {@code r}, {@code t}, {@code c} and {@code s} of the JSON value of {@code valueLength}
     * bytes at {@code valueIndex} of {@code buf} into {@code into}, in place (the buffer's indices
     * are left as they are) and allocating nothing; in any order, with any other keys between them,
     * so a projection is read as the whole value is. False when the value is not such an object: not
     * JSON, not an object, a nested value, spaces between tokens (neither this generator nor the
     * server's projection writes any), or one of the four missing or not an integer that fits.
     * It stops reading once it has the four.
     */
    static boolean read(ByteBuf buf, int valueIndex, int valueLength, ValueHeader into) {
        int end = valueIndex + valueLength;
        int i = valueIndex;
        if (i >= end || buf.getByte(i++) != '{') {
            return false;
        }
        int found = 0;
        while (i < end) {
            if (buf.getByte(i++) != '"') {
                return false;
            }
            int keyStart = i;
            i = skipToQuote(buf, i, end);
            if (i < 0) {
                return false;
            }
            int wanted = i - keyStart == 1 ? wanted(buf.getByte(keyStart)) : 0;
            i++; // the key's closing quote
            if (i + 1 >= end || buf.getByte(i++) != ':') {
                return false;
            }
            byte first = buf.getByte(i);
            if (wanted != 0) {
                boolean negative = first == '-';
                int digitsStart = negative ? ++i : i;
                long v = 0;
                for (byte b; i < end && (b = buf.getByte(i)) >= '0' && b <= '9'; i++) {
                    v = v * 10 + (b - '0');
                }
                int digits = i - digitsStart;
                if (digits == 0 || digits > 19 || v < 0 && !(negative && v == Long.MIN_VALUE)) {
                    return false; // not an integer, or one past a long
                }
                v = negative ? -v : v;
                if (wanted != COUNTER && wanted != SENT && (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE)) {
                    return false;
                }
                switch (wanted) {
                    case RUN -> into.runId = (int) v;
                    case TOPIC -> into.topicIndex = (int) v;
                    case COUNTER -> into.counter = v;
                    default -> into.intendedSendNs = v;
                }
                found |= wanted;
                if (found == ALL) {
                    return true;
                }
            } else if (first == '"') {
                i = skipToQuote(buf, i + 1, end);
                if (i < 0) {
                    return false;
                }
                i++;
            } else if (first == '{' || first == '[') {
                return false; // flat objects only
            } else {
                while (i < end && buf.getByte(i) != ',' && buf.getByte(i) != '}') {
                    i++; // a number, true, false or null that is none of the four
                }
            }
            if (i >= end || buf.getByte(i++) != ',') {
                return false; // the object ended (or broke off) without the four
            }
        }
        return false;
    }

    /** The header field a one-letter key names, as its bit; 0 for another key. */
    private static int wanted(byte key) {
        return switch (key) {
            case 'r' -> RUN;
            case 't' -> TOPIC;
            case 'c' -> COUNTER;
            case 's' -> SENT;
            default -> 0;
        };
    }

    /** The index of the quote that ends the string whose text starts at {@code i} (escapes skipped), or -1. */
    private static int skipToQuote(ByteBuf buf, int i, int end) {
        for (; i < end; i++) {
            byte b = buf.getByte(i);
            if (b == '"') {
                return i;
            }
            if (b == '\\') {
                i++;
            }
        }
        return -1;
    }
}
