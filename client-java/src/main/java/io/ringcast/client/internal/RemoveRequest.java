package io.ringcast.client.internal;

import io.netty.buffer.ByteBufUtil;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.WireCodec;

import java.util.concurrent.CompletableFuture;

/**
 * One {@code remove()}, from the call to its answer: the command that carries it to the event
 * loop, then the entry that waits for {@code REMOVED} or {@code ERROR} by its correlation id.
 * Unlike a publish it is never sent again: a removal has no ledger that would apply it once, and
 * sent again it could remove a topic created meanwhile.
 */
final class RemoveRequest implements CorrelatedRequest {
    final String selector;
    /** The encoded {@code REMOVE} message's size, header included. */
    final int messageBytes;
    final CompletableFuture<Integer> future = new CompletableFuture<>();
    /** Set on the event loop when sent. */
    int correlationId;
    /** Send order on the event loop, shared with publishes, to fail lost requests in the order they were made. */
    long sendOrder;

    RemoveRequest(String selector) {
        this.selector = selector;
        this.messageBytes = WireCodec.removeBytes(ByteBufUtil.utf8Bytes(selector));
    }

    @Override
    public void execute(ClientSession session) {
        session.remove(this);
    }

    void answered(int removedTopics) {
        future.complete(removedTopics);
    }

    /** Its connection was lost after it was sent and before its answer. */
    void lost() {
        fail(new RingcastException("connection lost before the answer to the removal of '" + selector
                + "': it may or may not have been applied"));
    }

    @Override
    public void fail(RingcastException error) {
        future.completeExceptionally(error);
    }
}
