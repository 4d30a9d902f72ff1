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

    /** {@code HELLO}: a client opens a session, speaking protocol {@code version}. */
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

    /** {@code UNSUBSCRIBE}: the client closes the subscription with this id. */
    default void onUnsubscribe(int subscriptionId) throws ProtocolException {
        throw unexpected(MessageType.UNSUBSCRIBE);
    }

    /** {@code PUBLISH}: a value for {@code topicPath}, acked by {@code correlationId}. */
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

    /** {@code PING}: answered with {@code PONG} and the same {@code nonce}. */
    default void onPing(long nonce) throws ProtocolException {
        throw unexpected(MessageType.PING);
    }

    /** {@code WELCOME}: the server accepted the session, with the limits the client must keep to. */
    default void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs)
            throws ProtocolException {
        throw unexpected(MessageType.WELCOME);
    }

    /** {@code TOPIC}: from now on in this session, {@code alias} stands for {@code topicPath}. */
    default void onTopic(int alias, String topicPath) throws ProtocolException {
        throw unexpected(MessageType.TOPIC);
    }

    /**
     * {@code SNAPSHOT}: a topic's current value for the subscription with this id, or for every
     * matching one with id 0; {@code flags} are {@link UpdateFlags}.
     */
    default void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame, int valueIndex,
                            int valueLength) throws ProtocolException {
        throw unexpected(MessageType.SNAPSHOT);
    }

    /** {@code UPDATE}: the topic with this alias has a new value; {@code flags} are {@link UpdateFlags}. */
    default void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        throw unexpected(MessageType.UPDATE);
    }

    /** {@code PUBLISH_ACK}: the publish with this correlation id was applied as {@code sequence}. */
    default void onPublishAck(int correlationId, long sequence) throws ProtocolException {
        throw unexpected(MessageType.PUBLISH_ACK);
    }

    /**
     * {@code SUBSCRIBED}: the reply to {@code SUBSCRIBE} is complete ({@code matchedTopics} topics
     * matched); updates follow.
     */
    default void onSubscribed(int subscriptionId, int matchedTopics) throws ProtocolException {
        throw unexpected(MessageType.SUBSCRIBED);
    }

    /** @param code the wire code; {@link ErrorCode#of} maps it, or gives null for a code unknown to this version */
    default void onError(int code, int correlationId, String reason) throws ProtocolException {
        throw unexpected(MessageType.ERROR);
    }

    /** {@code PONG}: the answer to the {@code PING} that sent {@code nonce}. */
    default void onPong(long nonce) throws ProtocolException {
        throw unexpected(MessageType.PONG);
    }

    private static ProtocolException unexpected(byte type) {
        return new ProtocolException(ErrorCode.UNKNOWN_MESSAGE_TYPE,
                "message type " + MessageType.name(type) + " is not accepted in this direction");
    }
}
