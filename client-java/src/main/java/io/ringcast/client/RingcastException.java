package io.ringcast.client;

import io.ringcast.protocol.ErrorCode;

/**
 * A failure of a client operation or connection. When the server reported the failure with an
 * {@code ERROR} message, {@link #code()} says which; when the connection ended with a WebSocket
 * close, {@link #closeCode()} says how. Futures returned by the client fail with this type.
 */
public class RingcastException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final int closeCode;

    /** A failure that is not a server error, e.g. a lost connection or a closed client. */
    public RingcastException(String message) {
        this(message, null, 0, null);
    }

    /** A failure that is not a server error, with its cause. */
    public RingcastException(String message, Throwable cause) {
        this(message, null, 0, cause);
    }

    /**
     * @param code      the server's error code, or null when the server sent none
     * @param closeCode the WebSocket close code when known, else 0
     */
    public RingcastException(String message, ErrorCode code, int closeCode) {
        this(message, code, closeCode, null);
    }

    /**
     * @param code      the server's error code, or null when the server sent none
     * @param closeCode the WebSocket close code when known, else 0
     */
    public RingcastException(String message, ErrorCode code, int closeCode, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.closeCode = closeCode;
    }

    /** The server's error code, or null when the failure is not a server error (e.g. connection lost). */
    public ErrorCode code() {
        return code;
    }

    /** The WebSocket close code of the connection's end when known, else 0. */
    public int closeCode() {
        return closeCode;
    }
}
