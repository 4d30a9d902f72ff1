package io.ringcast.server.internal;

import java.io.ByteArrayInputStream;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Bytes written into arrays of {@link #PIECE_BYTES}, never copied to grow and written out as they
 * are ({@link #writeTo}) or read back ({@link #inputStream}): a cluster's snapshot capture, and the
 * topics of a snapshot being installed. A {@link java.io.ByteArrayOutputStream} doubles its array as
 * it grows and copies it once more at the end, so an 8.6-MB capture held up to about 33 MB of heap
 * at once, on a node whose heap may be near its mark ({@code limits.heapRefusePercent}); this holds
 * the bytes and one piece's slack.
 *
 * <p>Thread contract: written by one thread, then handed over (through a future) and read by
 * another; never both at once.
 */
final class PiecedBytes extends OutputStream {
    static final int PIECE_BYTES = 1 << 16;

    private final List<byte[]> pieces = new ArrayList<>();
    /** The last piece, and how much of it is written. */
    private byte[] current;
    private int used = PIECE_BYTES;

    @Override
    public void write(int b) {
        if (used == PIECE_BYTES) {
            nextPiece();
        }
        current[used++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
        while (len > 0) {
            if (used == PIECE_BYTES) {
                nextPiece();
            }
            int n = Math.min(len, PIECE_BYTES - used);
            System.arraycopy(b, off, current, used, n);
            used += n;
            off += n;
            len -= n;
        }
    }

    private void nextPiece() {
        current = new byte[PIECE_BYTES];
        pieces.add(current);
        used = 0;
    }

    /** Bytes written so far. */
    long size() {
        return pieces.isEmpty() ? 0 : (long) (pieces.size() - 1) * PIECE_BYTES + used;
    }

    /**
     * Appends the next {@code length} bytes of {@code in}, a piece at a time: a length is trusted
     * only as far as bytes arrive, so a damaged one costs no more than what is there.
     *
     * @throws java.io.EOFException when {@code in} ends first (the piece being read then counts for
     *                              nothing: the caller drops these bytes, damaged)
     */
    void readFrom(DataInput in, long length) throws IOException {
        long left = length;
        while (left > 0) {
            if (used == PIECE_BYTES) {
                nextPiece();
            }
            int n = (int) Math.min(left, PIECE_BYTES - used);
            in.readFully(current, used, n);
            used += n;
            left -= n;
        }
    }

    /** The bytes written here, in order, read without copying them whole. */
    InputStream inputStream() {
        List<InputStream> each = new ArrayList<>(pieces.size());
        for (int i = 0; i < pieces.size(); i++) {
            each.add(new ByteArrayInputStream(pieces.get(i), 0, lengthOf(i)));
        }
        return new SequenceInputStream(Collections.enumeration(each));
    }

    private int lengthOf(int piece) {
        return piece == pieces.size() - 1 ? used : PIECE_BYTES;
    }

    /** Writes every byte written here, in order. */
    void writeTo(DataOutput out) throws IOException {
        for (int i = 0; i < pieces.size(); i++) {
            out.write(pieces.get(i), 0, lengthOf(i));
        }
    }
}
