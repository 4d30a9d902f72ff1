package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;

import java.util.Map;

/**
 * Receives the messages {@link WireCodec#decode} finds in a frame, one call per message, on the
 * decoding thread. A side implements the messages it accepts; the defaults refuse the message
 * with {@link ErrorCode#UNKNOWN_MESSAGE_TYPE}, so a server that gets {@code UPDATE} from a client
 * answers as the protocol says.
 *
 * <p>Values arrive as a range of the frame buffer ({@code frame}, {@code valueIndex},
 * {@code valueLength}), valid only during the call: copy or {@code retainedSlice} what must
 * outlive it. That keeps decoding free of allocation.
 */
public interface MessageHandler {

    default void onHello(int version, String clientName) throws ProtocolException {
        throw unexpected(MessageType.HELLO);
    }

    /** {@code HELLO} with what the client proves itself with ({@link Credentials#ANONYMOUS} when it sent none). */
    default void onHello(int version, String clientName, Credentials credentials) throws ProtocolException {
        onHello(version, clientName);
    }

    /**
     * {@code HELLO} with the client's publisher id, which makes its publishes safe to send again
     * ({@code 0}: none given).
     */
    default void onHello(int version, String clientName, Credentials credentials, long publisherId)
            throws ProtocolException {
        onHello(version, clientName, credentials);
    }

    /** @param resume the client's last sequence per topic path, empty when it has none */
    default void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume)
            throws ProtocolException {
        throw unexpected(MessageType.SUBSCRIBE);
    }

    default void onUnsubscribe(int subscriptionId) throws ProtocolException {
        throw unexpected(MessageType.UNSUBSCRIBE);
    }

    default void onPublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        throw unexpected(MessageType.PUBLISH);
    }

    /**
     * {@code REPUBLISH}: a publish sent before, on a connection lost before its ack, with the same
     * correlation id: applied unless that publisher's publish with that id was applied already.
     */
    default void onRepublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        throw unexpected(MessageType.REPUBLISH);
    }

    default void onPing(long nonce) throws ProtocolException {
        throw unexpected(MessageType.PING);
    }

    default void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs)
            throws ProtocolException {
        throw unexpected(MessageType.WELCOME);
    }

    default void onTopic(int alias, String topicPath) throws ProtocolException {
        throw unexpected(MessageType.TOPIC);
    }

    default void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame, int valueIndex,
                            int valueLength) throws ProtocolException {
        throw unexpected(MessageType.SNAPSHOT);
    }

    default void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        throw unexpected(MessageType.UPDATE);
    }

    default void onPublishAck(int correlationId, long sequence) throws ProtocolException {
        throw unexpected(MessageType.PUBLISH_ACK);
    }

    default void onSubscribed(int subscriptionId, int matchedTopics) throws ProtocolException {
        throw unexpected(MessageType.SUBSCRIBED);
    }

    /** @param code the wire code; {@link ErrorCode#of} maps it, or gives null for a code unknown to this version */
    default void onError(int code, int correlationId, String reason) throws ProtocolException {
        throw unexpected(MessageType.ERROR);
    }

    default void onPong(long nonce) throws ProtocolException {
        throw unexpected(MessageType.PONG);
    }

    private static ProtocolException unexpected(byte type) {
        return new ProtocolException(ErrorCode.UNKNOWN_MESSAGE_TYPE,
                "message type " + MessageType.name(type) + " is not accepted in this direction");
    }
}
