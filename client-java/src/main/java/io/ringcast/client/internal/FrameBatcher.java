package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;

/**
 * Packs outbound messages back to back into binary WebSocket frames of at most the server's
 * {@code maxFrameBytes}. A full frame is written to the channel at once, without a flush;
 * {@link #flush()} writes the last, partly filled frame and flushes once. The caller states each
 * message's exact size up front ({@link #reserve}) so a message never spans two frames.
 *
 * <p>Thread contract: event-loop confined (owned by {@link ClientSession}). A partly filled frame
 * outlives an event-loop task only when a drain yields with commands still queued
 * ({@link #flushWritten()}), so that the next drain goes on filling it instead of sending a
 * small frame; every other task that reserves ends with {@link #flush()}.
 */
final class FrameBatcher {
    /** First capacity of a frame buffer; it grows, by the allocator's doubling, up to the frame limit. */
    static final int INITIAL_FRAME_BYTES = 64 * 1024;

    private Channel channel;
    private int maxFrameBytes;
    private ByteBuf frame;
    /** Where the last reserved message must end; checked under {@code -ea}. */
    private int expectedWriterIndex;
    private int framesSinceFlush;
    private long framesWritten;

    /** Starts batching for a new session. */
    void start(Channel channel, int maxFrameBytes) {
        assert this.channel == null && frame == null;
        this.channel = channel;
        this.maxFrameBytes = maxFrameBytes;
    }

    /** Ends the session: drops (releases) a frame not yet written. */
    void stop() {
        if (frame != null) {
            frame.release();
            frame = null;
        }
        channel = null;
        framesSinceFlush = 0;
    }

    /** The server's frame limit for this session. */
    int maxFrameBytes() {
        return maxFrameBytes;
    }

    /** Frames written since the last flush. */
    int framesSinceFlush() {
        return framesSinceFlush;
    }

    /** Frames written in the client's life, for tests and diagnostics. */
    long framesWritten() {
        return framesWritten;
    }

    /**
     * The buffer to append a message of exactly {@code messageBytes} (at most
     * {@link #maxFrameBytes()}) to: the current frame when it has room, else a new one.
     */
    ByteBuf reserve(int messageBytes) {
        assert channel != null && channel.eventLoop().inEventLoop();
        assert messageBytes <= maxFrameBytes : messageBytes + " > " + maxFrameBytes;
        ByteBuf f = frame;
        if (f != null) {
            assert f.writerIndex() == expectedWriterIndex : "message size miscomputed";
            if (f.readableBytes() + messageBytes > maxFrameBytes) {
                writeFrame();
                f = null;
            }
        }
        if (f == null) {
            f = channel.alloc().ioBuffer(Math.min(maxFrameBytes, Math.max(messageBytes, INITIAL_FRAME_BYTES)));
            frame = f;
        }
        expectedWriterIndex = f.writerIndex() + messageBytes;
        return f;
    }

    /** Writes the pending frame, if any, and flushes once if anything was written since the last flush. */
    void flush() {
        if (channel == null) {
            return;
        }
        if (frame != null) {
            assert frame.writerIndex() == expectedWriterIndex : "message size miscomputed";
            writeFrame();
        }
        if (framesSinceFlush > 0) {
            framesSinceFlush = 0;
            channel.flush();
        }
    }

    /** Flushes the frames written so far and keeps filling the current one; for a drain that yields. */
    void flushWritten() {
        if (channel != null && framesSinceFlush > 0) {
            framesSinceFlush = 0;
            channel.flush();
        }
    }

    private void writeFrame() {
        ByteBuf f = frame;
        frame = null;
        // the void promise: a failed write fires exceptionCaught, which closes the connection
        channel.write(new BinaryWebSocketFrame(f), channel.voidPromise());
        framesSinceFlush++;
        framesWritten++;
    }
}
