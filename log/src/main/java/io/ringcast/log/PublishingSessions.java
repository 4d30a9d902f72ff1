package io.ringcast.log;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Numbers naming publishing sessions, as the ledgers keep their order ({@link PublisherLedgers.Ledger#screen}):
 * a session whose client numbers its connections in {@code HELLO} gets a number from that count,
 * at or above {@link #ORDERED}, so a publisher's later connection has the greater number; any other
 * gets a random one below. 0 names no session (no order is kept).
 */
public final class PublishingSessions {
    /** Sessions at or above this are numbered by their client ({@link #ordered}); random ones lie below. */
    public static final long ORDERED = 1L << 62;

    private PublishingSessions() {
    }

    /** The number of a client's {@code connection}-th connection, or a random one for 0 (a client that does not count). */
    public static long of(long connection) {
        return connection != 0 ? ordered(connection) : ThreadLocalRandom.current().nextLong(1, ORDERED);
    }

    /**
     * The session of a client's {@code connection}-th connection (1 to 2^32-1, as {@code HELLO}
     * gives it): a later connection of the publisher is a greater number.
     */
    public static long ordered(long connection) {
        if (connection < 1 || connection > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("connection " + connection + ": 1 to 2^32-1");
        }
        return ORDERED | connection;
    }

    /** Whether {@code session} was numbered by its client ({@link #ordered}). */
    public static boolean isOrdered(long session) {
        return session >= ORDERED;
    }
}
