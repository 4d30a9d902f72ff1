package io.ringcast.cluster.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes and decodes {@link PeerMessage}s: a type byte, then the fields in order (integers big
 * endian, strings as {@code u16} length and UTF-8, values as {@code u32} length and bytes). The
 * peer link frames each message with a {@code u32} length ({@link PeerLinks}).
 */
final class PeerCodec {
    static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

    private static final int HELLO = 1;
    private static final int FORWARD = 2;
    private static final int FORWARD_RESULT = 3;
    private static final int UPDATE = 4;
    private static final int REPLICATED = 5;
    private static final int FETCH = 6;
    private static final int OWNER_STATE = 7;
    private static final int HANDOFF = 8;
    private static final int PARTITION_SNAPSHOT = 9;

    private PeerCodec() {
    }

    static ByteBuf encode(ByteBufAllocator alloc, PeerMessage m) {
        ByteBuf out = alloc.buffer(64);
        if (m instanceof PeerMessage.Hello h) {
            out.writeByte(HELLO);
            writeString(out, h.node());
        } else if (m instanceof PeerMessage.Forward f) {
            out.writeByte(FORWARD);
            out.writeLong(f.requestId());
            writeString(out, f.origin());
            out.writeInt(f.partition());
            writeString(out, f.path());
            writeBytes(out, f.value());
            out.writeLong(f.publisherId());
            out.writeInt(f.correlationId());
        } else if (m instanceof PeerMessage.ForwardResult r) {
            out.writeByte(FORWARD_RESULT);
            out.writeLong(r.requestId());
            out.writeByte(r.status());
            out.writeLong(r.topicSequence());
        } else if (m instanceof PeerMessage.Update u) {
            out.writeByte(UPDATE);
            out.writeInt(u.partition());
            out.writeLong(u.partitionSequence());
            out.writeLong(u.topicSequence());
            writeString(out, u.origin());
            out.writeLong(u.requestId());
            writeString(out, u.path());
            writeBytes(out, u.value());
            out.writeBoolean(u.replicate());
            out.writeLong(u.publisherId());
            out.writeInt(u.correlationId());
        } else if (m instanceof PeerMessage.Replicated r) {
            out.writeByte(REPLICATED);
            out.writeInt(r.partition());
            out.writeLong(r.upTo());
        } else if (m instanceof PeerMessage.Fetch f) {
            out.writeByte(FETCH);
            out.writeInt(f.partition());
            out.writeLong(f.after());
        } else if (m instanceof PeerMessage.OwnerState s) {
            out.writeByte(OWNER_STATE);
            out.writeLong(s.viewId());
            out.writeInt(s.partitions().length);
            for (int i = 0; i < s.partitions().length; i++) {
                out.writeInt(s.partitions()[i]);
                out.writeLong(s.last()[i]);
            }
        } else if (m instanceof PeerMessage.Handoff h) {
            out.writeByte(HANDOFF);
            out.writeInt(h.partition());
            out.writeLong(h.last());
        } else if (m instanceof PeerMessage.PartitionSnapshot s) {
            out.writeByte(PARTITION_SNAPSHOT);
            out.writeInt(s.partition());
            out.writeLong(s.partitionSequence());
            out.writeInt(s.topics().size());
            for (PeerMessage.TopicValue t : s.topics()) {
                writeString(out, t.path());
                out.writeLong(t.topicSequence());
                writeBytes(out, t.value());
            }
        } else {
            out.release();
            throw new IllegalArgumentException("no encoding for " + m);
        }
        return out;
    }

    /** Decodes one whole message; throws {@link IllegalArgumentException} naming what was wrong. */
    static PeerMessage decode(ByteBuf in) {
        int type = in.readUnsignedByte();
        try {
            switch (type) {
                case HELLO:
                    return new PeerMessage.Hello(readString(in));
                case FORWARD:
                    return new PeerMessage.Forward(in.readLong(), readString(in), in.readInt(), readString(in),
                            readBytes(in), in.readLong(), in.readInt());
                case FORWARD_RESULT:
                    return new PeerMessage.ForwardResult(in.readLong(), in.readUnsignedByte(), in.readLong());
                case UPDATE:
                    return new PeerMessage.Update(in.readInt(), in.readLong(), in.readLong(), readString(in),
                            in.readLong(), readString(in), readBytes(in), in.readBoolean(), in.readLong(), in.readInt());
                case REPLICATED:
                    return new PeerMessage.Replicated(in.readInt(), in.readLong());
                case FETCH:
                    return new PeerMessage.Fetch(in.readInt(), in.readLong());
                case OWNER_STATE: {
                    long viewId = in.readLong();
                    int n = in.readInt();
                    if (n < 0 || n > in.readableBytes() / 12) {
                        throw new IllegalArgumentException("owner state of " + n + " partitions in "
                                + in.readableBytes() + " bytes");
                    }
                    int[] partitions = new int[n];
                    long[] last = new long[n];
                    for (int i = 0; i < n; i++) {
                        partitions[i] = in.readInt();
                        last[i] = in.readLong();
                    }
                    return new PeerMessage.OwnerState(viewId, partitions, last);
                }
                case HANDOFF:
                    return new PeerMessage.Handoff(in.readInt(), in.readLong());
                case PARTITION_SNAPSHOT: {
                    int partition = in.readInt();
                    long seq = in.readLong();
                    int n = in.readInt();
                    if (n < 0 || n > in.readableBytes() / 14) {
                        throw new IllegalArgumentException("snapshot of " + n + " topics in " + in.readableBytes()
                                + " bytes");
                    }
                    List<PeerMessage.TopicValue> topics = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        topics.add(new PeerMessage.TopicValue(readString(in), in.readLong(), readBytes(in)));
                    }
                    return new PeerMessage.PartitionSnapshot(partition, seq, topics);
                }
                default:
                    throw new IllegalArgumentException("unknown peer message type " + type);
            }
        } catch (IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("peer message of type " + type + " ends early", e);
        }
    }

    private static void writeString(ByteBuf out, String s) {
        int lengthIndex = out.writerIndex();
        out.writeShort(0);
        int n = ByteBufUtil.writeUtf8(out, s);
        out.setShort(lengthIndex, n);
    }

    private static String readString(ByteBuf in) {
        int n = in.readUnsignedShort();
        return in.readCharSequence(n, StandardCharsets.UTF_8).toString();
    }

    private static void writeBytes(ByteBuf out, byte[] b) {
        out.writeInt(b.length);
        out.writeBytes(b);
    }

    private static byte[] readBytes(ByteBuf in) {
        int n = in.readInt();
        if (n < 0 || n > in.readableBytes()) {
            throw new IllegalArgumentException("value of " + n + " bytes where " + in.readableBytes() + " remain");
        }
        byte[] b = new byte[n];
        in.readBytes(b);
        return b;
    }
}
