package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;

/**
 * What a check of a client's request decided: passed (one of the preallocated constants, so a
 * request that passes allocates nothing), or refused with the error code and the reason the client
 * is told. Immutable.
 */
final class Verdict {
    /** The request may go on. */
    static final Verdict PASSED = new Verdict(null, null);
    /**
     * A {@code REPUBLISH} over {@code limits.publishRatePerSession} that may still go on: it may have
     * been applied the first time, so the sequencer's ledger answers it, but it is not applied now.
     */
    static final Verdict PASSED_OVER_RATE = new Verdict(null, null);

    private final ErrorCode code;
    private final String reason;

    private Verdict(ErrorCode code, String reason) {
        this.code = code;
        this.reason = reason;
    }

    static Verdict refused(ErrorCode code, String reason) {
        return new Verdict(code, reason);
    }

    boolean passed() {
        return code == null;
    }

    /** The error to answer with; null when the request passed. */
    ErrorCode code() {
        return code;
    }

    /** Why it was refused, in words for the client; null when it passed. */
    String reason() {
        return reason;
    }

    @Override
    public String toString() {
        return passed() ? (this == PASSED ? "PASSED" : "PASSED_OVER_RATE") : code + ": " + reason;
    }
}
