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
            long bytes = pendingBytes(channel);
            total += bytes;
            largest = Math.max(largest, bytes);
        }
        return new OutboundQueues(total, largest);
    }

    /** What {@code channel} has queued and not sent (0 once closed): the measure of every outbound bound. Any thread. */
    static long pendingBytes(Channel channel) {
        ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
        return buffer == null ? 0 : buffer.totalPendingWriteBytes();
    }
}
