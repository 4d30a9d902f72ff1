package io.ringcast.client;

import io.ringcast.protocol.ErrorCode;

/**
 * A publish sent again after a lost connection that the server can no longer tell applied or
 * not ({@link ErrorCode#PUBLISH_OUTCOME_UNKNOWN}): the server restarted, or forgot this client's
 * ledger while it was away. The server did not apply it again; it may have been applied once,
 * before the connection was lost. Check the topic before publishing it again.
 */
public class PublishOutcomeUnknownException extends RingcastException {
    private static final long serialVersionUID = 1L;

    /**
     * The server's answer to a publish sent again.
     *
     * @param message the error's code and the server's reason
     */
    public PublishOutcomeUnknownException(String message) {
        super(message, ErrorCode.PUBLISH_OUTCOME_UNKNOWN, 0);
    }
}
