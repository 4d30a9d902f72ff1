package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.MessageType;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
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
     * Appends a {@code TOPIC} as a server from before incarnations wrote it: alias and path, and
     * no {@code u32 incarnation} after them.
     */
    static void topicWithoutIncarnation(ByteBuf out, int alias, String path) {
        byte[] utf8 = path.getBytes(StandardCharsets.UTF_8);
        out.writeByte(MessageType.TOPIC);
        out.writeInt(4 + 2 + utf8.length);
        out.writeInt(alias);
        out.writeShort(utf8.length);
        out.writeBytes(utf8);
    }

    /**
     * The client messages in one frame, one line each: {@code HELLO name},
     * {@code SUBSCRIBE id selector {resume}} (then its options, as {@link SubscribeOptions#toString()}
     * gives them, when it has some; with {@code incarnations}, each resume position reads
     * {@code path=lastSequence@incarnation}, the option's values paired with the positions in wire
     * order), {@code UNSUBSCRIBE id}, {@code PUBLISH id topic value}, {@code REMOVE id selector},
     * {@code PING nonce}.
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
                    lines.add("SUBSCRIBE " + subscriptionId + " " + selector + " " + withIncarnations(resume, options)
                            + (options.isEmpty() ? "" : " " + options));
                }

                @Override
                public void onSubscribeRefused(int subscriptionId, ErrorCode code, String reason) {
                    throw new AssertionError("the client sent a SUBSCRIBE a server refuses: " + code + ": " + reason);
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
                public void onRemove(int correlationId, String selector) {
                    lines.add("REMOVE " + correlationId + " " + selector);
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

    /** The resume positions as {@code {path=lastSequence}}, or {@code {path=lastSequence@incarnation}} with the option. */
    private static String withIncarnations(Map<String, Long> resume, SubscribeOptions options) {
        int[] incarnations = options.incarnations();
        if (incarnations.length == 0) {
            return resume.toString();
        }
        StringJoiner positions = new StringJoiner(", ", "{", "}");
        int i = 0;
        for (Map.Entry<String, Long> e : resume.entrySet()) {
            positions.add(e.getKey() + "=" + e.getValue() + "@" + Integer.toUnsignedString(incarnations[i++]));
        }
        return positions.toString();
    }
}
