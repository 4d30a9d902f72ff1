package io.ringcast.protocol;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * The Ringcast byte-level delta format (docs/protocol.md, "Deltas"): copy and insert instructions
 * that turn a base value into a target value, in the spirit of Fossil's delta, with a CRC-32 of the
 * target so a receiver never delivers a wrong value.
 *
 * <pre>
 * delta       = varint baseLength, varint targetLength, instruction*, u32 crc32(target)
 * instruction = varint header, then
 *                 header even: INSERT n = header / 2 bytes (n &gt;= 1): the next n bytes of the delta
 *                 header odd:  COPY   n = header / 2 bytes (n &gt;= 1), varint offset: base[offset, offset + n)
 * varint      = unsigned LEB128, 1 to 5 bytes, value below 2^31
 * </pre>
 *
 * {@link #apply} is stateless and safe from any thread. An {@link Encoder} keeps reusable tables and
 * belongs to one thread.
 */
public final class Delta {
    /** The shortest match worth a COPY: a shorter one costs as much as inserting its bytes. */
    static final int MIN_COPY = 4;
    private static final int CHECKSUM_BYTES = 4;
    private static final int MAX_VARINT_BYTES = 5;

    private Delta() {
    }

    /**
     * Applies {@code delta} (its readable bytes) to {@code base} (its readable bytes) and writes the
     * target to {@code out}. Reader indexes are not moved. On failure nothing is left in {@code out}
     * (its writer index is restored).
     *
     * @throws DeltaFormatException naming what is wrong: a truncated delta, a base of another length,
     *                              a copy outside the base, more or fewer bytes than announced, a bad checksum
     */
    public static void apply(ByteBuf base, ByteBuf delta, ByteBuf out) throws DeltaFormatException {
        int start = out.writerIndex();
        try {
            applyUnchecked(base, delta, out);
        } catch (DeltaFormatException e) {
            out.writerIndex(start);
            throw e;
        }
    }

    private static void applyUnchecked(ByteBuf base, ByteBuf delta, ByteBuf out) throws DeltaFormatException {
        int pos = delta.readerIndex();
        int end = delta.writerIndex();
        int baseIndex = base.readerIndex();
        int baseLength = base.readableBytes();
        long v = readVarint(delta, pos, end, "base length");
        pos += varintLength(v);
        if (v != baseLength) {
            throw new DeltaFormatException("delta is for a base of " + v + " bytes, but the previous value has "
                    + baseLength);
        }
        v = readVarint(delta, pos, end, "target length");
        pos += varintLength(v);
        int targetLength = (int) v;
        int targetStart = out.writerIndex();
        // Reserve no more than the delta can produce before trusting its announced length: a
        // 6-byte delta may announce 2 GiB. An INSERT costs a delta byte per byte; a target longer
        // than this (repeated COPYs) grows the buffer as it is written.
        out.ensureWritable(Math.min(targetLength, baseLength + (end - pos)));
        int produced = 0;
        while (produced < targetLength) {
            long header = readVarint(delta, pos, end, "instruction at byte " + (pos - delta.readerIndex()));
            pos += varintLength(header);
            int n = (int) (header >>> 1);
            if (n == 0) {
                throw new DeltaFormatException("empty instruction at byte " + (pos - delta.readerIndex()));
            }
            if (n > targetLength - produced) {
                throw new DeltaFormatException("instruction of " + n + " bytes overruns the target of "
                        + targetLength + " bytes (" + produced + " already produced)");
            }
            if ((header & 1) == 0) {
                if (n > end - pos) {
                    throw new DeltaFormatException("insert of " + n + " bytes is truncated: " + (end - pos)
                            + " bytes left in the delta");
                }
                out.writeBytes(delta, pos, n);
                pos += n;
            } else {
                long offset = readVarint(delta, pos, end, "copy offset");
                pos += varintLength(offset);
                if (offset + n > baseLength) {
                    throw new DeltaFormatException("copy of " + n + " bytes at offset " + offset + " overruns the "
                            + baseLength + "-byte base");
                }
                out.writeBytes(base, baseIndex + (int) offset, n);
            }
            produced += n;
        }
        checkChecksum(delta, pos, end, out, targetStart, targetLength);
    }

    /** The delta's last bytes, from {@code pos}, are exactly the checksum of the target written to {@code out}. */
    private static void checkChecksum(ByteBuf delta, int pos, int end, ByteBuf out, int targetStart, int targetLength)
            throws DeltaFormatException {
        if (end - pos != CHECKSUM_BYTES) {
            throw new DeltaFormatException(end - pos < CHECKSUM_BYTES
                    ? "delta is truncated: its checksum is missing"
                    : (end - pos - CHECKSUM_BYTES) + " unexpected bytes after the last instruction");
        }
        long expected = delta.getUnsignedInt(pos);
        long actual = crc32(new CRC32(), out, targetStart, targetLength);
        if (expected != actual) {
            throw new DeltaFormatException("checksum mismatch: delta says " + Long.toHexString(expected)
                    + ", the rebuilt value has " + Long.toHexString(actual));
        }
    }

    /** CRC-32 (IEEE, as zlib) of {@code length} bytes of {@code buf} from {@code index}, without allocating. */
    static long crc32(CRC32 crc, ByteBuf buf, int index, int length) {
        crc.reset();
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (buf.nioBufferCount() == 1) {
            ByteBuffer nio = buf.internalNioBuffer(index, length);
            crc.update(nio);
        } else {
            for (ByteBuffer nio : buf.nioBuffers(index, length)) {
                crc.update(nio);
            }
        }
        return crc.getValue();
    }

    private static long readVarint(ByteBuf in, int pos, int end, String what) throws DeltaFormatException {
        long value = 0;
        for (int i = 0; i < MAX_VARINT_BYTES; i++) {
            if (pos + i >= end) {
                throw new DeltaFormatException("delta is truncated in its " + what);
            }
            int b = in.getByte(pos + i);
            value |= (long) (b & 0x7F) << (7 * i);
            if ((b & 0x80) == 0) {
                if (value > Integer.MAX_VALUE) {
                    throw new DeltaFormatException("the " + what + " is out of range: " + value);
                }
                if (i > 0 && b == 0) {
                    throw new DeltaFormatException("the " + what + " is an overlong varint");
                }
                return value;
            }
        }
        throw new DeltaFormatException("the " + what + " is a varint longer than " + MAX_VARINT_BYTES + " bytes");
    }

    static int varintLength(long value) {
        int n = 1;
        while (value >= 0x80) {
            value >>>= 7;
            n++;
        }
        return n;
    }

    static void writeVarint(ByteBuf out, long value) {
        while (value >= 0x80) {
            out.writeByte((int) (value & 0x7F) | 0x80);
            value >>>= 7;
        }
        out.writeByte((int) value);
    }

    /**
     * Computes deltas. Greedy matching against a hash of every 4-byte window of the base, extended
     * both ways, so in-place edits, insertions, deletions and moved runs all become copies. Reuses
     * its tables: no allocation per delta once they have grown to the largest base seen. One thread.
     */
    public static final class Encoder {
        private final CRC32 crc = new CRC32();
        private int[] table = new int[256];
        /** The target copied out for its checksum: a derived buffer's NIO view would be allocated per call. */
        private byte[] crcScratch = new byte[256];

        /**
         * Writes to {@code out} the delta from {@code base[baseIndex, +baseLength)} to
         * {@code target[targetIndex, +targetLength)}, if it is shorter than {@code maxBytes}.
         *
         * @return the delta's length, or -1 when it would be {@code maxBytes} or longer (then
         *         nothing is left in {@code out})
         */
        public int encode(ByteBuf base, int baseIndex, int baseLength, ByteBuf target, int targetIndex,
                          int targetLength, ByteBuf out, int maxBytes) {
            int start = out.writerIndex();
            writeVarint(out, baseLength);
            writeVarint(out, targetLength);
            int mask = prepareTable(baseLength);
            for (int i = 0; i + MIN_COPY <= baseLength; i++) {
                table[hash(base.getInt(baseIndex + i), mask)] = i;
            }
            int literalStart = 0;
            int j = 0;
            while (j + MIN_COPY <= targetLength) {
                if (out.writerIndex() - start >= maxBytes) {
                    out.writerIndex(start);
                    return -1;
                }
                int window = target.getInt(targetIndex + j);
                int c = baseLength >= MIN_COPY ? table[hash(window, mask)] : -1;
                if (c < 0 || base.getInt(baseIndex + c) != window) {
                    j++;
                    continue;
                }
                int s = c;
                int t = j;
                while (t > literalStart && s > 0 && base.getByte(baseIndex + s - 1) == target.getByte(targetIndex + t - 1)) {
                    s--;
                    t--;
                }
                int n = j - t + MIN_COPY;
                while (s + n < baseLength && t + n < targetLength
                        && base.getByte(baseIndex + s + n) == target.getByte(targetIndex + t + n)) {
                    n++;
                }
                insert(target, targetIndex + literalStart, t - literalStart, out);
                writeVarint(out, ((long) n << 1) | 1);
                writeVarint(out, s);
                j = t + n;
                literalStart = j;
            }
            insert(target, targetIndex + literalStart, targetLength - literalStart, out);
            if (crcScratch.length < targetLength) {
                crcScratch = new byte[Math.max(targetLength, crcScratch.length * 2)];
            }
            target.getBytes(targetIndex, crcScratch, 0, targetLength);
            crc.reset();
            crc.update(crcScratch, 0, targetLength);
            out.writeInt((int) crc.getValue());
            if (out.writerIndex() - start >= maxBytes) {
                out.writerIndex(start);
                return -1;
            }
            return out.writerIndex() - start;
        }

        private static void insert(ByteBuf target, int index, int n, ByteBuf out) {
            if (n > 0) {
                writeVarint(out, (long) n << 1);
                out.writeBytes(target, index, n);
            }
        }

        /** Clears a table of at least twice the base's windows (at most 64 Ki slots); returns its mask. */
        private int prepareTable(int baseLength) {
            int size = Math.max(256, Math.min(1 << 16, Integer.highestOneBit(Math.max(1, baseLength) * 2 - 1) << 1));
            if (table.length < size) {
                table = new int[size];
            }
            Arrays.fill(table, 0, size, -1);
            return size - 1;
        }

        private static int hash(int window, int mask) {
            return (window * 0x9E3779B1 >>> 16) & mask;
        }
    }
}
