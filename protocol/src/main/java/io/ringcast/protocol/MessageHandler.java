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

    /**
     * {@code HELLO} with the client's publisher id and the number of this connection among those the
     * client opened with that id ({@code 1} for the first, one more for each; {@code 0}: not given),
     * by which a cluster tells a publisher's sessions apart in the order they were opened.
     */
    default void onHello(int version, String clientName, Credentials credentials, long publisherId, long connection)
            throws ProtocolException {
        onHello(version, clientName, credentials, publisherId);
    }

    /** @param resume the client's last sequence per topic path, empty when it has none */
    default void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume)
            throws ProtocolException {
        throw unexpected(MessageType.SUBSCRIBE);
    }

    /**
     * {@code SUBSCRIBE} with its options ({@link SubscribeOptions#NONE} when it has no options
     * block), well framed and each option in range. The default hands a subscription without
     * options to {@link #onSubscribe(int, String, Map)}, and refuses one with options through
     * {@link #onSubscribeRefused} with {@link ErrorCode#INVALID_OPTIONS}: a receiver that does not
     * override this method serves no option.
     *
     * @param resume the client's last sequence per topic path, empty when it has none
     */
    default void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume, SubscribeOptions options)
            throws ProtocolException {
        if (options.isEmpty()) {
            onSubscribe(subscriptionId, selector, resume);
        } else {
            onSubscribeRefused(subscriptionId, ErrorCode.INVALID_OPTIONS,
                    "options are not served here: " + String.join(", ", options.names()));
        }
    }

    /**
     * A {@code SUBSCRIBE} that is well framed but cannot be opened as sent, decided by the decoder
     * (an options block with an unknown or repeated option, a value of the wrong length for its
     * kind or out of range, text that is not UTF-8) or by {@link #onSubscribe(int, String, Map,
     * SubscribeOptions)}'s default; it is called instead of {@code onSubscribe}. Not fatal: a server
     * answers {@code ERROR code} with {@code subscriptionId} as correlation id and opens nothing.
     * The default refuses the message, as for a receiver that takes no {@code SUBSCRIBE}.
     *
     * @param reason names the option and the fault, e.g. {@code maxRate: given twice}
     */
    default void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) throws ProtocolException {
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

    /** {@code REMOVE}: remove the topics {@code selector} matches; answer with the correlation id. */
    default void onRemove(int correlationId, String selector) throws ProtocolException {
        throw unexpected(MessageType.REMOVE);
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
     * {@code TOPIC} with the topic's incarnation (a {@code u32}; 0 from a server that sends none):
     * a path removed and created again has another. The default drops it and hands the rest to
     * {@link #onTopic(int, String)}.
     */
    default void onTopic(int alias, String topicPath, int incarnation) throws ProtocolException {
        onTopic(alias, topicPath);
    }

    /** {@code TOPIC_REMOVED}: the topic of {@code alias} was removed after its update {@code lastSequence}. */
    default void onTopicRemoved(int alias, long lastSequence) throws ProtocolException {
        throw unexpected(MessageType.TOPIC_REMOVED);
    }

    /** {@code REMOVED}: the {@code REMOVE} of {@code correlationId} removed {@code removedTopics} topics. */
    default void onRemoved(int correlationId, int removedTopics) throws ProtocolException {
        throw unexpected(MessageType.REMOVED);
    }

    /**
     * {@code SNAPSHOT}: a topic's current value for the subscription with this id, or for every
     * matching one with id 0; {@code flags} are {@link UpdateFlags}.
     */
    default void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame, int valueIndex,
                            int valueLength) throws ProtocolException {
        throw unexpected(MessageType.SNAPSHOT);
    }

    /**
     * {@code SNAPSHOT} as the decoder reads it: with {@link UpdateFlags#VIEWED} in {@code flags}, it
     * comes through the view {@code viewId}; without, {@code viewId} is 0. The default hands one
     * without a view to {@link #onSnapshot(int, int, long, int, ByteBuf, int, int)} and refuses one
     * with a view ({@link ErrorCode#UNKNOWN_MESSAGE_TYPE}): a receiver that does not override this
     * method asked for no view.
     */
    default void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                            int valueIndex, int valueLength) throws ProtocolException {
        if ((flags & UpdateFlags.VIEWED) != 0) {
            throw unexpectedView(MessageType.SNAPSHOT, viewId);
        }
        onSnapshot(subscriptionId, alias, sequence, flags, frame, valueIndex, valueLength);
    }

    /** {@code UPDATE}: the topic with this alias has a new value; {@code flags} are {@link UpdateFlags}. */
    default void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength)
            throws ProtocolException {
        throw unexpected(MessageType.UPDATE);
    }

    /**
     * {@code UPDATE} as the decoder reads it: with {@link UpdateFlags#VIEWED} in {@code flags}, it
     * comes through the view {@code viewId}; without, {@code viewId} is 0. The default hands one
     * without a view to {@link #onUpdate(int, long, int, ByteBuf, int, int)} and refuses one with a
     * view ({@link ErrorCode#UNKNOWN_MESSAGE_TYPE}): a receiver that does not override this method
     * asked for no view.
     */
    default void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                          int valueLength) throws ProtocolException {
        if ((flags & UpdateFlags.VIEWED) != 0) {
            throw unexpectedView(MessageType.UPDATE, viewId);
        }
        onUpdate(alias, sequence, flags, frame, valueIndex, valueLength);
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

    /**
     * {@code VIEW}: the subscription with this id receives its topics through the view
     * {@code viewId} (the messages flagged {@link UpdateFlags#VIEWED} with that id); it starts the
     * reply to a {@code SUBSCRIBE} with a view.
     */
    default void onView(int subscriptionId, int viewId) throws ProtocolException {
        throw unexpected(MessageType.VIEW);
    }

    /**
     * {@code UNMATCHED}: the value of {@code sequence} of the topic with this alias no longer passes
     * the filter of the view {@code viewId}; nothing more of the topic comes through the view until
     * a value passes again.
     */
    default void onUnmatched(int viewId, int alias, long sequence) throws ProtocolException {
        throw unexpected(MessageType.UNMATCHED);
    }

    private static ProtocolException unexpected(byte type) {
        return new ProtocolException(ErrorCode.UNKNOWN_MESSAGE_TYPE,
                "message type " + MessageType.name(type) + " is not accepted in this direction");
    }

    private static ProtocolException unexpectedView(byte type, int viewId) {
        return new ProtocolException(ErrorCode.UNKNOWN_MESSAGE_TYPE, "message type " + MessageType.name(type)
                + " is not accepted through a view (flag VIEWED, view " + Integer.toUnsignedString(viewId)
                + ") by this receiver, which asked for none");
    }
}
