package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** Test frames: server messages encoded with {@link WireCodec}, client frames decoded into readable lines. */
final class Wire {
    private Wire() {
    }

    /** One binary frame holding whatever {@code writer} appends. */
    static BinaryWebSocketFrame frame(Consumer<ByteBuf> writer) {
        ByteBuf buf = Unpooled.buffer();
        writer.accept(buf);
        return new BinaryWebSocketFrame(buf);
    }

    /** A value as a buffer to copy from, for {@code writeSnapshot}/{@code writeUpdate}. */
    static ByteBuf text(String value) {
        return Unpooled.copiedBuffer(value, StandardCharsets.UTF_8);
    }

    /** Appends {@code UPDATE} with a text value. */
    static void update(ByteBuf out, int alias, long sequence, String value) {
        ByteBuf v = text(value);
        WireCodec.writeUpdate(out, alias, sequence, 0, v, 0, v.readableBytes());
        v.release();
    }

    /** Appends {@code SNAPSHOT} with a text value. */
    static void snapshot(ByteBuf out, int subscriptionId, int alias, long sequence, int flags, String value) {
        ByteBuf v = text(value);
        WireCodec.writeSnapshot(out, subscriptionId, alias, sequence, flags, v, 0, v.readableBytes());
        v.release();
    }

    /** Appends {@code UPDATE} through view {@code viewId} ({@code flags} and {@code VIEWED}), with a text value. */
    static void viewedUpdate(ByteBuf out, int alias, long sequence, int flags, int viewId, String value) {
        ByteBuf v = text(value);
        WireCodec.writeUpdate(out, alias, sequence, flags, viewId, v, 0, v.readableBytes());
        v.release();
    }

    /** Appends {@code SNAPSHOT} through view {@code viewId} ({@code flags} and {@code VIEWED}), with a text value. */
    static void viewedSnapshot(ByteBuf out, int subscriptionId, int alias, long sequence, int flags, int viewId,
                               String value) {
        ByteBuf v = text(value);
        WireCodec.writeSnapshot(out, subscriptionId, alias, sequence, flags, viewId, v, 0, v.readableBytes());
        v.release();
    }

    /**
     * The client messages in one frame, one line each: {@code HELLO name},
     * {@code SUBSCRIBE id selector {resume}} (then its options, as {@link SubscribeOptions#toString()}
     * gives them, when it has some),
     * {@code UNSUBSCRIBE id}, {@code PUBLISH id topic value}, {@code PING nonce}.
     */
    static List<String> decodeClientFrame(ByteBuf frame) {
        List<String> lines = new ArrayList<>();
        try {
            WireCodec.decode(frame, new MessageHandler() {
                @Override
                public void onHello(int version, String clientName) {
                    lines.add("HELLO " + clientName);
                }

                @Override
                public void onSubscribe(int subscriptionId, String selector, Map<String, Long> resume,
                                        SubscribeOptions options) {
                    lines.add("SUBSCRIBE " + subscriptionId + " " + selector + " " + resume
                            + (options.isEmpty() ? "" : " " + options));
                }

                @Override
                public void onUnsubscribe(int subscriptionId) {
                    lines.add("UNSUBSCRIBE " + subscriptionId);
                }

                @Override
                public void onPublish(int correlationId, String topicPath, ByteBuf f, int valueIndex, int valueLength) {
                    lines.add("PUBLISH " + correlationId + " " + topicPath + " "
                            + f.toString(valueIndex, valueLength, StandardCharsets.UTF_8));
                }

                @Override
                public void onRepublish(int correlationId, String topicPath, ByteBuf f, int valueIndex, int valueLength) {
                    lines.add("REPUBLISH " + correlationId + " " + topicPath + " "
                            + f.toString(valueIndex, valueLength, StandardCharsets.UTF_8));
                }

                @Override
                public void onPing(long nonce) {
                    lines.add("PING " + nonce);
                }
            });
        } catch (ProtocolException e) {
            throw new AssertionError("the client sent a bad frame: " + e.reason(), e);
        }
        return lines;
    }
}
