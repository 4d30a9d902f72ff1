package io.ringcast.server;

import io.ringcast.protocol.ErrorCode;

import java.util.StringJoiner;
import java.util.function.ToLongFunction;

/**
 * A snapshot of a node's figures, each read once when it was taken (each may lag the node by one
 * batch): {@code stats.get(ServerCounter.PUBLISHES)}. Immutable.
 */
public final class ServerStats {
    private static final ServerCounter[] COUNTERS = ServerCounter.values();
    private static final ErrorCode[] CODES = ErrorCode.values();
    private final long[] values = new long[COUNTERS.length];
    private final long[] errors = new long[CODES.length];

    /**
     * @param counters reads each figure
     * @param errors   reads the {@code ERROR}s sent with each code
     */
    public ServerStats(ToLongFunction<ServerCounter> counters, ToLongFunction<ErrorCode> errors) {
        for (ServerCounter counter : COUNTERS) {
            values[counter.ordinal()] = counters.applyAsLong(counter);
        }
        for (ErrorCode code : CODES) {
            this.errors[code.ordinal()] = errors.applyAsLong(code);
        }
    }

    /** The figure's value when the snapshot was taken. */
    public long get(ServerCounter counter) {
        return values[counter.ordinal()];
    }

    /** {@code ERROR}s sent with {@code code} (each limit refuses with a code of its own). */
    public long errors(ErrorCode code) {
        return errors[code.ordinal()];
    }

    /** {@code name=value} for every figure, in {@link ServerCounter} order. */
    @Override
    public String toString() {
        StringJoiner s = new StringJoiner(", ", "ServerStats[", "]");
        for (ServerCounter counter : COUNTERS) {
            s.add(counter.statName() + "=" + get(counter));
        }
        return s.toString();
    }
}
