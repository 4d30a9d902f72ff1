package io.ringcast.protocol;

/**
 * Input that breaks the wire protocol, with the error code the peer is to be told and a reason
 * that names what was wrong. Thrown by {@link WireCodec#decode}, {@link TopicPath} and
 * {@link Selector}.
 */
public final class ProtocolException extends Exception {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    /** The peer is to be told {@code code}; {@code reason} names what was wrong. */
    public ProtocolException(ErrorCode code, String reason) {
        super(reason, null, false, false);
        this.code = code;
    }

    /** The error code the peer is to be told. */
    public ErrorCode code() {
        return code;
    }

    /** The human-readable reason, the same as {@link #getMessage()}. */
    public String reason() {
        return getMessage();
    }
}
