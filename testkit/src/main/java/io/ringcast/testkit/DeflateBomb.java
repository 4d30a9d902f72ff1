package io.ringcast.testkit;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.zip.Deflater;

/**
 * Compressed messages that inflate to far more than they weigh, for tests that a peer bounds what
 * it inflates: zeros deflate about 1,030 to 1, deflate's best.
 */
public final class DeflateBomb {
    private static final byte[] SYNC_FLUSH_TAIL = {0, 0, (byte) 0xff, (byte) 0xff};

    private DeflateBomb() {
    }

    /**
     * {@code inflatedBytes} zeros as RFC 7692 sends a message: raw deflate, sync-flushed, the
     * trailing {@code 00 00 ff ff} removed.
     */
    public static byte[] zeros(long inflatedBytes) {
        Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION, true);
        byte[] zeros = new byte[1024 * 1024];
        byte[] chunk = new byte[64 * 1024];
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (long left = inflatedBytes; left > 0; left -= zeros.length) {
            deflater.setInput(zeros, 0, (int) Math.min(zeros.length, left));
            while (!deflater.needsInput()) {
                out.write(chunk, 0, deflater.deflate(chunk, 0, chunk.length, Deflater.NO_FLUSH));
            }
        }
        int n;
        do {
            n = deflater.deflate(chunk, 0, chunk.length, Deflater.SYNC_FLUSH);
            out.write(chunk, 0, n);
        } while (n == chunk.length);
        deflater.end();
        byte[] deflated = out.toByteArray();
        if (!Arrays.equals(deflated, deflated.length - 4, deflated.length, SYNC_FLUSH_TAIL, 0, 4)) {
            throw new IllegalStateException("a sync flush did not end in its empty block 00 00 ff ff");
        }
        return Arrays.copyOf(deflated, deflated.length - 4);
    }
}
