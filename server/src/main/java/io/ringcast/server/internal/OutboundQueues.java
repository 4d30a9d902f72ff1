package io.ringcast.server.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * The bytes queued to sessions and not sent yet, in all and the largest queue: what
 * {@code limits.outboundQueueBytes} bounds, for {@code /metrics}. Any thread: a channel's pending
 * byte count is a volatile field, so a reading may lag a write but is never torn.
 */
record OutboundQueues(long totalBytes, long largestBytes) {

    static OutboundQueues of(Iterable<Channel> channels) {
        long total = 0;
        long largest = 0;
        for (Channel channel : channels) {
            ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
            long bytes = buffer == null ? 0 : buffer.totalPendingWriteBytes();
            total += bytes;
            largest = Math.max(largest, bytes);
        }
        return new OutboundQueues(total, largest);
    }
}
