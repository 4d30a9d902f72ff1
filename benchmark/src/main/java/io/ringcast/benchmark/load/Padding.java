package io.ringcast.benchmark.load;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * What fills a value after its header ({@code --padding}). The padding of a topic is the same in
 * every one of its values, so from one value to the next only the header changes (counter and send
 * time, 16 of its 28 bytes): a small change of a larger record, as in market data. What differs is
 * how compressible the record is.
 */
enum Padding {
    /** Zero bytes: compresses to almost nothing; flatters compression. */
    ZEROS,
    /** Random bytes, fixed per topic: incompressible binary. */
    RANDOM,
    /** JSON-like text, fixed per topic: what a browser dashboard is sent. */
    TEXT;

    private static final String RECORD = "{\"symbol\":\"SYM%04d\",\"bid\":1.%05d,\"ask\":1.%05d,\"bidSize\":%d,"
            + "\"askSize\":%d,\"venue\":\"XLON\",\"status\":\"OPEN\"}";

    /** Fills {@code value} from {@code from} to its end with topic {@code topic}'s padding. */
    void fill(byte[] value, int from, int topic) {
        switch (this) {
            case ZEROS -> {
                // a new array is all zeros already
            }
            case RANDOM -> {
                byte[] random = new byte[value.length - from];
                new SplittableRandom(topic).nextBytes(random);
                System.arraycopy(random, 0, value, from, random.length);
            }
            case TEXT -> {
                byte[] text = String.format(RECORD, topic, 8000 + topic % 1000, 8003 + topic % 1000,
                        100_000 * (1 + topic % 7), 250_000 * (1 + topic % 5)).getBytes(StandardCharsets.US_ASCII);
                for (int i = from; i < value.length; i++) {
                    value[i] = text[(i - from) % text.length];
                }
            }
            default -> throw new IllegalStateException(name());
        }
    }
}
