package io.ringcast.benchmark.load;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * The Redis channels of a {@code --target redis} run: topic {@code bench/t0042} is the channel
 * {@code bench.t0042}, its dotted name ({@link LoadSpec#dottedTopicNames}, as JetStream's subject),
 * and every subscriber takes them all with the pattern {@value #PATTERN}, Redis's {@code #}.
 * Immutable once made, and shared by every connection of the run: any thread.
 */
final class RedisChannels {
    /** Every subscriber's {@code PSUBSCRIBE} pattern: every channel of every run. */
    static final String PATTERN = "bench.*";
    /** What {@link #topicIndex} answers for a channel that is not one of this run's topics. */
    static final int NOT_A_RUN_CHANNEL = -1;

    /** Every channel's name in ASCII, by topic index: what {@code PUBLISH} sends. */
    private final byte[][] names;
    /** What every name starts with, before the topic's digits: {@code bench.t}. */
    private final byte[] prefix;

    RedisChannels(LoadSpec spec) {
        String[] dotted = spec.dottedTopicNames();
        this.names = new byte[dotted.length][];
        for (int t = 0; t < dotted.length; t++) {
            names[t] = dotted[t].getBytes(StandardCharsets.US_ASCII);
        }
        this.prefix = LoadSpec.TOPIC_PREFIX.replace('/', '.').getBytes(StandardCharsets.US_ASCII);
    }

    /** Topic {@code t}'s channel name in ASCII; not to be written to. */
    byte[] name(int t) {
        return names[t];
    }

    /** Topic {@code t}'s channel name, for messages. */
    String nameOf(int t) {
        return new String(names[t], StandardCharsets.US_ASCII);
    }

    /**
     * The topic index of the channel whose name is {@code name}'s readable bytes (left unread), or
     * {@link #NOT_A_RUN_CHANNEL} when it names none of this run's topics. Allocates nothing: it is
     * asked once per delivery.
     */
    int topicIndex(ByteBuf name) {
        int from = name.readerIndex();
        int length = name.readableBytes();
        if (length <= prefix.length) {
            return NOT_A_RUN_CHANNEL;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (name.getByte(from + i) != prefix[i]) {
                return NOT_A_RUN_CHANNEL;
            }
        }
        int index = 0;
        for (int i = prefix.length; i < length; i++) {
            byte c = name.getByte(from + i);
            if (c < '0' || c > '9' || index >= names.length) {
                return NOT_A_RUN_CHANNEL;
            }
            index = index * 10 + (c - '0');
        }
        // the digits of a name are zero-padded to one width: a name of another length is none of ours
        return index < names.length && names[index].length == length ? index : NOT_A_RUN_CHANNEL;
    }
}
