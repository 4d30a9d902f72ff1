package io.ringcast.cluster.internal;

import io.ringcast.log.SnapshotFields;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a byte range of an entry or response for {@link TopicLogCodec}, every read checked against
 * its end. Not thread-safe.
 */
final class EntryReader {
    private final byte[] data;
    private final int start;
    private final int end;
    private final String what;
    private int pos;
    private CharsetDecoder utf8;

    EntryReader(byte[] data, int offset, int length, String what) throws MalformedEntryException {
        if (offset < 0 || length < 0 || offset > data.length - length) {
            throw new MalformedEntryException(what + ": range [" + offset + ", +" + length + ") outside "
                    + data.length + " bytes");
        }
        this.data = data;
        this.start = offset;
        this.end = offset + length;
        this.what = what;
        this.pos = offset;
    }

    MalformedEntryException malformed(String problem) {
        return new MalformedEntryException("malformed " + what + " at byte " + (pos - start) + ": " + problem);
    }

    private void need(int n, String field) throws MalformedEntryException {
        if (end - pos < n) {
            throw malformed(what + " ends early: " + field + " needs " + n + " bytes, " + (end - pos) + " left");
        }
    }

    int u8(String field) throws MalformedEntryException {
        need(1, field);
        return data[pos++] & 0xFF;
    }

    long i64(String field) throws MalformedEntryException {
        need(8, field);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (data[pos++] & 0xFF);
        }
        return v;
    }

    long varLong(String field) throws MalformedEntryException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = u8(field);
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw malformed(field + ": a varint longer than 10 bytes");
    }

    /** A length or count that the bytes left can hold, at {@code unitBytes} each. */
    int count(String field, int unitBytes) throws MalformedEntryException {
        long n = varLong(field);
        if (n < 0 || n > (end - pos) / unitBytes) {
            throw malformed(field + ": " + Long.toUnsignedString(n) + " do not fit in the " + (end - pos)
                    + " bytes left");
        }
        return (int) n;
    }

    byte[] bytes(String field) throws MalformedEntryException {
        int n = count("length of " + field, 1);
        byte[] b = Arrays.copyOfRange(data, pos, pos + n);
        pos += n;
        return b;
    }

    String string(String field) throws MalformedEntryException {
        int n = count("length of " + field, 1);
        if (utf8 == null) {
            utf8 = SnapshotFields.strictUtf8();
        }
        try {
            String s = utf8.decode(ByteBuffer.wrap(data, pos, n)).toString();
            pos += n;
            return s;
        } catch (CharacterCodingException e) {
            throw malformed("malformed UTF-8 in " + field);
        }
    }

    String stringRef(String field, List<String> seen) throws MalformedEntryException {
        long ref = varLong("reference of " + field);
        if (ref == 0) {
            String s = string(field);
            seen.add(s);
            return s;
        }
        if (ref < 0 || ref > seen.size()) {
            throw malformed(field + ": reference " + Long.toUnsignedString(ref) + " to one of " + seen.size()
                    + " strings met so far");
        }
        return seen.get((int) ref - 1);
    }

    void end() throws MalformedEntryException {
        if (pos != end) {
            throw malformed((end - pos) + " bytes left over after the " + what);
        }
    }
}
