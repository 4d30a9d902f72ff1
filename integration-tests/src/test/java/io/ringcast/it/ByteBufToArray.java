package io.ringcast.it;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/** Turns a test buffer into bytes and releases it. */
final class ByteBufToArray {
    private ByteBufToArray() {
    }

    static byte[] of(ByteBuf buf) {
        try {
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }
}
