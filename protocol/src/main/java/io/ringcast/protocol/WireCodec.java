package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.util.Map;

/**
 * Encodes and decodes the messages of wire protocol version 1 ({@code docs/protocol.md}).
 * Each {@code write*} method appends one message ({@code u8 type, u32 body length, body}) to a
 * buffer, so several calls build a batched frame. Stateless; safe from any thread.
 *
 * <p>Every message's size is computed here, beside its writer ({@code *_BYTES} constants and
 * {@code *Bytes} methods), so a caller that sizes a buffer never adds field widths by hand.
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
    /** Bytes of an {@code UNSUBSCRIBE}. */
    public static final int UNSUBSCRIBE_BYTES = HEADER_BYTES + 4;
    /** Bytes of a {@code PING}, and of the {@code PONG} that answers it. */
    public static final int PING_BYTES = HEADER_BYTES + 8;
    /** Bytes of a {@code PONG}. */
    public static final int PONG_BYTES = PING_BYTES;
    /** Bytes of a {@code PUBLISH_ACK}. */
    public static final int PUBLISH_ACK_BYTES = HEADER_BYTES + 4 + 8;
    /** Bytes of a {@code SUBSCRIBED}. */
    public static final int SUBSCRIBED_BYTES = HEADER_BYTES + 4 + 4;
    /** Bytes of a {@code VIEW}. */
    public static final int VIEW_BYTES = HEADER_BYTES + 4 + 4;
    /** Bytes of an {@code UNMATCHED}. */
    public static final int UNMATCHED_BYTES = HEADER_BYTES + 4 + 4 + 8;
    /** Bytes of a {@code TOPIC_REMOVED}. */
    public static final int TOPIC_REMOVED_BYTES = HEADER_BYTES + 4 + 8;
    /** Bytes of a {@code REMOVED}. */
    public static final int REMOVED_BYTES = HEADER_BYTES + 4 + 4;
    /** The most resume positions a {@code SUBSCRIBE} gives incarnations for: the option's value is a {@code u16} of bytes. */
    public static final int MAX_RESUME_INCARNATIONS = SubscribeOptions.MAX_OPTION_VALUE_BYTES / 4;
    /** Bytes the view id adds to a {@code SNAPSHOT} or {@code UPDATE} flagged {@link UpdateFlags#VIEWED}. */
    public static final int VIEW_ID_BYTES = 4;
    /** Bytes an {@code UPDATE} through a view adds to its value. */
    public static final int VIEWED_UPDATE_OVERHEAD_BYTES = UPDATE_OVERHEAD_BYTES + VIEW_ID_BYTES;
    /** Bytes a {@code SNAPSHOT} through a view adds to its value. */
    public static final int VIEWED_SNAPSHOT_OVERHEAD_BYTES = SNAPSHOT_OVERHEAD_BYTES + VIEW_ID_BYTES;
    /** Bytes of one option's head in the options block of {@code SUBSCRIBE}: {@code u8 kind, u16 length}. */
    private static final int OPTION_HEAD_BYTES = 1 + 2;
    /** An {@code ERROR} reason longer than this many UTF-8 bytes is cut. */
    private static final int MAX_ERROR_REASON_BYTES = 1000;
    /** ... to its first this many characters, and an ellipsis. */
    private static final int CUT_ERROR_REASON_CHARS = 300;

    private WireCodec() {
    }

    // ---------------------------------------------------------------- client to server

    /** {@code HELLO} without credentials or publisher id: the first message of an anonymous session. */
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
        writeHello(out, version, clientName, credentials, publisherId, 0);
    }

    /**
     * {@code HELLO} with credentials, a publisher id and the connection's number among the client's
     * connections with that id ({@code 0}: not given; given only with a publisher id).
     */
    public static void writeHello(ByteBuf out, int version, String clientName, Credentials credentials,
                                  long publisherId, long connection) {
        if (connection != 0 && (publisherId == 0 || connection < 0 || connection > 0xFFFFFFFFL)) {
            throw new IllegalArgumentException("connection " + connection + ": 1 to 2^32-1, and only with a publisher id");
        }
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
        if (connection != 0) {
            out.writeInt((int) connection);
        }
        end(out, start);
    }

    /** Bytes of the {@code HELLO} {@link #writeHello(ByteBuf, int, String, Credentials, long)} writes. */
    public static int helloBytes(String clientName, Credentials credentials, long publisherId) {
        return helloBytes(clientName, credentials, publisherId, 0);
    }

    /** Bytes of the {@code HELLO} {@link #writeHello(ByteBuf, int, String, Credentials, long, long)} writes. */
    public static int helloBytes(String clientName, Credentials credentials, long publisherId, long connection) {
        int bytes = HEADER_BYTES + 2 + 2 + ByteBufUtil.utf8Bytes(clientName);
        if (credentials.kind() == Credentials.NONE && publisherId == 0) {
            return bytes;
        }
        bytes += 1;
        if (credentials.kind() == Credentials.PASSWORD) {
            bytes += 2 + ByteBufUtil.utf8Bytes(credentials.principal());
        }
        if (credentials.kind() != Credentials.NONE) {
            bytes += 2 + ByteBufUtil.utf8Bytes(credentials.secret());
        }
        return bytes + (publisherId != 0 ? 8 : 0) + (connection != 0 ? 4 : 0);
    }

    /**
     * {@code SUBSCRIBE} without options, byte for byte as in protocol version 1.
     *
     * @param resume last sequence per topic path to resume from; may be empty
     */
    public static void writeSubscribe(ByteBuf out, int subscriptionId, String selector, Map<String, Long> resume) {
        writeSubscribe(out, subscriptionId, selector, resume, SubscribeOptions.NONE);
    }

    /**
     * {@code SUBSCRIBE} with options: the options block after the resume list, or none at all for
     * {@link SubscribeOptions#NONE}. Its size is {@link #subscribeBytes}, a {@link #resumeEntryBytes}
     * per resume position, and {@link #subscribeOptionsBytes}.
     *
     * @param resume last sequence per topic path to resume from; may be empty
     */
    public static void writeSubscribe(ByteBuf out, int subscriptionId, String selector, Map<String, Long> resume,
                                      SubscribeOptions options) {
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
        if (!options.isEmpty()) {
            writeOptions(out, options);
        }
        end(out, start);
    }

    /**
     * The options block: {@code u8 optionCount}, then per option {@code u8 kind, u16 length} and
     * {@code length} bytes of value, in the order of their kinds. The builder of {@code options}
     * made sure every value fits its {@code u16} length.
     */
    private static void writeOptions(ByteBuf out, SubscribeOptions options) {
        out.writeByte(options.names().size());
        if (options.has(SubscribeOptions.MAX_RATE)) {
            out.writeByte(SubscribeOptions.MAX_RATE).writeShort(4).writeInt(options.maxRateThousandths());
        }
        if (options.has(SubscribeOptions.FIELDS)) {
            out.writeByte(SubscribeOptions.FIELDS).writeShort((int) SubscribeOptions.fieldsValueBytes(options.fields()));
            out.writeByte(options.fields().size());
            for (String path : options.fields()) {
                writeString(out, path);
            }
        }
        if (options.has(SubscribeOptions.FILTER)) {
            String filter = options.filter();
            int length = ByteBufUtil.utf8Bytes(filter);
            out.writeByte(SubscribeOptions.FILTER).writeShort(length);
            ByteBufUtil.reserveAndWriteUtf8(out, filter, length);
        }
        if (options.has(SubscribeOptions.REWIND)) {
            out.writeByte(SubscribeOptions.REWIND).writeShort(4).writeInt(options.rewind());
        }
        if (options.has(SubscribeOptions.REWIND_SINCE)) {
            out.writeByte(SubscribeOptions.REWIND_SINCE).writeShort(8).writeLong(options.rewindSince());
        }
        if (options.has(SubscribeOptions.INCARNATIONS)) {
            int[] incarnations = options.incarnations();
            out.writeByte(SubscribeOptions.INCARNATIONS).writeShort(incarnations.length * 4);
            for (int incarnation : incarnations) {
                out.writeInt(incarnation);
            }
        }
    }

    /** {@code UNSUBSCRIBE}: closes one subscription; {@link #UNSUBSCRIBE_BYTES} long. */
    public static void writeUnsubscribe(ByteBuf out, int subscriptionId) {
        out.writeByte(MessageType.UNSUBSCRIBE);
        out.writeInt(UNSUBSCRIBE_BYTES - HEADER_BYTES);
        out.writeInt(subscriptionId);
    }

    /**
     * {@code PUBLISH}: {@code value} to {@code topicPath}, answered by a {@code PUBLISH_ACK} or {@code ERROR}
     * with the correlation id.
     */
    public static void writePublish(ByteBuf out, int correlationId, String topicPath, byte[] value) {
        writePublish(out, MessageType.PUBLISH, correlationId, topicPath, value);
    }

    /** {@code REPUBLISH}: the same body as {@code PUBLISH}, for a publish sent again. */
    public static void writeRepublish(ByteBuf out, int correlationId, String topicPath, byte[] value) {
        writePublish(out, MessageType.REPUBLISH, correlationId, topicPath, value);
    }

    /** Bytes of a {@code PUBLISH} (or {@code REPUBLISH}) to a path of {@code topicPathBytes} UTF-8 bytes. */
    public static int publishBytes(int topicPathBytes, int valueBytes) {
        return HEADER_BYTES + 4 + 2 + topicPathBytes + valueBytes;
    }

    /**
     * Bytes of a {@code SUBSCRIBE} to a selector of {@code selectorBytes} UTF-8 bytes, with no
     * resume positions and no options; each position adds {@link #resumeEntryBytes}, the options
     * {@link #subscribeOptionsBytes}.
     */
    public static int subscribeBytes(int selectorBytes) {
        return HEADER_BYTES + 4 + 2 + selectorBytes + 4;
    }

    /** Bytes one resume position, for a path of {@code topicPathBytes} UTF-8 bytes, adds to a {@code SUBSCRIBE}. */
    public static int resumeEntryBytes(int topicPathBytes) {
        return 2 + topicPathBytes + 8;
    }

    /** Bytes the options block adds to a {@code SUBSCRIBE}: 0 for {@link SubscribeOptions#NONE}, which has none. */
    public static int subscribeOptionsBytes(SubscribeOptions options) {
        if (options.isEmpty()) {
            return 0;
        }
        int bytes = 1 + options.names().size() * OPTION_HEAD_BYTES;
        if (options.has(SubscribeOptions.MAX_RATE)) {
            bytes += 4;
        }
        if (options.has(SubscribeOptions.FIELDS)) {
            bytes += (int) SubscribeOptions.fieldsValueBytes(options.fields());
        }
        if (options.has(SubscribeOptions.FILTER)) {
            bytes += ByteBufUtil.utf8Bytes(options.filter());
        }
        if (options.has(SubscribeOptions.REWIND)) {
            bytes += 4;
        }
        if (options.has(SubscribeOptions.REWIND_SINCE)) {
            bytes += 8;
        }
        if (options.has(SubscribeOptions.INCARNATIONS)) {
            bytes += options.incarnations().length * 4;
        }
        return bytes;
    }

    private static void writePublish(ByteBuf out, byte type, int correlationId, String topicPath, byte[] value) {
        int start = begin(out, type, topicPath);
        out.writeInt(correlationId);
        writeString(out, topicPath);
        out.writeBytes(value);
        end(out, start);
    }

    /**
     * {@code REMOVE}: removes the topics {@code selector} matches that the session may publish to,
     * answered by a {@code REMOVED} or {@code ERROR} with the correlation id.
     */
    public static void writeRemove(ByteBuf out, int correlationId, String selector) {
        int start = begin(out, MessageType.REMOVE, selector);
        out.writeInt(correlationId);
        writeString(out, selector);
        end(out, start);
    }

    /** Bytes of a {@code REMOVE} of a selector of {@code selectorBytes} UTF-8 bytes. */
    public static int removeBytes(int selectorBytes) {
        return HEADER_BYTES + 4 + 2 + selectorBytes;
    }

    /** {@code PING}: answered by a {@code PONG} with the same nonce; {@link #PING_BYTES} long. */
    public static void writePing(ByteBuf out, long nonce) {
        out.writeByte(MessageType.PING);
        out.writeInt(PING_BYTES - HEADER_BYTES);
        out.writeLong(nonce);
    }

    // ---------------------------------------------------------------- server to client

    /** {@code WELCOME}: the answer to {@code HELLO}, with the session's id and the limits the client must keep. */
    public static void writeWelcome(ByteBuf out, int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
        int start = begin(out, MessageType.WELCOME, sessionId);
        out.writeShort(version);
        writeString(out, sessionId);
        out.writeInt(maxFrameBytes);
        out.writeInt(idleTimeoutMs);
        end(out, start);
    }

    /** Bytes of the {@code WELCOME} {@link #writeWelcome} writes for {@code sessionId}. */
    public static int welcomeBytes(String sessionId) {
        return HEADER_BYTES + 2 + 2 + ByteBufUtil.utf8Bytes(sessionId) + 4 + 4;
    }

    /** Bytes of a {@code TOPIC} defining {@code topicPath}, with its incarnation. */
    public static int topicBytes(String topicPath) {
        return topicBytes(ByteBufUtil.utf8Bytes(topicPath));
    }

    /** Bytes of a {@code TOPIC} whose path takes {@code pathUtf8Bytes} bytes in UTF-8. */
    public static int topicBytes(int pathUtf8Bytes) {
        return HEADER_BYTES + 4 + 2 + pathUtf8Bytes + 4;
    }

    /** Bytes of a {@code SNAPSHOT} carrying {@code valueLength} bytes of value. */
    public static int snapshotBytes(int valueLength) {
        return SNAPSHOT_OVERHEAD_BYTES + valueLength;
    }

    /** Bytes of an {@code UPDATE} carrying {@code valueLength} bytes of value (or delta). */
    public static int updateBytes(int valueLength) {
        return UPDATE_OVERHEAD_BYTES + valueLength;
    }

    /** Bytes of a {@code SNAPSHOT} through a view, carrying {@code valueLength} bytes of value. */
    public static int viewedSnapshotBytes(int valueLength) {
        return VIEWED_SNAPSHOT_OVERHEAD_BYTES + valueLength;
    }

    /** Bytes of an {@code UPDATE} through a view, carrying {@code valueLength} bytes of value (or delta). */
    public static int viewedUpdateBytes(int valueLength) {
        return VIEWED_UPDATE_OVERHEAD_BYTES + valueLength;
    }

    /** {@code TOPIC} of incarnation 0, not known: what a server of no incarnations means; {@link #topicBytes} long. */
    public static void writeTopic(ByteBuf out, int alias, String topicPath) {
        writeTopic(out, alias, topicPath, 0);
    }

    /**
     * {@code TOPIC}: defines {@code alias} as {@code topicPath}, of the topic's
     * {@code incarnation} (a {@code u32}, 0 when unknown), for the updates that follow;
     * {@link #topicBytes} long.
     */
    public static void writeTopic(ByteBuf out, int alias, String topicPath, int incarnation) {
        writeTopic(out, alias, topicPath, checkString(topicPath), incarnation);
    }

    /**
     * {@code TOPIC}, as {@link #writeTopic(ByteBuf, int, String, int)}, of a path whose UTF-8 length
     * the caller counted once and keeps ({@code pathUtf8Bytes}, at most {@link #MAX_STRING_BYTES}):
     * a server writes the same definition to every session that subscribes, and a reply of
     * {@code #} one per topic, so the path is only copied here, not measured again.
     */
    public static void writeTopic(ByteBuf out, int alias, String topicPath, int pathUtf8Bytes, int incarnation) {
        assert pathUtf8Bytes == ByteBufUtil.utf8Bytes(topicPath) && pathUtf8Bytes <= MAX_STRING_BYTES
                : "a TOPIC's path of " + ByteBufUtil.utf8Bytes(topicPath) + " UTF-8 bytes given as " + pathUtf8Bytes;
        out.writeByte(MessageType.TOPIC);
        out.writeInt(topicBytes(pathUtf8Bytes) - HEADER_BYTES);
        out.writeInt(alias);
        out.writeShort(pathUtf8Bytes);
        ByteBufUtil.reserveAndWriteUtf8(out, topicPath, pathUtf8Bytes);
        out.writeInt(incarnation);
    }

    /**
     * {@code TOPIC_REMOVED}: the topic of {@code alias} was removed after its update
     * {@code lastSequence}; {@link #TOPIC_REMOVED_BYTES} long.
     */
    public static void writeTopicRemoved(ByteBuf out, int alias, long lastSequence) {
        out.writeByte(MessageType.TOPIC_REMOVED);
        out.writeInt(TOPIC_REMOVED_BYTES - HEADER_BYTES);
        out.writeInt(alias);
        out.writeLong(lastSequence);
    }

    /** {@code REMOVED}: the answer to the {@code REMOVE} of {@code correlationId}; {@link #REMOVED_BYTES} long. */
    public static void writeRemoved(ByteBuf out, int correlationId, int removedTopics) {
        out.writeByte(MessageType.REMOVED);
        out.writeInt(REMOVED_BYTES - HEADER_BYTES);
        out.writeInt(correlationId);
        out.writeInt(removedTopics);
    }

    /**
     * {@code SNAPSHOT}: a topic's value at {@code sequence}, for subscription {@code subscriptionId}
     * (0: for none in particular, as after a gap); {@link #snapshotBytes} long.
     *
     * @param flags {@link UpdateFlags}, without {@link UpdateFlags#VIEWED}: a snapshot through a view
     *              is written by {@link #writeSnapshot(ByteBuf, int, int, long, int, int, ByteBuf, int, int)}
     */
    public static void writeSnapshot(ByteBuf out, int subscriptionId, int alias, long sequence, int flags,
                                     ByteBuf value, int valueIndex, int valueLength) {
        checkNotViewed(flags);
        out.writeByte(MessageType.SNAPSHOT);
        out.writeInt(snapshotBytes(valueLength) - HEADER_BYTES);
        out.writeInt(subscriptionId);
        out.writeInt(alias);
        out.writeLong(sequence);
        out.writeByte(flags);
        out.writeBytes(value, valueIndex, valueLength);
    }

    /**
     * {@code SNAPSHOT} through the view {@code viewId}: flagged {@link UpdateFlags#VIEWED} (added to
     * {@code flags}), the view id after the flags; {@link #viewedSnapshotBytes} long.
     */
    public static void writeSnapshot(ByteBuf out, int subscriptionId, int alias, long sequence, int flags, int viewId,
                                     ByteBuf value, int valueIndex, int valueLength) {
        out.writeByte(MessageType.SNAPSHOT);
        out.writeInt(viewedSnapshotBytes(valueLength) - HEADER_BYTES);
        out.writeInt(subscriptionId);
        out.writeInt(alias);
        out.writeLong(sequence);
        out.writeByte(flags | UpdateFlags.VIEWED);
        out.writeInt(viewId);
        out.writeBytes(value, valueIndex, valueLength);
    }

    /**
     * {@code UPDATE}: update {@code sequence} of the topic {@code alias} names (a value, or a delta); {@link
     * #updateBytes} long.
     *
     * @param flags {@link UpdateFlags}, without {@link UpdateFlags#VIEWED}: an update through a view
     *              is written by {@link #writeUpdate(ByteBuf, int, long, int, int, ByteBuf, int, int)}
     */
    public static void writeUpdate(ByteBuf out, int alias, long sequence, int flags,
                                   ByteBuf value, int valueIndex, int valueLength) {
        checkNotViewed(flags);
        out.writeByte(MessageType.UPDATE);
        out.writeInt(updateBytes(valueLength) - HEADER_BYTES);
        out.writeInt(alias);
        out.writeLong(sequence);
        out.writeByte(flags);
        out.writeBytes(value, valueIndex, valueLength);
    }

    /**
     * {@code UPDATE} through the view {@code viewId}: flagged {@link UpdateFlags#VIEWED} (added to
     * {@code flags}), the view id after the flags; {@link #viewedUpdateBytes} long.
     */
    public static void writeUpdate(ByteBuf out, int alias, long sequence, int flags, int viewId,
                                   ByteBuf value, int valueIndex, int valueLength) {
        out.writeByte(MessageType.UPDATE);
        out.writeInt(viewedUpdateBytes(valueLength) - HEADER_BYTES);
        out.writeInt(alias);
        out.writeLong(sequence);
        out.writeByte(flags | UpdateFlags.VIEWED);
        out.writeInt(viewId);
        out.writeBytes(value, valueIndex, valueLength);
    }

    /** Without a view id the flag would make a reader take the value's first 4 bytes for one. */
    private static void checkNotViewed(int flags) {
        if ((flags & UpdateFlags.VIEWED) != 0) {
            throw new IllegalArgumentException("flags 0x" + Integer.toHexString(flags)
                    + " include VIEWED: write a message through a view with the writer that takes its view id");
        }
    }

    /**
     * {@code PUBLISH_ACK}: the publish {@code correlationId} was applied as {@code sequence}; {@link
     * #PUBLISH_ACK_BYTES} long.
     */
    public static void writePublishAck(ByteBuf out, int correlationId, long sequence) {
        out.writeByte(MessageType.PUBLISH_ACK);
        out.writeInt(PUBLISH_ACK_BYTES - HEADER_BYTES);
        out.writeInt(correlationId);
        out.writeLong(sequence);
    }

    /** {@code SUBSCRIBED}: the end of a subscribe's reply; {@link #SUBSCRIBED_BYTES} long. */
    public static void writeSubscribed(ByteBuf out, int subscriptionId, int matchedTopics) {
        out.writeByte(MessageType.SUBSCRIBED);
        out.writeInt(SUBSCRIBED_BYTES - HEADER_BYTES);
        out.writeInt(subscriptionId);
        out.writeInt(matchedTopics);
    }

    /**
     * {@code VIEW}: the subscription {@code subscriptionId} receives its topics through the view
     * {@code viewId}; the first message of the reply to a {@code SUBSCRIBE} with a view.
     * {@link #VIEW_BYTES} long.
     */
    public static void writeView(ByteBuf out, int subscriptionId, int viewId) {
        out.writeByte(MessageType.VIEW);
        out.writeInt(VIEW_BYTES - HEADER_BYTES);
        out.writeInt(subscriptionId);
        out.writeInt(viewId);
    }

    /**
     * {@code UNMATCHED}: the value of {@code sequence} of the topic {@code alias} names no longer
     * passes the filter of the view {@code viewId}. {@link #UNMATCHED_BYTES} long.
     */
    public static void writeUnmatched(ByteBuf out, int viewId, int alias, long sequence) {
        out.writeByte(MessageType.UNMATCHED);
        out.writeInt(UNMATCHED_BYTES - HEADER_BYTES);
        out.writeInt(viewId);
        out.writeInt(alias);
        out.writeLong(sequence);
    }

    /** Writes an {@code ERROR}; a reason over 1,000 UTF-8 bytes is cut to its first 300 characters. */
    public static void writeError(ByteBuf out, ErrorCode code, int correlationId, String reason) {
        int start = begin(out, MessageType.ERROR);
        out.writeShort(code.code());
        out.writeInt(correlationId);
        writeString(out, errorReason(reason));
        end(out, start);
    }

    /** Bytes of the {@code ERROR} {@link #writeError} writes for {@code reason}. */
    public static int errorBytes(String reason) {
        return HEADER_BYTES + 2 + 4 + 2 + ByteBufUtil.utf8Bytes(errorReason(reason));
    }

    private static String errorReason(String reason) {
        String r = reason == null ? "" : reason;
        if (ByteBufUtil.utf8Bytes(r) > MAX_ERROR_REASON_BYTES) {
            r = r.substring(0, Math.min(r.length(), CUT_ERROR_REASON_CHARS)) + "...";
        }
        return r;
    }

    /** {@code PONG}: the answer to a {@code PING}; {@link #PONG_BYTES} long. */
    public static void writePong(ByteBuf out, long nonce) {
        out.writeByte(MessageType.PONG);
        out.writeInt(PONG_BYTES - HEADER_BYTES);
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
        WireDecoder.decodeBody(type, frame, end, handler);
        frame.readerIndex(end); // skip fields a newer revision may have appended
    }

}
