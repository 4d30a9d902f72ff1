package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Encodes and decodes the messages of wire protocol version 1 ({@code docs/protocol.md}).
 * Each {@code write*} method appends one message ({@code u8 type, u32 body length, body}) to a
 * buffer, so several calls build a batched frame. Stateless; safe from any thread.
 */
public final class WireCodec {
    /** The protocol version this codec speaks. */
    public static final int VERSION = 1;
    /** Bytes of a message header: type and body length. */
    public static final int HEADER_BYTES = 5;
    /** Bytes an {@code UPDATE} adds to its value. */
    public static final int UPDATE_OVERHEAD_BYTES = HEADER_BYTES + 4 + 8 + 1;
    /** Bytes a {@code SNAPSHOT} adds to its value. */
    public static final int SNAPSHOT_OVERHEAD_BYTES = UPDATE_OVERHEAD_BYTES + 4;
    /** The longest string field, in UTF-8 bytes. */
    public static final int MAX_STRING_BYTES = 0xFFFF;

    private WireCodec() {
    }

    // ---------------------------------------------------------------- client to server

    public static void writeHello(ByteBuf out, int version, String clientName) {
        int start = begin(out, MessageType.HELLO, clientName);
        out.writeShort(version);
        writeString(out, clientName);
        end(out, start);
    }

    /** {@code HELLO} with credentials; {@link Credentials#ANONYMOUS} writes the plain form. */
    public static void writeHello(ByteBuf out, int version, String clientName, Credentials credentials) {
        writeHello(out, version, clientName, credentials, 0);
    }

    /**
     * {@code HELLO} with credentials and a publisher id ({@code 0}: none, and with
     * {@link Credentials#ANONYMOUS} the plain form).
     */
    public static void writeHello(ByteBuf out, int version, String clientName, Credentials credentials,
                                  long publisherId) {
        if (credentials.kind() == Credentials.NONE && publisherId == 0) {
            writeHello(out, version, clientName);
            return;
        }
        int start = begin(out, MessageType.HELLO, clientName, credentials.principal(), credentials.secret());
        out.writeShort(version);
        writeString(out, clientName);
        out.writeByte(credentials.kind());
        if (credentials.kind() == Credentials.PASSWORD) {
            writeString(out, credentials.principal());
        }
        if (credentials.kind() != Credentials.NONE) {
            writeString(out, credentials.secret());
        }
        if (publisherId != 0) {
            out.writeLong(publisherId);
        }
        end(out, start);
    }

    /** @param resume last sequence per topic path to resume from; may be empty */
    public static void writeSubscribe(ByteBuf out, int subscriptionId, String selector, Map<String, Long> resume) {
        for (String path : resume.keySet()) {
            checkString(path);
        }
        int start = begin(out, MessageType.SUBSCRIBE, selector);
        out.writeInt(subscriptionId);
        writeString(out, selector);
        out.writeInt(resume.size());
        for (Map.Entry<String, Long> e : resume.entrySet()) {
            writeString(out, e.getKey());
            out.writeLong(e.getValue());
        }
        end(out, start);
    }

    public static void writeUnsubscribe(ByteBuf out, int subscriptionId) {
        out.writeByte(MessageType.UNSUBSCRIBE);
        out.writeInt(4);
        out.writeInt(subscriptionId);
    }

    public static void writePublish(ByteBuf out, int correlationId, String topicPath, byte[] value) {
        writePublish(out, MessageType.PUBLISH, correlationId, topicPath, value);
    }

    /** {@code REPUBLISH}: the same body as {@code PUBLISH}, for a publish sent again. */
    public static void writeRepublish(ByteBuf out, int correlationId, String topicPath, byte[] value) {
        writePublish(out, MessageType.REPUBLISH, correlationId, topicPath, value);
    }

    private static void writePublish(ByteBuf out, byte type, int correlationId, String topicPath, byte[] value) {
        int start = begin(out, type, topicPath);
        out.writeInt(correlationId);
        writeString(out, topicPath);
        out.writeBytes(value);
        end(out, start);
    }

    public static void writePing(ByteBuf out, long nonce) {
        out.writeByte(MessageType.PING);
        out.writeInt(8);
        out.writeLong(nonce);
    }

    // ---------------------------------------------------------------- server to client

    public static void writeWelcome(ByteBuf out, int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
        int start = begin(out, MessageType.WELCOME, sessionId);
        out.writeShort(version);
        writeString(out, sessionId);
        out.writeInt(maxFrameBytes);
        out.writeInt(idleTimeoutMs);
        end(out, start);
    }

    public static void writeTopic(ByteBuf out, int alias, String topicPath) {
        int start = begin(out, MessageType.TOPIC, topicPath);
        out.writeInt(alias);
        writeString(out, topicPath);
        end(out, start);
    }

    public static void writeSnapshot(ByteBuf out, int subscriptionId, int alias, long sequence, int flags,
                                     ByteBuf value, int valueIndex, int valueLength) {
        out.writeByte(MessageType.SNAPSHOT);
        out.writeInt(4 + 4 + 8 + 1 + valueLength);
        out.writeInt(subscriptionId);
        out.writeInt(alias);
        out.writeLong(sequence);
        out.writeByte(flags);
        out.writeBytes(value, valueIndex, valueLength);
    }

    public static void writeUpdate(ByteBuf out, int alias, long sequence, int flags,
                                   ByteBuf value, int valueIndex, int valueLength) {
        out.writeByte(MessageType.UPDATE);
        out.writeInt(4 + 8 + 1 + valueLength);
        out.writeInt(alias);
        out.writeLong(sequence);
        out.writeByte(flags);
        out.writeBytes(value, valueIndex, valueLength);
    }

    public static void writePublishAck(ByteBuf out, int correlationId, long sequence) {
        out.writeByte(MessageType.PUBLISH_ACK);
        out.writeInt(12);
        out.writeInt(correlationId);
        out.writeLong(sequence);
    }

    public static void writeSubscribed(ByteBuf out, int subscriptionId, int matchedTopics) {
        out.writeByte(MessageType.SUBSCRIBED);
        out.writeInt(8);
        out.writeInt(subscriptionId);
        out.writeInt(matchedTopics);
    }

    /** Writes an {@code ERROR}; a reason over 1,000 UTF-8 bytes is cut to its first 300 characters. */
    public static void writeError(ByteBuf out, ErrorCode code, int correlationId, String reason) {
        int start = begin(out, MessageType.ERROR);
        out.writeShort(code.code());
        out.writeInt(correlationId);
        String r = reason == null ? "" : reason;
        if (ByteBufUtil.utf8Bytes(r) > 1000) {
            r = r.substring(0, Math.min(r.length(), 300)) + "...";
        }
        writeString(out, r);
        end(out, start);
    }

    public static void writePong(ByteBuf out, long nonce) {
        out.writeByte(MessageType.PONG);
        out.writeInt(8);
        out.writeLong(nonce);
    }

    /**
     * Writes a {@code string}: u16 byte length and UTF-8.
     *
     * @throws IllegalArgumentException if it is longer than {@value #MAX_STRING_BYTES} UTF-8 bytes;
     *                                  nothing is written then
     */
    public static void writeString(ByteBuf out, String s) {
        int length = checkString(s);
        out.writeShort(length);
        ByteBufUtil.reserveAndWriteUtf8(out, s, length);
    }

    private static int checkString(String s) {
        int length = ByteBufUtil.utf8Bytes(s);
        if (length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("string of " + length + " UTF-8 bytes is longer than the "
                    + MAX_STRING_BYTES + " a string field holds");
        }
        return length;
    }

    /**
     * Starts a message after checking its strings, so that a refused string leaves nothing half
     * written in {@code out}.
     */
    private static int begin(ByteBuf out, byte type, String... strings) {
        for (String s : strings) {
            checkString(s);
        }
        int start = out.writerIndex();
        out.writeByte(type);
        out.writeInt(0); // body length, patched by end()
        return start;
    }

    private static void end(ByteBuf out, int start) {
        out.setInt(start + 1, out.writerIndex() - start - HEADER_BYTES);
    }

    // ---------------------------------------------------------------- decoding

    /**
     * Decodes every message in {@code frame} (from its reader index to its writer index) and hands
     * each to {@code handler} in order. The reader index ends after the last message decoded.
     *
     * @throws ProtocolException on the first message that is malformed, of an unknown type, or
     *                           refused by the handler; messages before it were handled
     */
    public static void decode(ByteBuf frame, MessageHandler handler) throws ProtocolException {
        if (!frame.isReadable()) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "empty frame: a frame holds at least one message");
        }
        while (frame.isReadable()) {
            decodeOne(frame, handler);
        }
    }

    /**
     * The type byte of the message at the reader index, without consuming it: lets a caller that
     * decodes message by message decide before decoding (for example, whether it has room for it).
     * The frame must be readable.
     */
    public static byte peekType(ByteBuf frame) {
        return frame.getByte(frame.readerIndex());
    }

    /**
     * Decodes the one message at the reader index of {@code frame}, hands it to {@code handler},
     * and leaves the reader index after it.
     *
     * @throws ProtocolException if that message is malformed, of an unknown type, or refused by the handler
     */
    public static void decodeOne(ByteBuf frame, MessageHandler handler) throws ProtocolException {
        int offset = frame.readerIndex();
        if (frame.readableBytes() < HEADER_BYTES) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "truncated message header at offset " + offset
                    + ": " + frame.readableBytes() + " bytes left, a header needs " + HEADER_BYTES);
        }
        byte type = frame.getByte(offset);
        long length = frame.getUnsignedInt(offset + 1);
        int bodyIndex = offset + HEADER_BYTES;
        if (length > frame.writerIndex() - bodyIndex) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "truncated " + MessageType.name(type)
                    + " message at offset " + offset + ": body length " + length + " but only "
                    + (frame.writerIndex() - bodyIndex) + " bytes left in the frame");
        }
        int end = bodyIndex + (int) length;
        frame.readerIndex(bodyIndex);
        decodeBody(type, frame, end, handler);
        frame.readerIndex(end); // skip fields a newer revision may have appended
    }

    private static void decodeBody(byte type, ByteBuf in, int end, MessageHandler h) throws ProtocolException {
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
                        + MessageType.name(type) + " at offset " + (in.readerIndex() - HEADER_BYTES));
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
