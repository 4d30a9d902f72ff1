package io.ringcast.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Values as the sequencer holds them: a range inside a larger buffer (a frame), with bytes around
 * it that would break the JSON if they were read. Every helper evaluates on a heap and on a direct
 * buffer, at different offsets, checks that both agree and that the buffer's indices did not move,
 * and releases everything it allocated.
 */
final class JsonValueFixtures {
    /** Around the value: a reader that strays out of its range meets these. */
    private static final byte[] BEFORE = "]\"}{,".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] AFTER = ",\"x\":]}".getBytes(StandardCharsets.US_ASCII);
    /** Already in the output buffer: a projection must append after it and leave it alone. */
    private static final byte[] OUT_PREFIX = "frame-header".getBytes(StandardCharsets.US_ASCII);

    private JsonValueFixtures() {
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static boolean matches(ValueFilter filter, String json) {
        return matches(filter, utf8(json));
    }

    static boolean matches(ValueFilter filter, byte[] value) {
        boolean onHeap = matchesIn(filter, value, false);
        boolean direct = matchesIn(filter, value, true);
        assertThat(direct).as("direct buffer agrees with heap for %s", filter).isEqualTo(onHeap);
        return onHeap;
    }

    private static boolean matchesIn(ValueFilter filter, byte[] value, boolean direct) {
        ByteBuf buf = placed(value, direct);
        try {
            int reader = buf.readerIndex();
            int writer = buf.writerIndex();
            boolean result = filter.matches(buf, BEFORE.length, value.length);
            assertThat(buf.readerIndex()).isEqualTo(reader);
            assertThat(buf.writerIndex()).isEqualTo(writer);
            return result;
        } finally {
            buf.release();
        }
    }

    static String project(FieldProjection projection, String json) {
        return new String(project(projection, utf8(json)), StandardCharsets.UTF_8);
    }

    static byte[] project(FieldProjection projection, byte[] value) {
        byte[] onHeap = projectIn(projection, value, false);
        byte[] direct = projectIn(projection, value, true);
        assertThat(direct).as("direct buffer gives the heap buffer's bytes").isEqualTo(onHeap);
        return onHeap;
    }

    private static byte[] projectIn(FieldProjection projection, byte[] value, boolean direct) {
        ByteBuf buf = placed(value, direct);
        ByteBuf out = direct ? Unpooled.directBuffer(16) : Unpooled.buffer(16);
        try {
            out.writeBytes(OUT_PREFIX);
            int reader = buf.readerIndex();
            int writer = buf.writerIndex();
            int written = projection.project(buf, BEFORE.length, value.length, out);
            assertThat(buf.readerIndex()).isEqualTo(reader);
            assertThat(buf.writerIndex()).isEqualTo(writer);
            assertThat(written).as("bytes written").isEqualTo(out.readableBytes() - OUT_PREFIX.length);
            assertThat(ByteBufUtil.getBytes(out, 0, OUT_PREFIX.length)).as("what out held before").isEqualTo(OUT_PREFIX);
            return ByteBufUtil.getBytes(out, OUT_PREFIX.length, written);
        } finally {
            buf.release();
            out.release();
        }
    }

    /** {@code value} between {@link #BEFORE} and {@link #AFTER}; the reader index is 0. */
    private static ByteBuf placed(byte[] value, boolean direct) {
        int capacity = BEFORE.length + value.length + AFTER.length;
        ByteBuf buf = direct ? Unpooled.directBuffer(capacity) : Unpooled.buffer(capacity);
        return buf.writeBytes(BEFORE).writeBytes(value).writeBytes(AFTER);
    }
}
