package io.ringcast.log;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The fields snapshots of the log's state are written with: unsigned varints and UTF-8 strings
 * with a varint length. Read strictly: a value out of its range, an overlong varint or malformed
 * UTF-8 is an {@link IOException} naming the field.
 */
public final class SnapshotFields {
    private SnapshotFields() {
    }

    /** Writes {@code v} as an unsigned varint; negative values take 10 bytes. */
    public static void writeVarLong(DataOutput out, long v) throws IOException {
        while ((v & ~0x7FL) != 0) {
            out.writeByte((int) (v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.writeByte((int) v);
    }

    public static long readVarLong(DataInput in) throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = in.readUnsignedByte();
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw new IOException("a varint longer than 10 bytes");
    }

    /** A varint that must lie in {@code [0, max]}, named in the error. */
    public static int readVarInt(DataInput in, int max, String what) throws IOException {
        long v = readVarLong(in);
        if (v < 0 || v > max) {
            throw new IOException(what + " " + Long.toUnsignedString(v) + " out of range [0, " + max + "]");
        }
        return (int) v;
    }

    public static void writeString(DataOutput out, String s) throws IOException {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        writeVarLong(out, utf8.length);
        out.write(utf8);
    }

    public static String readString(DataInput in, int maxBytes, String what) throws IOException {
        byte[] utf8 = new byte[readVarInt(in, maxBytes, "length of " + what)];
        in.readFully(utf8);
        try {
            return strictUtf8().decode(ByteBuffer.wrap(utf8)).toString();
        } catch (CharacterCodingException e) {
            throw new IOException("malformed UTF-8 in " + what, e);
        }
    }

    /** A decoder that reports malformed or unmappable input instead of replacing it. */
    public static CharsetDecoder strictUtf8() {
        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }
}
