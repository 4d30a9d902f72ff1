package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
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
                long connection = in.readerIndex() < end ? u32(in, end, type, "connection") & 0xFFFFFFFFL : 0;
                h.onHello(version, clientName, credentials, publisherId, connection);
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
                int resumeStart = in.readerIndex();
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
                if (in.readerIndex() == end) {
                    h.onSubscribe(id, selector, resume, SubscribeOptions.NONE); // every version-1 client
                    return;
                }
                // the block's framing first, all of it: a fault there is fatal even behind a refusable option
                int block = in.readerIndex();
                checkOptionsFraming(in, end, type);
                in.readerIndex(block);
                SubscribeOptions.Builder options = SubscribeOptions.builder();
                String fault = readOptions(in, options, (int) count);
                if (fault != null) {
                    h.onSubscribeRefused(id, ErrorCode.INVALID_OPTIONS, fault);
                } else {
                    SubscribeOptions built = options.build();
                    if (resume.size() < count && built.has(SubscribeOptions.INCARNATIONS)) {
                        // a path named twice: the map kept its last position, so one incarnation per path too
                        built = built.withIncarnations(lastOfEachPath(in, resumeStart, built.incarnations(), resume));
                    }
                    h.onSubscribe(id, selector, resume, built);
                }
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
            case MessageType.REMOVE: {
                int correlationId = u32(in, end, type, "correlationId");
                h.onRemove(correlationId, string(in, end, type, "selector"));
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
                String path = string(in, end, type, "topicPath");
                int incarnation = in.readerIndex() < end ? u32(in, end, type, "incarnation") : 0;
                h.onTopic(alias, path, incarnation);
                return;
            }
            case MessageType.SNAPSHOT: {
                int id = u32(in, end, type, "subscriptionId");
                int alias = u32(in, end, type, "alias");
                long seq = u64(in, end, type, "sequence");
                int flags = u8(in, end, type, "flags");
                int viewId = (flags & UpdateFlags.VIEWED) != 0 ? u32(in, end, type, "viewId") : 0;
                h.onSnapshot(id, alias, seq, flags, viewId, in, in.readerIndex(), end - in.readerIndex());
                return;
            }
            case MessageType.UPDATE: {
                int alias = u32(in, end, type, "alias");
                long seq = u64(in, end, type, "sequence");
                int flags = u8(in, end, type, "flags");
                int viewId = (flags & UpdateFlags.VIEWED) != 0 ? u32(in, end, type, "viewId") : 0;
                h.onUpdate(alias, seq, flags, viewId, in, in.readerIndex(), end - in.readerIndex());
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
            case MessageType.VIEW: {
                int id = u32(in, end, type, "subscriptionId");
                h.onView(id, u32(in, end, type, "viewId"));
                return;
            }
            case MessageType.UNMATCHED: {
                int viewId = u32(in, end, type, "viewId");
                int alias = u32(in, end, type, "alias");
                h.onUnmatched(viewId, alias, u64(in, end, type, "sequence"));
                return;
            }
            case MessageType.TOPIC_REMOVED: {
                int alias = u32(in, end, type, "alias");
                h.onTopicRemoved(alias, u64(in, end, type, "lastSequence"));
                return;
            }
            case MessageType.REMOVED: {
                int correlationId = u32(in, end, type, "correlationId");
                h.onRemoved(correlationId, u32(in, end, type, "removedTopics"));
                return;
            }
            default:
                throw new ProtocolException(ErrorCode.UNKNOWN_MESSAGE_TYPE, "unknown message type "
                        + MessageType.name(type) + " at offset " + (in.readerIndex() - WireCodec.HEADER_BYTES));
        }
    }

    /**
     * Walks the options block of a {@code SUBSCRIBE} by its heads alone: {@code u8 optionCount},
     * then that many times {@code u8 kind, u16 length} and {@code length} bytes, ending exactly at
     * the end of the body. An option running past the body, a count the bytes do not hold, or bytes
     * after the last option is {@code MALFORMED_FRAME}, like any other length fault; what the
     * options say is not looked at here.
     */
    private static void checkOptionsFraming(ByteBuf in, int end, byte type) throws ProtocolException {
        int count = u8(in, end, type, "optionCount");
        for (int i = 0; i < count; i++) {
            u8(in, end, type, "options[" + i + "].kind");
            int length = u16(in, end, type, "options[" + i + "].length");
            need(in, end, length, type, "options[" + i + "].value");
            in.skipBytes(length);
        }
        if (in.readerIndex() != end) {
            throw malformed(type, (end - in.readerIndex()) + " bytes after the last of " + count
                    + " options: the options block ends the message");
        }
    }

    /**
     * Reads an options block whose framing {@link #checkOptionsFraming} accepted into
     * {@code options}, option by option in their order on the wire.
     *
     * @return null, or the first fault of content (the reason a server sends with
     *         {@code INVALID_OPTIONS}: the option, then what was wrong)
     */
    private static String readOptions(ByteBuf in, SubscribeOptions.Builder options, int resumeCount) {
        int count = in.readUnsignedByte();
        if (count == 0) {
            return "options: optionCount 0; a SUBSCRIBE without options has no options block";
        }
        int seen = 0; // one bit per kind
        for (int i = 0; i < count; i++) {
            int kind = in.readUnsignedByte();
            int length = in.readUnsignedShort();
            int valueEnd = in.readerIndex() + length;
            String name = SubscribeOptions.name(kind);
            if (name == null) {
                return "option kind " + kind + " is unknown (1 maxRate, 2 fields, 3 filter, 4 rewind, 5 rewindSince, "
                        + "6 incarnations)";
            }
            if ((seen & 1 << kind) != 0) {
                return name + ": given twice";
            }
            seen |= 1 << kind;
            String fault;
            try { // the builder refuses what it refuses from a Java caller: one place for each option's range
                fault = switch (kind) {
                    case SubscribeOptions.MAX_RATE -> maxRate(in, length, options);
                    case SubscribeOptions.FIELDS -> fields(in, valueEnd, options);
                    case SubscribeOptions.FILTER -> filter(in, length, options);
                    case SubscribeOptions.REWIND -> rewind(in, length, options);
                    case SubscribeOptions.REWIND_SINCE -> rewindSince(in, length, options);
                    default -> incarnations(in, length, resumeCount, options);
                };
            } catch (IllegalArgumentException refused) {
                fault = refused.getMessage();
            }
            if (fault != null) {
                return fault;
            }
            in.readerIndex(valueEnd);
        }
        return null;
    }

    private static String wrongLength(String name, int length, String what, int bytes) {
        return name + ": " + length + " bytes; its value is " + what + " of " + bytes;
    }

    private static String maxRate(ByteBuf in, int length, SubscribeOptions.Builder options) {
        if (length != 4) {
            return wrongLength("maxRate", length, "a u32", 4);
        }
        options.maxRateThousandths(in.readUnsignedInt());
        return null;
    }

    private static String fields(ByteBuf in, int valueEnd, SubscribeOptions.Builder options) {
        if (valueEnd == in.readerIndex()) {
            return "fields: 0 bytes; its value starts with a u8 count of paths";
        }
        int n = in.readUnsignedByte();
        SubscribeOptions.checkFieldCount(n);
        List<String> paths = new ArrayList<>(n);
        for (int p = 1; p <= n; p++) {
            int left = valueEnd - in.readerIndex();
            int length = left >= 2 ? in.readUnsignedShort() : -1;
            if (length < 0 || length > left - 2) {
                return "fields: path " + p + " of " + n + " runs past the end of the option's value";
            }
            int index = in.readerIndex();
            if (!ByteBufUtil.isText(in, index, length, StandardCharsets.UTF_8)) {
                return "fields: path " + p + " of " + n + " is not valid UTF-8";
            }
            paths.add(in.toString(index, length, StandardCharsets.UTF_8));
            in.skipBytes(length);
        }
        if (in.readerIndex() != valueEnd) {
            return "fields: " + (valueEnd - in.readerIndex()) + " bytes after the last of " + n + " paths";
        }
        options.fields(paths);
        return null;
    }

    private static String filter(ByteBuf in, int length, SubscribeOptions.Builder options) {
        int index = in.readerIndex();
        if (!ByteBufUtil.isText(in, index, length, StandardCharsets.UTF_8)) {
            return "filter: not valid UTF-8";
        }
        options.filter(in.toString(index, length, StandardCharsets.UTF_8));
        return null;
    }

    private static String rewind(ByteBuf in, int length, SubscribeOptions.Builder options) {
        if (length != 4) {
            return wrongLength("rewind", length, "a u32", 4);
        }
        long lastUpdates = in.readUnsignedInt();
        if (lastUpdates > Integer.MAX_VALUE) {
            return "rewind: " + lastUpdates + " updates, more than " + Integer.MAX_VALUE;
        }
        options.rewind((int) lastUpdates);
        return null;
    }

    private static String rewindSince(ByteBuf in, int length, SubscribeOptions.Builder options) {
        if (length != 8) {
            return wrongLength("rewindSince", length, "a u64", 8);
        }
        long epochMillis = in.readLong();
        if (epochMillis < 0) {
            return "rewindSince: " + Long.toUnsignedString(epochMillis) + ", above 2^63-1";
        }
        options.rewindSince(epochMillis);
        return null;
    }

    private static String incarnations(ByteBuf in, int length, int resumeCount, SubscribeOptions.Builder options) {
        if (length != resumeCount * 4L) {
            return "incarnations: " + length + " bytes for " + resumeCount + " resume positions; a u32 each, "
                    + resumeCount * 4L + " bytes";
        }
        int[] incarnations = new int[resumeCount];
        for (int i = 0; i < resumeCount; i++) {
            incarnations[i] = in.readInt();
        }
        options.incarnations(incarnations);
        return null;
    }

    /**
     * The incarnation of each path of {@code resume}, in its order, taken from the path's last
     * position in the resume list at {@code at} (read already, so well formed), as the map took
     * that position's sequence.
     */
    private static int[] lastOfEachPath(ByteBuf in, int at, int[] byPosition, Map<String, Long> resume) {
        Map<String, Integer> last = new HashMap<>();
        for (int incarnation : byPosition) {
            int length = in.getUnsignedShort(at);
            last.put(in.toString(at + 2, length, StandardCharsets.UTF_8), incarnation);
            at += 2 + length + 8;
        }
        int[] byPath = new int[resume.size()];
        int i = 0;
        for (String path : resume.keySet()) {
            byPath[i++] = last.get(path);
        }
        return byPath;
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
