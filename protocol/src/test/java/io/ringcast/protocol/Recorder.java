package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Records the messages a {@link WireCodec#decode} call hands out, one string per message such as
 * {@code PUBLISH(9, fx/EURUSD, 0001feff)}. {@code u32} fields are shown unsigned, values as hex
 * read from the frame range during the call (the range is only valid then).
 */
final class Recorder {
    final List<String> events = new ArrayList<>();

    static String event(String name, Object... fields) {
        return name + Arrays.stream(fields).map(String::valueOf).collect(Collectors.joining(", ", "(", ")"));
    }

    static String u32(int v) {
        return Integer.toUnsignedString(v);
    }

    /** {@code incarnations [1764384256, 0]}: each shown unsigned, in the resume list's order. */
    static String incarnations(int... incarnations) {
        return Arrays.stream(incarnations).mapToObj(Recorder::u32)
                .collect(Collectors.joining(", ", "incarnations [", "]"));
    }

    private static String value(ByteBuf frame, int index, int length) {
        if (index < 0 || length < 0 || index + length > frame.writerIndex()) {
            throw new AssertionError("value range " + index + "+" + length + " outside the frame (writerIndex "
                    + frame.writerIndex() + ")");
        }
        return ByteBufUtil.hexDump(frame, index, length);
    }

    /** A server's handler: accepts client-to-server messages; the rest fall to MessageHandler's defaults. */
    MessageHandler serverSide() {
        return new MessageHandler() {
            @Override
            public void onHello(int version, String clientName) {
                events.add(event("HELLO", version, clientName));
            }

            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume) {
                events.add(event("SUBSCRIBE", u32(subscriptionId), selector, resume));
            }

            /**
             * With options, the options after the resume list, and the incarnations' values after
             * them when given (the options' own text counts them only); without, through the
             * default to the method above.
             */
            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume,
                                    SubscribeOptions options) throws ProtocolException {
                if (options.isEmpty()) {
                    MessageHandler.super.onSubscribe(subscriptionId, selector, resume, options);
                } else if (options.incarnations().length == 0) {
                    events.add(event("SUBSCRIBE", u32(subscriptionId), selector, resume, options));
                } else {
                    events.add(event("SUBSCRIBE", u32(subscriptionId), selector, resume, options,
                            incarnations(options.incarnations())));
                }
            }

            @Override
            public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) {
                events.add(event("SUBSCRIBE_REFUSED", u32(subscriptionId), code, reason));
            }

            @Override
            public void onUnsubscribe(int subscriptionId) {
                events.add(event("UNSUBSCRIBE", u32(subscriptionId)));
            }

            @Override
            public void onPublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength) {
                events.add(event("PUBLISH", u32(correlationId), topicPath, value(frame, valueIndex, valueLength)));
            }

            @Override
            public void onRepublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength) {
                events.add(event("REPUBLISH", u32(correlationId), topicPath, value(frame, valueIndex, valueLength)));
            }

            @Override
            public void onRemove(int correlationId, String selector) {
                events.add(event("REMOVE", u32(correlationId), selector));
            }

            @Override
            public void onPing(long nonce) {
                events.add(event("PING", nonce));
            }
        };
    }

    /** A client's handler: accepts server-to-client messages; the rest fall to MessageHandler's defaults. */
    MessageHandler clientSide() {
        return new MessageHandler() {
            @Override
            public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
                events.add(event("WELCOME", version, sessionId, u32(maxFrameBytes), u32(idleTimeoutMs)));
            }

            /** With the incarnation, 0 for a {@code TOPIC} that carries none. */
            @Override
            public void onTopic(int alias, String topicPath, int incarnation) {
                events.add(event("TOPIC", u32(alias), topicPath, u32(incarnation)));
            }

            @Override
            public void onTopicRemoved(int alias, long lastSequence) {
                events.add(event("TOPIC_REMOVED", u32(alias), lastSequence));
            }

            @Override
            public void onRemoved(int correlationId, int removedTopics) {
                events.add(event("REMOVED", u32(correlationId), u32(removedTopics)));
            }

            @Override
            public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame,
                                   int valueIndex, int valueLength) {
                events.add(event("SNAPSHOT", u32(subscriptionId), u32(alias), sequence, flags,
                        value(frame, valueIndex, valueLength)));
            }

            @Override
            public void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength) {
                events.add(event("UPDATE", u32(alias), sequence, flags, value(frame, valueIndex, valueLength)));
            }

            /** Through a view, the view id before the value; without, through the default to the methods above. */
            @Override
            public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                                   int valueIndex, int valueLength) throws ProtocolException {
                if ((flags & UpdateFlags.VIEWED) == 0) {
                    MessageHandler.super.onSnapshot(subscriptionId, alias, sequence, flags, viewId, frame, valueIndex,
                            valueLength);
                } else {
                    events.add(event("SNAPSHOT", u32(subscriptionId), u32(alias), sequence, flags, "view " + u32(viewId),
                            value(frame, valueIndex, valueLength)));
                }
            }

            @Override
            public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                                 int valueLength) throws ProtocolException {
                if ((flags & UpdateFlags.VIEWED) == 0) {
                    MessageHandler.super.onUpdate(alias, sequence, flags, viewId, frame, valueIndex, valueLength);
                } else {
                    events.add(event("UPDATE", u32(alias), sequence, flags, "view " + u32(viewId),
                            value(frame, valueIndex, valueLength)));
                }
            }

            @Override
            public void onView(int subscriptionId, int viewId) {
                events.add(event("VIEW", u32(subscriptionId), u32(viewId)));
            }

            @Override
            public void onUnmatched(int viewId, int alias, long sequence) {
                events.add(event("UNMATCHED", u32(viewId), u32(alias), sequence));
            }

            @Override
            public void onPublishAck(int correlationId, long sequence) {
                events.add(event("PUBLISH_ACK", u32(correlationId), sequence));
            }

            @Override
            public void onSubscribed(int subscriptionId, int matchedTopics) {
                events.add(event("SUBSCRIBED", u32(subscriptionId), u32(matchedTopics)));
            }

            @Override
            public void onError(int code, int correlationId, String reason) {
                events.add(event("ERROR", code, u32(correlationId), reason));
            }

            @Override
            public void onPong(long nonce) {
                events.add(event("PONG", nonce));
            }
        };
    }

    /** Accepts every message type. */
    MessageHandler bothSides() {
        MessageHandler s = serverSide();
        MessageHandler c = clientSide();
        return new MessageHandler() {
            @Override
            public void onHello(int version, String clientName) throws ProtocolException {
                s.onHello(version, clientName);
            }

            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume)
                    throws ProtocolException {
                s.onSubscribe(subscriptionId, selector, resume);
            }

            @Override
            public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume,
                                    SubscribeOptions options) throws ProtocolException {
                s.onSubscribe(subscriptionId, selector, resume, options);
            }

            @Override
            public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) throws ProtocolException {
                s.onSubscribeRefused(subscriptionId, code, reason);
            }

            @Override
            public void onUnsubscribe(int subscriptionId) throws ProtocolException {
                s.onUnsubscribe(subscriptionId);
            }

            @Override
            public void onPublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength)
                    throws ProtocolException {
                s.onPublish(correlationId, topicPath, frame, valueIndex, valueLength);
            }

            @Override
            public void onRepublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength)
                    throws ProtocolException {
                s.onRepublish(correlationId, topicPath, frame, valueIndex, valueLength);
            }

            @Override
            public void onRemove(int correlationId, String selector) throws ProtocolException {
                s.onRemove(correlationId, selector);
            }

            @Override
            public void onPing(long nonce) throws ProtocolException {
                s.onPing(nonce);
            }

            @Override
            public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs)
                    throws ProtocolException {
                c.onWelcome(version, sessionId, maxFrameBytes, idleTimeoutMs);
            }

            @Override
            public void onTopic(int alias, String topicPath, int incarnation) throws ProtocolException {
                c.onTopic(alias, topicPath, incarnation);
            }

            @Override
            public void onTopicRemoved(int alias, long lastSequence) throws ProtocolException {
                c.onTopicRemoved(alias, lastSequence);
            }

            @Override
            public void onRemoved(int correlationId, int removedTopics) throws ProtocolException {
                c.onRemoved(correlationId, removedTopics);
            }

            @Override
            public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, ByteBuf frame,
                                   int valueIndex, int valueLength) throws ProtocolException {
                c.onSnapshot(subscriptionId, alias, sequence, flags, frame, valueIndex, valueLength);
            }

            @Override
            public void onUpdate(int alias, long sequence, int flags, ByteBuf frame, int valueIndex, int valueLength)
                    throws ProtocolException {
                c.onUpdate(alias, sequence, flags, frame, valueIndex, valueLength);
            }

            @Override
            public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                                   int valueIndex, int valueLength) throws ProtocolException {
                c.onSnapshot(subscriptionId, alias, sequence, flags, viewId, frame, valueIndex, valueLength);
            }

            @Override
            public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                                 int valueLength) throws ProtocolException {
                c.onUpdate(alias, sequence, flags, viewId, frame, valueIndex, valueLength);
            }

            @Override
            public void onView(int subscriptionId, int viewId) throws ProtocolException {
                c.onView(subscriptionId, viewId);
            }

            @Override
            public void onUnmatched(int viewId, int alias, long sequence) throws ProtocolException {
                c.onUnmatched(viewId, alias, sequence);
            }

            @Override
            public void onPublishAck(int correlationId, long sequence) throws ProtocolException {
                c.onPublishAck(correlationId, sequence);
            }

            @Override
            public void onSubscribed(int subscriptionId, int matchedTopics) throws ProtocolException {
                c.onSubscribed(subscriptionId, matchedTopics);
            }

            @Override
            public void onError(int code, int correlationId, String reason) throws ProtocolException {
                c.onError(code, correlationId, reason);
            }

            @Override
            public void onPong(long nonce) throws ProtocolException {
                c.onPong(nonce);
            }
        };
    }
}
