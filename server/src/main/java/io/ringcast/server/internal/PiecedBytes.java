package io.ringcast.server.internal;

import java.io.DataOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Bytes written into arrays of {@link #PIECE_BYTES}, never copied to grow and written out as they
 * are ({@link #writeTo}): a cluster's snapshot capture. A {@link java.io.ByteArrayOutputStream}
 * doubles its array as it grows and copies it once more at the end, so an 8.6-MB capture held up to
 * about 33 MB of heap at once, on a node whose heap may be near its mark
 * ({@code limits.heapRefusePercent}); this holds the bytes and one piece's slack.
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

    /** Writes every byte written here, in order. */
    void writeTo(DataOutput out) throws IOException {
        for (int i = 0; i < pieces.size(); i++) {
            byte[] piece = pieces.get(i);
            out.write(piece, 0, i == pieces.size() - 1 ? used : PIECE_BYTES);
        }
    }
}
