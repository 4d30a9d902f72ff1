package io.ringcast.cluster.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/** A growable byte array that {@link TopicLogCodec} writes entries and responses into. Not thread-safe. */
final class EntryWriter {
    private byte[] buf;
    private int pos;

    EntryWriter(int capacity) {
        buf = new byte[capacity];
    }

    void reset() {
        pos = 0;
    }

    private void ensure(int more) {
        if (pos + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + more));
        }
    }

    void u8(int b) {
        ensure(1);
        buf[pos++] = (byte) b;
    }

    void i64(long v) {
        ensure(8);
        for (int shift = 56; shift >= 0; shift -= 8) {
            buf[pos++] = (byte) (v >>> shift);
        }
    }

    void varLong(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    void bytes(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
    }

    void string(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        varLong(utf8.length);
        bytes(utf8);
    }

    /** A string-ref: the index of its first appearance in {@code seen}, or 0 and the string. */
    void stringRef(String s, Map<String, Integer> seen) {
        Integer ref = seen.get(s);
        if (ref != null) {
            varLong(ref);
            return;
        }
        seen.put(s, seen.size() + 1);
        varLong(0);
        string(s);
    }

    byte[] toBytes() {
        return Arrays.copyOf(buf, pos);
    }
}
