package io.ringcast.client.internal;

import io.ringcast.client.RingcastException;
import io.ringcast.protocol.WireCodec;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One publish, from {@code publish()} to its ack: the command that carries it to the event loop,
 * then the entry that waits for {@code PUBLISH_ACK}. Counts itself in the client's in-flight
 * counter from creation until {@link #acked} or {@link #fail}, whichever comes first (once).
 */
final class PublishRequest implements CorrelatedRequest {
    final String topic;
    final byte[] value;
    /** The encoded {@code PUBLISH} message's size, header included. */
    final int messageBytes;
    final CompletableFuture<Long> future = new CompletableFuture<>();
    private final AtomicInteger inFlight;
    /** Set on the event loop when sent. */
    int correlationId;
    /** Send order on the event loop, to fail lost publishes in the order they were made. */
    long sendOrder;
    /** Cluster nodes that refused it ({@code NO_MAJORITY}) or could not tell its outcome ({@code REPLICATION_TIMEOUT}). */
    int minorityRefusals;

    PublishRequest(String topic, int topicBytes, byte[] value, AtomicInteger inFlight) {
        this.topic = topic;
        this.value = value;
        this.messageBytes = WireCodec.publishBytes(topicBytes, value.length);
        this.inFlight = inFlight;
    }

    @Override
    public void execute(ClientSession session) {
        session.publish(this);
    }

    void acked(long sequence) {
        inFlight.decrementAndGet(); // before completing: a callback that publishes again sees the room
        future.complete(sequence);
    }

    @Override
    public void fail(RingcastException error) {
        inFlight.decrementAndGet();
        future.completeExceptionally(error);
    }
}
