package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The body decoder behind {@link WireCodec#decodeOne}: reads one message's fields, each checked
 * against the end of its body, and hands them to the {@link MessageHandler}. Errors name the
 * message type and the field. Stateless; safe from any thread.
 */
final class WireDecoder {
    private WireDecoder() {
    }

    static void decodeBody(byte type, ByteBuf in, int end, MessageHandler h) throws ProtocolException {
        switch (type) {
            case MessageType.HELLO: {
                int version = u16(in, end, type, "version");
                String clientName = string(in, end, type, "clientName");
                Credentials credentials = in.readerIndex() < end ? credentials(in, end, type) : Credentials.ANONYMOUS;
                long publisherId = in.readerIndex() < end ? nonce(in, end, type, "publisherId") : 0;
                h.onHello(version, clientName, credentials, publisherId);
                return;
            }
            case MessageType.SUBSCRIBE: {
                int id = u32(in, end, type, "subscriptionId");
                String selector = string(in, end, type, "selector");
                long count = u32(in, end, type, "resumeCount") & 0xFFFFFFFFL;
                // each entry is at least 2 + 8 bytes: refuse a count the body cannot hold before allocating
                if (count * 10 > end - in.readerIndex()) {
                    throw malformed(type, "resumeCount " + count + " does not fit in the " + (end - in.readerIndex())
                            + " bytes left");
                }
                Map<String, Long> resume;
                if (count == 0) {
                    resume = Collections.emptyMap();
                } else {
                    resume = new LinkedHashMap<>((int) count * 2);
                    for (int i = 0; i < count; i++) {
                        String path = string(in, end, type, "resume[" + i + "].topicPath");
                        resume.put(path, u64(in, end, type, "resume[" + i + "].lastSequence"));
                    }
                }
                h.onSubscribe(id, selector, resume);
                return;
            }
            case MessageType.UNSUBSCRIBE:
                h.onUnsubscribe(u32(in, end, type, "subscriptionId"));
                return;
            case MessageType.PUBLISH:
            case MessageType.REPUBLISH: {
                int correlationId = u32(in, end, type, "correlationId");
                String path = string(in, end, type, "topicPath");
                if (type == MessageType.PUBLISH) {
                    h.onPublish(correlationId, path, in, in.readerIndex(), end - in.readerIndex());
                } else {
                    h.onRepublish(correlationId, path, in, in.readerIndex(), end - in.readerIndex());
                }
                return;
            }
            case MessageType.PING:
                h.onPing(nonce(in, end, type));
                return;
            case MessageType.WELCOME: {
                int version = u16(in, end, type, "version");
                String sessionId = string(in, end, type, "sessionId");
                int maxFrame = u32(in, end, type, "maxFrameBytes");
                h.onWelcome(version, sessionId, maxFrame, u32(in, end, type, "idleTimeoutMs"));
                return;
            }
            case MessageType.TOPIC: {
                int alias = u32(in, end, type, "alias");
                h.onTopic(alias, string(in, end, type, "topicPath"));
                return;
            }
            case MessageType.SNAPSHOT: {
                int id = u32(in, end, type, "subscriptionId");
                int alias = u32(in, end, type, "alias");
                long seq = u64(in, end, type, "sequence");
                int flags = u8(in, end, type, "flags");
                h.onSnapshot(id, alias, seq, flags, in, in.readerIndex(), end - in.readerIndex());
                return;
            }
            case MessageType.UPDATE: {
                int alias = u32(in, end, type, "alias");
                long seq = u64(in, end, type, "sequence");
                int flags = u8(in, end, type, "flags");
                h.onUpdate(alias, seq, flags, in, in.readerIndex(), end - in.readerIndex());
                return;
            }
            case MessageType.PUBLISH_ACK: {
                int correlationId = u32(in, end, type, "correlationId");
                h.onPublishAck(correlationId, u64(in, end, type, "sequence"));
                return;
            }
            case MessageType.SUBSCRIBED: {
                int id = u32(in, end, type, "subscriptionId");
                h.onSubscribed(id, u32(in, end, type, "matchedTopics"));
                return;
            }
            case MessageType.ERROR: {
                int code = u16(in, end, type, "code");
                int correlationId = u32(in, end, type, "correlationId");
                h.onError(code, correlationId, string(in, end, type, "reason"));
                return;
            }
            case MessageType.PONG:
                h.onPong(nonce(in, end, type));
                return;
            default:
                throw new ProtocolException(ErrorCode.UNKNOWN_MESSAGE_TYPE, "unknown message type "
                        + MessageType.name(type) + " at offset " + (in.readerIndex() - WireCodec.HEADER_BYTES));
        }
    }

    private static void need(ByteBuf in, int end, int bytes, byte type, String field) throws ProtocolException {
        if (end - in.readerIndex() < bytes) {
            throw malformed(type, "field " + field + " needs " + bytes + " bytes, " + (end - in.readerIndex())
                    + " left in the body");
        }
    }

    private static ProtocolException malformed(byte type, String what) {
        return new ProtocolException(ErrorCode.MALFORMED_FRAME, "truncated or malformed " + MessageType.name(type)
                + " message: " + what);
    }

    private static int u8(ByteBuf in, int end, byte type, String field) throws ProtocolException {
        need(in, end, 1, type, field);
        return in.readUnsignedByte();
    }

    private static int u16(ByteBuf in, int end, byte type, String field) throws ProtocolException {
        need(in, end, 2, type, field);
        return in.readUnsignedShort();
    }

    private static int u32(ByteBuf in, int end, byte type, String field) throws ProtocolException {
        need(in, end, 4, type, field);
        return in.readInt();
    }

    private static long u64(ByteBuf in, int end, byte type, String field) throws ProtocolException {
        need(in, end, 8, type, field);
        long v = in.readLong();
        if (v < 0) {
            throw malformed(type, "field " + field + " is " + Long.toUnsignedString(v) + ", above 2^63-1");
        }
        return v;
    }

    /** A nonce (or a publisher id) is opaque: all 64 bits are allowed, unlike sequences. */
    private static long nonce(ByteBuf in, int end, byte type) throws ProtocolException {
        return nonce(in, end, type, "nonce");
    }

    private static long nonce(ByteBuf in, int end, byte type, String field) throws ProtocolException {
        need(in, end, 8, type, field);
        return in.readLong();
    }

    /** The optional tail of {@code HELLO}: {@code u8 kind}, then the kind's strings. */
    private static Credentials credentials(ByteBuf in, int end, byte type) throws ProtocolException {
        int kind = u8(in, end, type, "credentials kind");
        switch (kind) {
            case Credentials.NONE:
                return Credentials.ANONYMOUS;
            case Credentials.PASSWORD:
                return Credentials.password(string(in, end, type, "principal"), string(in, end, type, "password"));
            case Credentials.TOKEN:
                return Credentials.token(string(in, end, type, "token"));
            default:
                throw malformed(type, "unknown credentials kind " + kind + " (0 none, 1 password, 2 token)");
        }
    }

    private static String string(ByteBuf in, int end, byte type, String field) throws ProtocolException {
        int length = u16(in, end, type, field + " length");
        need(in, end, length, type, field);
        int index = in.readerIndex();
        if (!ByteBufUtil.isText(in, index, length, StandardCharsets.UTF_8)) {
            throw malformed(type, "field " + field + " is not valid UTF-8");
        }
        in.skipBytes(length);
        return in.toString(index, length, StandardCharsets.UTF_8);
    }
}
