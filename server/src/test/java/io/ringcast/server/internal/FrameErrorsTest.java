package io.ringcast.server.internal;

import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.ringcast.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.zip.DataFormatException;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link FrameErrors}: what each failure below the session tells the client. */
class FrameErrorsTest {
    private static final int MAX_FRAME_BYTES = 65536;

    @Test
    void frameTooLargeForAnOversizedWebSocketFrame() {
        Verdict v = FrameErrors.of(new CorruptedWebSocketFrameException(WebSocketCloseStatus.MESSAGE_TOO_BIG,
                "Max frame length of 65536 has been exceeded."), MAX_FRAME_BYTES);

        assertThat(v.code()).isEqualTo(ErrorCode.FRAME_TOO_LARGE);
        assertThat(v.reason()).isEqualTo("frame larger than limits.maxFrameBytes = 65536 (Max frame length of 65536 "
                + "has been exceeded.)");
    }

    @Test
    void frameTooLargeForAMessageWhoseFramesTogetherPassTheLimit() {
        Verdict v = FrameErrors.of(new TooLongFrameException("WebSocketFrame length exceeded"), MAX_FRAME_BYTES);

        assertThat(v.code()).isEqualTo(ErrorCode.FRAME_TOO_LARGE);
        assertThat(v.reason()).endsWith("(WebSocketFrame length exceeded)");
    }

    @Test
    void malformedFrameForAnyOtherCorruptWebSocketFrame() {
        Verdict v = FrameErrors.of(new CorruptedWebSocketFrameException(WebSocketCloseStatus.PROTOCOL_ERROR,
                "unmasked client to server frame"), MAX_FRAME_BYTES);

        assertThat(v.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(v.reason()).isEqualTo("bad WebSocket frame: unmasked client to server frame");
        assertThat(FrameErrors.of(new CorruptedFrameException("bad"), MAX_FRAME_BYTES).code())
                .isEqualTo(ErrorCode.MALFORMED_FRAME);
    }

    @Test
    void malformedFrameForBadDeflateData() {
        Verdict v = FrameErrors.of(new DecompressionException(new DataFormatException("invalid block type")),
                MAX_FRAME_BYTES);

        assertThat(v.code()).isEqualTo(ErrorCode.MALFORMED_FRAME);
        assertThat(v.reason()).isEqualTo("bad permessage-deflate data: invalid block type");
    }

    @Test
    void frameTooLargeForADeflatedMessageThatInflatesPastTheLimit() {
        Verdict v = FrameErrors.of(new DecompressionException("Decompression buffer has reached maximum size"),
                MAX_FRAME_BYTES);

        assertThat(v.code()).isEqualTo(ErrorCode.FRAME_TOO_LARGE);
        assertThat(v.reason()).isEqualTo("permessage-deflate message inflates to more than limits.maxFrameBytes = 65536");
    }

    @Test
    void noVerdictForFailuresThatAreNotAboutTheClientsFrames() {
        assertThat(FrameErrors.of(new IOException("Connection reset by peer"), MAX_FRAME_BYTES)).isNull();
        assertThat(FrameErrors.of(new IllegalStateException("bug"), MAX_FRAME_BYTES)).isNull();
        assertThat(FrameErrors.of(new DecoderException("other"), MAX_FRAME_BYTES)).isNull();
    }
}
