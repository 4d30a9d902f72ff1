package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class PiecedBytesTest {
    @Test
    void writesOutEveryByteInOrderAcrossPiecesWhateverTheWritesSizes() throws Exception {
        Random random = new Random(7);
        PiecedBytes pieced = new PiecedBytes();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (int round = 0; round < 40; round++) {
            byte[] chunk = new byte[random.nextInt(3 * PiecedBytes.PIECE_BYTES / 2)];
            random.nextBytes(chunk);
            int off = chunk.length == 0 ? 0 : random.nextInt(chunk.length);
            pieced.write(chunk, off, chunk.length - off);
            expected.write(chunk, off, chunk.length - off);
            pieced.write(round);
            expected.write(round);
        }
        assertThat(pieced.size()).isEqualTo(expected.size()).isGreaterThan(10L * PiecedBytes.PIECE_BYTES);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        pieced.writeTo(new DataOutputStream(out));
        assertThat(out.toByteArray()).isEqualTo(expected.toByteArray());
    }

    @Test
    void nothingWrittenWritesNothingAndAFullLastPieceIsWrittenWhole() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PiecedBytes().writeTo(new DataOutputStream(out));
        assertThat(out.size()).isZero();

        PiecedBytes exact = new PiecedBytes();
        exact.write(new byte[2 * PiecedBytes.PIECE_BYTES], 0, 2 * PiecedBytes.PIECE_BYTES);
        exact.writeTo(new DataOutputStream(out));
        assertThat(out.size()).isEqualTo(2 * PiecedBytes.PIECE_BYTES);
    }
}
