package io.ringcast.cluster.internal;

import java.util.Objects;

/**
 * The removal of the topic at one exact path, as a group's log carries it (docs/protocol.md,
 * "Removing topics"): a client's {@code REMOVE} or an HTTP request (unconditional), or an expiry
 * decided by the group's leader (conditional). No publisher id, no ledger: a removal applied twice
 * is not recognised, so an entry that holds one is never sent again by the engine.
 *
 * @param path           the topic, exactly (not a selector)
 * @param ifLastSequence remove it only if its last sequence is still this one, so that a publish
 *                       that reached the log first keeps the topic; 0 to remove it whatever its
 *                       last sequence
 */
record LoggedRemoval(String path, long ifLastSequence) implements LoggedRecord {

    LoggedRemoval {
        Objects.requireNonNull(path, "path");
        if (path.isEmpty()) {
            throw new IllegalArgumentException("the removal of an empty path");
        }
        if (ifLastSequence < 0) {
            throw new IllegalArgumentException("ifLastSequence " + ifLastSequence
                    + " is negative (0: unconditionally)");
        }
    }

    /** Whether it removes the topic only at {@link #ifLastSequence}. */
    boolean conditional() {
        return ifLastSequence != 0;
    }

    @Override
    public String toString() {
        return "REMOVE '" + path + "'" + (conditional() ? " if its last sequence is " + ifLastSequence : "");
    }
}
