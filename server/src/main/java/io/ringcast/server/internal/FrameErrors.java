package io.ringcast.server.internal;

import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.ringcast.protocol.ErrorCode;

import java.util.zip.DataFormatException;

/**
 * What a failure of the WebSocket layers below a session (frame decoding, reassembly,
 * permessage-deflate) means to its client: {@code FRAME_TOO_LARGE} or {@code MALFORMED_FRAME}, with
 * the reason it is told. Stateless; any thread.
 */
final class FrameErrors {
    private FrameErrors() {
    }

    /**
     * @param maxFrameBytes {@code limits.maxFrameBytes}, named in the reason
     * @return the refusal, or null when {@code cause} is not about the client's frames
     */
    static Verdict of(Throwable cause, int maxFrameBytes) {
        if (cause instanceof CorruptedWebSocketFrameException
                && ((CorruptedWebSocketFrameException) cause).closeStatus().code()
                        == WebSocketCloseStatus.MESSAGE_TOO_BIG.code()
                || cause instanceof TooLongFrameException) {
            return Verdict.refused(ErrorCode.FRAME_TOO_LARGE, "frame larger than limits.maxFrameBytes = "
                    + maxFrameBytes + " (" + cause.getMessage() + ")");
        }
        if (cause instanceof DecompressionException) {
            // Netty's inflater throws this one type both for its maxAllocation and for bad data
            if (cause.getCause() instanceof DataFormatException) {
                return Verdict.refused(ErrorCode.MALFORMED_FRAME, "bad permessage-deflate data: "
                        + cause.getCause().getMessage());
            }
            return Verdict.refused(ErrorCode.FRAME_TOO_LARGE, "permessage-deflate message inflates to more than "
                    + "limits.maxFrameBytes = " + maxFrameBytes);
        }
        if (cause instanceof CorruptedFrameException) {
            return Verdict.refused(ErrorCode.MALFORMED_FRAME, "bad WebSocket frame: " + cause.getMessage());
        }
        return null;
    }
}
