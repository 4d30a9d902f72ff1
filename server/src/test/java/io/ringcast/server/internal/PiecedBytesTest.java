package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void bytesReadInPiecesComeBackInOrderByteByByteOrInAnyChunks() throws Exception {
        byte[] expected = new byte[5 * PiecedBytes.PIECE_BYTES / 2 + 17];
        new Random(11).nextBytes(expected);
        PiecedBytes pieced = new PiecedBytes();
        pieced.readFrom(new DataInputStream(new ByteArrayInputStream(expected)), expected.length);
        assertThat(pieced.size()).isEqualTo(expected.length);

        ByteArrayOutputStream chunked = new ByteArrayOutputStream();
        InputStream in = pieced.inputStream();
        byte[] chunk = new byte[PiecedBytes.PIECE_BYTES / 3 + 5]; // reads that straddle the pieces' ends
        for (int n; (n = in.read(chunk, 0, chunk.length)) >= 0; ) {
            chunked.write(chunk, 0, n);
        }
        assertThat(chunked.toByteArray()).isEqualTo(expected);

        InputStream single = pieced.inputStream();
        for (byte b : expected) {
            assertThat(single.read()).isEqualTo(b & 0xff);
        }
        assertThat(single.read()).isEqualTo(-1);
    }

    @Test
    void aLengthLongerThanTheInputEndsWhenTheInputDoesWithoutCountingThePieceReadShort() throws Exception {
        PiecedBytes pieced = new PiecedBytes();
        assertThatThrownBy(() -> pieced.readFrom(new DataInputStream(new ByteArrayInputStream(new byte[100])),
                Integer.MAX_VALUE)).isInstanceOf(EOFException.class);
        assertThat(pieced.size()).as("neither the length claimed nor a piece read short").isZero();
    }
}
