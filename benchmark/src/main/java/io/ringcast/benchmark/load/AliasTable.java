package io.ringcast.benchmark.load;

/**
 * One connection's topic aliases ({@code TOPIC} messages) to topic indices: an open-addressing map
 * of primitive ints, so that the lookup made for every {@code UPDATE} allocates nothing and boxes
 * nothing. Any {@code u32} is a valid alias (docs/protocol.md, "Topic aliases"), so the aliases are
 * hashed, not used as array indices.
 *
 * <p>Threads: confined to its connection's event loop.
 */
final class AliasTable {
    /** {@link #topicIndex}'s answer for an alias no {@code TOPIC} announced. */
    static final int UNKNOWN = -2;
    /** What {@link #put} takes, and {@link #topicIndex} gives, for a topic that is not one of the run's. */
    static final int NOT_A_RUN_TOPIC = -1;

    private int[] aliases;
    /** Per slot: the topic index plus 2, so that 0 marks an empty slot and 1 a topic of no run. */
    private int[] topics;
    private int size;

    AliasTable(int expectedAliases) {
        int capacity = Integer.highestOneBit(Math.max(16, expectedAliases) * 2 - 1) * 2; // load factor at most 1/2
        aliases = new int[capacity];
        topics = new int[capacity];
    }

    /** {@code alias} names topic {@code topicIndex} ({@link #NOT_A_RUN_TOPIC} for none of the run's) from now on. */
    void put(int alias, int topicIndex) {
        assert topicIndex >= NOT_A_RUN_TOPIC : topicIndex;
        if ((size + 1) * 2 > aliases.length) {
            grow();
        }
        int slot = slot(alias, aliases.length);
        while (topics[slot] != 0 && aliases[slot] != alias) {
            slot = (slot + 1) & (aliases.length - 1);
        }
        if (topics[slot] == 0) {
            size++;
        }
        aliases[slot] = alias;
        topics[slot] = topicIndex + 2;
    }

    /** The topic index {@code alias} names, {@link #NOT_A_RUN_TOPIC}, or {@link #UNKNOWN}. */
    int topicIndex(int alias) {
        int slot = slot(alias, aliases.length);
        for (int t; (t = topics[slot]) != 0; slot = (slot + 1) & (aliases.length - 1)) {
            if (aliases[slot] == alias) {
                return t - 2;
            }
        }
        return UNKNOWN;
    }

    private void grow() {
        int[] oldAliases = aliases;
        int[] oldTopics = topics;
        aliases = new int[oldAliases.length * 2];
        topics = new int[oldAliases.length * 2];
        size = 0;
        for (int i = 0; i < oldAliases.length; i++) {
            if (oldTopics[i] != 0) {
                put(oldAliases[i], oldTopics[i] - 2);
            }
        }
    }

    /**
     * The home slot of {@code alias} in a table of {@code capacity} slots, a power of two: the top bits
     * of a Fibonacci hash, which spreads the server's consecutive aliases evenly.
     */
    private static int slot(int alias, int capacity) {
        return (alias * 0x9E3779B9) >>> (Integer.SIZE - Integer.numberOfTrailingZeros(capacity));
    }
}
