package io.ringcast.cluster.internal;

/**
 * Bytes that are not a well-formed log entry, response or snapshot part ({@link TopicLogCodec}):
 * the message names what is wrong and where.
 */
final class MalformedEntryException extends Exception {
    private static final long serialVersionUID = 1L;

    public MalformedEntryException(String message) {
        super(message);
    }
}
