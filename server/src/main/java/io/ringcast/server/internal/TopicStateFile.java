package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.ringcast.protocol.WireCodec;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The topics of a node carried across a graceful restart ({@code state.file}): each topic's
 * sequence, its history (the value or delta of each update, with its flags) and its newest full
 * value. Written when the node stops, after the sequencer has stopped; read, and then deleted, when
 * it starts, before the sequencer starts, so a crash after a restart can never bring back values
 * older than ones clients have already seen.
 *
 * <p>The same format carries the topics in a cluster's Raft snapshots ({@link TopicSnapshotContent}):
 * {@link #writeTo} and {@link #readFrom} are the format, on any {@link DataOutput} and {@link DataInput};
 * the file is one use of it.
 *
 * <p>Format, big-endian ({@link DataOutput}): {@code "RCST"}, {@code u32 version = 2},
 * {@code u32 topics}, then per topic: path ({@code writeUTF}), {@code u32 incarnation} (not in
 * version 1, which is read as incarnation 0: a new one is given), {@code u64 sequence},
 * {@code u32 entries}, entries oldest first ({@code u64 sequence, u8 flags, u32 length, bytes}),
 * {@code i32 lastValueLength} ({@code -1}: none) and its bytes. A topic with a last value and no
 * entries (a cluster snapshot's, {@link #writeTo(DataOutput, Iterable, boolean)}) is restored with
 * that value as its one update, at its sequence.
 */
final class TopicStateFile {
    private static final int MAGIC = 0x52435354; // "RCST"
    private static final int VERSION = 2;
    /** The version before incarnations, still read. */
    private static final int VERSION_WITHOUT_INCARNATIONS = 1;
    /** Offset of the flags byte in an {@code UPDATE} message: type, length, alias, sequence. */
    private static final int UPDATE_FLAGS_OFFSET = WireCodec.UPDATE_OVERHEAD_BYTES - 1;

    /** One saved update: what its {@code UPDATE} carried. */
    record Entry(long sequence, int flags, byte[] payload) {
    }

    /** One saved topic; {@code lastValue} is null when it kept no value; {@code incarnation} 0 when not known. */
    record SavedTopic(String path, int incarnation, long sequence, List<Entry> history, byte[] lastValue) {
    }

    private TopicStateFile() {
    }

    /** Writes every topic to {@code file}, through a temporary file, so a crash mid-write leaves no half file. */
    static int write(Path file, Iterable<Topic> topics) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempFile(parent, file.getFileName().toString(), ".tmp");
        int count;
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16))) {
            count = writeTo(out, topics);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return count;
    }

    /**
     * Writes every topic in this format (header included) to {@code out}. Only on the thread that owns
     * the topics: the sequencer's, or the one that stops the node once it has ended.
     *
     * @return how many topics were written
     */
    static int writeTo(DataOutput out, Iterable<Topic> topics) throws IOException {
        return writeTo(out, topics, true);
    }

    /**
     * Writes every topic in this format; without {@code withHistory}, each topic's sequence and
     * newest full value alone (no history entries), which {@link TopicRestore} takes over as a
     * history of that one value. A cluster's snapshots are written so: their size, and the time a
     * node takes to write and send one, follow the topics and their values, not the history's
     * length (issue 28).
     */
    static int writeTo(DataOutput out, Iterable<Topic> topics, boolean withHistory) throws IOException {
        List<Topic> all = new ArrayList<>();
        topics.forEach(all::add);
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(all.size());
        for (Topic topic : all) {
            writeTopic(out, topic, withHistory);
        }
        return all.size();
    }

    private static void writeTopic(DataOutput out, Topic topic, boolean withHistory) throws IOException {
        out.writeUTF(topic.path);
        out.writeInt(topic.incarnation);
        out.writeLong(topic.sequence);
        int entries = withHistory ? topic.historySize() : 0;
        long oldest = topic.sequence - entries + 1;
        out.writeInt(entries);
        for (long s = oldest; s <= topic.sequence; s++) {
            ByteBuf frame = topic.historyFrame(s);
            int update = topic.historyUpdateOffset(s);
            int valueIndex = update + WireCodec.UPDATE_OVERHEAD_BYTES;
            int length = frame.writerIndex() - valueIndex;
            out.writeLong(s);
            out.writeByte(frame.getUnsignedByte(update + UPDATE_FLAGS_OFFSET));
            out.writeInt(length);
            out.write(ByteBufUtil.getBytes(frame, valueIndex, length, false));
        }
        if (topic.hasValue()) {
            out.writeInt(topic.lastValueLength());
            out.write(ByteBufUtil.getBytes(topic.lastValueBuffer(), topic.lastValueIndex(), topic.lastValueLength(),
                    false));
        } else {
            out.writeInt(-1);
        }
    }

    /** Reads a file {@link #write} wrote; an {@link IOException} names what is wrong with it. */
    static List<SavedTopic> read(Path file) throws IOException {
        long fileBytes = Files.size(file);
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            return readFrom(in, fileBytes);
        }
    }

    /**
     * Reads what {@link #writeTo} wrote, which must be all {@code in} holds: bytes after the last
     * topic are refused. An {@link IOException} names what is wrong with it; nothing else is thrown
     * for damaged input.
     *
     * @param inputBytes how many bytes {@code in} holds at most: a length beyond it is refused before
     *                   anything of that size is allocated
     */
    static List<SavedTopic> readFrom(DataInput in, long inputBytes) throws IOException {
        try {
            if (in.readInt() != MAGIC) {
                throw new IOException("not a Ringcast state file (bad magic number)");
            }
            int version = in.readInt();
            if (version != VERSION && version != VERSION_WITHOUT_INCARNATIONS) {
                throw new IOException("state file version " + version + ", this server reads versions "
                        + VERSION_WITHOUT_INCARNATIONS + " and " + VERSION);
            }
            int topics = nonNegative(in.readInt(), "topic count");
            List<SavedTopic> saved = new ArrayList<>(Math.min(topics, 1 << 16));
            for (int t = 0; t < topics; t++) {
                String path = in.readUTF();
                int incarnation = version == VERSION ? in.readInt() : 0;
                long sequence = in.readLong();
                int entries = nonNegative(in.readInt(), "history length of " + path);
                List<Entry> history = new ArrayList<>(Math.min(entries, 1 << 16));
                for (int i = 0; i < entries; i++) {
                    long s = in.readLong();
                    int flags = in.readUnsignedByte();
                    String what = "value length in " + path;
                    history.add(new Entry(s, flags, bytes(in, what, nonNegative(in.readInt(), what), inputBytes)));
                }
                int lastLength = in.readInt();
                byte[] last = lastLength < 0 ? null : bytes(in, "last value length in " + path, lastLength, inputBytes);
                checkTopic(path, sequence, history, last);
                saved.add(new SavedTopic(path, incarnation, sequence, history, last));
            }
            if (in.skipBytes(1) != 0) {
                throw new IOException("bytes left after the last topic");
            }
            return saved;
        } catch (EOFException e) {
            throw new IOException("truncated", e);
        }
    }

    private static void checkTopic(String path, long sequence, List<Entry> history, byte[] last) throws IOException {
        for (int i = 0; i < history.size(); i++) {
            long expected = sequence - history.size() + 1 + i;
            if (history.get(i).sequence() != expected) {
                throw new IOException("topic " + path + ": history entry " + i + " has sequence "
                        + history.get(i).sequence() + ", expected " + expected);
            }
        }
        if (!history.isEmpty() && last == null) {
            throw new IOException("topic " + path + " has history but no last value");
        }
    }

    /** Reads {@code length} bytes; a length the input cannot hold is refused before it is allocated. */
    private static byte[] bytes(DataInput in, String what, int length, long inputBytes) throws IOException {
        if (length > inputBytes) {
            // damaged: allocating what it claims could take the whole heap
            throw new IOException("truncated: " + what + " is " + length + " bytes, more than the input holds");
        }
        byte[] b = new byte[length];
        in.readFully(b);
        return b;
    }

    private static int nonNegative(int n, String what) throws IOException {
        if (n < 0) {
            throw new IOException("negative " + what + ": " + n);
        }
        return n;
    }
}
