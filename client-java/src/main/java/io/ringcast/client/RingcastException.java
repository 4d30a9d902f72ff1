package io.ringcast.client;

import io.ringcast.protocol.ErrorCode;

/**
 * A failure of a client operation or connection. When the server reported the failure with an
 * {@code ERROR} message, {@link #code()} says which; when the connection ended with a WebSocket
 * close, {@link #closeCode()} says how. Futures returned by the client fail with this type.
 */
public class RingcastException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The server's error code, or null; see {@link #code()}. */
    private final ErrorCode code;
    /** The WebSocket close code, or 0; see {@link #closeCode()}. */
    private final int closeCode;

    /**
     * A failure that is not a server error, e.g. a lost connection or a closed client.
     *
     * @param message what failed
     */
    public RingcastException(String message) {
        this(message, null, 0, null);
    }

    /**
     * A failure that is not a server error, with its cause.
     *
     * @param message what failed
     * @param cause   the underlying failure
     */
    public RingcastException(String message, Throwable cause) {
        this(message, null, 0, cause);
    }

    /**
     * A failure the server reported, or a connection's end.
     *
     * @param message   what failed
     * @param code      the server's error code, or null when the server sent none
     * @param closeCode the WebSocket close code when known, else 0
     */
    public RingcastException(String message, ErrorCode code, int closeCode) {
        this(message, code, closeCode, null);
    }

    /**
     * A failure the server reported, or a connection's end, with its cause.
     *
     * @param message   what failed
     * @param code      the server's error code, or null when the server sent none
     * @param closeCode the WebSocket close code when known, else 0
     * @param cause     the underlying failure
     */
    public RingcastException(String message, ErrorCode code, int closeCode, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.closeCode = closeCode;
    }

    /** {@return the server's error code, or null when the failure is not a server error (e.g. connection lost)} */
    public ErrorCode code() {
        return code;
    }

    /** {@return the WebSocket close code of the connection's end when known, else 0} */
    public int closeCode() {
        return closeCode;
    }
}
