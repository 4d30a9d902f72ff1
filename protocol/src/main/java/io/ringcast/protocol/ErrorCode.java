package io.ringcast.protocol;

/**
 * Error codes of wire protocol version 1. A fatal error is followed by a WebSocket close
 * frame with {@link #closeCode()} and the end of the connection; a non-fatal one leaves the
 * session usable.
 */
public enum ErrorCode {
    MALFORMED_FRAME(1, true, 1002),
    UNKNOWN_MESSAGE_TYPE(2, true, 1002),
    TEXT_FRAME_NOT_SUPPORTED(3, true, 1003),
    FRAME_TOO_LARGE(4, true, 1009),
    HANDSHAKE_REQUIRED(5, true, 1008),
    UNSUPPORTED_VERSION(6, true, 1002),
    HANDSHAKE_TIMEOUT(7, true, 1008),
    SLOW_CONSUMER(8, true, 1008),
    IDLE_TIMEOUT(9, true, 1001),
    SERVER_SHUTDOWN(10, true, 1001),
    INTERNAL_ERROR(11, true, 1011),
    TOO_MANY_CONNECTIONS(12, true, 1013),
    AUTHENTICATION_FAILED(13, true, 1008),
    INVALID_PATH(20, false, 0),
    INVALID_SELECTOR(21, false, 0),
    VALUE_TOO_LARGE(22, false, 0),
    DUPLICATE_SUBSCRIPTION_ID(23, false, 0),
    TOO_MANY_SUBSCRIPTIONS(24, false, 0),
    TOO_MANY_TOPICS(25, false, 0),
    PUBLISH_RATE_EXCEEDED(26, false, 0),
    PERMISSION_DENIED(27, false, 0),
    /** Cluster: this node is on the minority side of a split and may not sequence; publish to another node. */
    NO_MAJORITY(28, false, 0),
    /** Cluster: the partition's owner and backup did not take the publish in time; it may or may not be applied. */
    REPLICATION_TIMEOUT(29, false, 0),
    /**
     * A {@code REPUBLISH} whose publish the server can no longer tell applied or not (its publisher's
     * ledger was forgotten: a restart, or too many publishers away); it was not applied again.
     */
    PUBLISH_OUTCOME_UNKNOWN(30, false, 0),
    /** A {@code REPUBLISH} whose correlation id this publisher first published to another topic; not applied. */
    REPUBLISH_CONFLICT(31, false, 0),
    /**
     * A {@code SUBSCRIBE} whose options the server refuses: a well-framed options block with an
     * unknown or repeated option, a value out of range, a path or filter that does not parse, or a
     * {@code rewind} beyond the server's history. Nothing was opened.
     */
    INVALID_OPTIONS(32, false, 0);

    private static final ErrorCode[] BY_CODE = new ErrorCode[64];

    static {
        for (ErrorCode c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    private final int code;
    private final boolean fatal;
    private final int closeCode;

    ErrorCode(int code, boolean fatal, int closeCode) {
        this.code = code;
        this.fatal = fatal;
        this.closeCode = closeCode;
    }

    /** The {@code u16} sent in an {@code ERROR} message. */
    public int code() {
        return code;
    }

    /** Whether the connection is closed after this error. */
    public boolean fatal() {
        return fatal;
    }

    /** The WebSocket close code used after a fatal error, 0 for non-fatal errors. */
    public int closeCode() {
        return closeCode;
    }

    /** The error with that wire code, or {@code null} for a code this version does not define. */
    public static ErrorCode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
