package io.ringcast.cluster;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.cluster.internal.ClusterProtocol;
import io.ringcast.cluster.internal.Membership;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One node's part in the cluster: membership (JGroups), the partition table, the peer links, and
 * the protocol that sequences each partition at its owner, replicates it to the backup and to
 * every node, fills gaps, hands partitions over and takes them over (docs/clustering.md).
 *
 * <p>Thread contract: {@link #publish} and {@link #status} may be called from any thread; every
 * piece of cluster state lives on one thread, {@code ringcast-cluster}, which also runs the peer
 * links. The {@link UpdateSink} is called on that thread.
 */
public final class ClusterNode implements AutoCloseable {

    /** Told how a publish ended, on the cluster thread: hand the answer to your own thread. */
    @FunctionalInterface
    public interface PublishCallback {
        /** @param topicSequence the sequence the topic gave the update, when {@code ACKED} */
        void completed(PublishOutcome outcome, long topicSequence);
    }

    private final ClusterSettings settings;
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final ClusterProtocol protocol;
    private final Membership membership;
    private boolean closed;

    public ClusterNode(ClusterSettings settings, UpdateSink sink) {
        this.settings = settings;
        this.group = new NioEventLoopGroup(1, new DefaultThreadFactory("ringcast-cluster"));
        this.loop = group.next();
        this.protocol = new ClusterProtocol(settings, loop, sink);
        this.membership = new Membership(settings,
                (viewId, members, carriedOn) -> loop.execute(() -> protocol.onView(viewId, members, carriedOn)));
    }

    /** Opens the peer port and joins the cluster. Returns once joined; see {@link #ready()}. */
    public void start() throws Exception {
        protocol.start();
        membership.start();
    }

    /** Completes when the node has caught up with every partition's owner: only then should it serve clients. */
    public CompletableFuture<Void> ready() {
        return protocol.ready();
    }

    /**
     * Publishes {@code value} to {@code path} through the partition's owner. Any thread.
     *
     * @param value         taken over by the cluster layer: the caller must not change it
     * @param publisherId   the client's publisher id, 0 when it gave none; with it, a publish the
     *                      client sends again with the same {@code correlationId}, through any
     *                      node, is applied once and answered with the sequence it got
     * @param correlationId the client's correlation id of the publish
     * @param callback      told once, on the cluster thread
     */
    public void publish(String path, byte[] value, long publisherId, int correlationId, PublishCallback callback) {
        loop.execute(() -> protocol.publish(path, value, publisherId, correlationId, callback));
    }

    /** This node's view of the cluster, at most one tick (100 ms) old. Any thread, without waiting. */
    public ClusterStatus status() {
        return protocol.status();
    }

    /** This node's configuration. */
    public ClusterSettings settings() {
        return settings;
    }

    /** Leaves the cluster and closes the peer links. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        membership.close();
        protocol.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
