package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client session with its command proxy and one {@link ConnectionHandler} on an
 * {@link EmbeddedChannel}: the client's whole inbound and outbound path minus the socket and the
 * WebSocket codec. {@link #reconnect()} swaps in a fresh channel, as the connector would.
 */
final class EmbeddedConnection implements AutoCloseable {
    final AtomicInteger inFlight = new AtomicInteger();
    final List<ConnectionHandler> welcomed = new ArrayList<>();
    /** Owns the session's event loop across connections, as the client's one loop does. */
    final EmbeddedChannel loop = new EmbeddedChannel();
    EmbeddedChannel channel;
    ConnectionHandler handler;
    ClientSession session;
    CommandProxy commands;

    EmbeddedConnection() {
        channel = new EmbeddedChannel();
        session = new ClientSession(loop.eventLoop(), 1);
        commands = new CommandProxy(loop.eventLoop(), session);
        addHandler();
    }

    private void addHandler() {
        handler = new ConnectionHandler(session, new ConnectionObserver() {
            @Override
            public void onWelcome(ConnectionHandler connection) {
                welcomed.add(connection);
            }

            @Override
            public void onWritable() {
                commands.scheduleDrain();
            }
        }, "ws://test/ws", "unit");
        channel.pipeline().addLast("ringcast", handler);
    }

    /** Handshake done, HELLO checked, WELCOME received. */
    EmbeddedConnection open(int maxFrameBytes, int idleTimeoutMs) {
        channel.pipeline().fireUserEventTriggered(ClientHandshakeStateEvent.HANDSHAKE_COMPLETE);
        assertThat(sent()).containsExactly("HELLO unit");
        fromServer(b -> WireCodec.writeWelcome(b, 1, "s-1", maxFrameBytes, idleTimeoutMs));
        return this;
    }

    EmbeddedConnection open() {
        return open(1 << 20, 0);
    }

    /**
     * The connection drops (as the connector would see it: detach with the handler's reason),
     * and a new channel with a new handler takes its place, not yet open.
     */
    void reconnect() {
        channel.close();
        session.detach(handler.disconnectReason(), handler.endedByFatalError());
        channel.finishAndReleaseAll();
        channel = new EmbeddedChannel();
        addHandler();
    }

    /** Server messages, all in one frame. */
    void fromServer(Consumer<ByteBuf> writer) {
        channel.writeInbound(Wire.frame(writer));
        runTasks();
    }

    /** Runs what is due on the session's loop and on the connection's (writability events, drains). */
    void runTasks() {
        for (int i = 0; i < 3; i++) {
            loop.runPendingTasks();
            channel.runPendingTasks();
        }
    }

    Recorder subscribe(String selector) {
        return subscribe(selector, SubscribeOptions.NONE);
    }

    Recorder subscribe(String selector, SubscribeOptions options) {
        Recorder r = new Recorder();
        try {
            r.subscription = new ClientSubscription(Selector.parse(selector, new PathLimits(65535, 1024)), options, r,
                    commands);
        } catch (ProtocolException e) {
            throw new AssertionError(e);
        }
        commands.offer(new SubscriptionCommand(r.subscription, true));
        runTasks();
        return r;
    }

    CompletableFuture<Long> publish(String topic, String value) {
        PublishRequest p = new PublishRequest(topic, topic.getBytes(StandardCharsets.UTF_8).length,
                value.getBytes(StandardCharsets.UTF_8), inFlight);
        inFlight.incrementAndGet();
        commands.offer(p);
        runTasks();
        return p.future;
    }

    CompletableFuture<Integer> remove(String selector) {
        RemoveRequest r = new RemoveRequest(selector);
        commands.offer(r);
        runTasks();
        return r.future;
    }

    /** Every message the client wrote since the last call, one line each; frames released. */
    List<String> sent() {
        List<String> lines = new ArrayList<>();
        for (ByteBuf frame : sentFrames()) {
            try {
                lines.addAll(Wire.decodeClientFrame(frame));
            } finally {
                frame.release();
            }
        }
        return lines;
    }

    /** Every frame the client wrote since the last call; the caller releases them. */
    List<ByteBuf> sentFrames() {
        runTasks();
        List<ByteBuf> frames = new ArrayList<>();
        Object o;
        while ((o = channel.readOutbound()) != null) {
            frames.add(((BinaryWebSocketFrame) o).content());
        }
        return frames;
    }

    @Override
    public void close() {
        channel.finishAndReleaseAll();
        loop.finishAndReleaseAll();
    }

    /**
     * An {@link UpdateListener} that records what it gets, as {@code KIND topic #seq value} lines,
     * {@code UNMATCHED topic #seq} for {@link UpdateListener#onUnmatched} and
     * {@code REMOVED topic #lastSeq} for {@link UpdateListener#onRemoved}.
     */
    static final class Recorder implements UpdateListener {
        final List<String> updates = new ArrayList<>();
        final List<Update> raw = new ArrayList<>();
        final List<RingcastException> errors = new ArrayList<>();
        ClientSubscription subscription;

        @Override
        public void onUpdate(Update update) {
            raw.add(update);
            updates.add(update.kind() + " " + update.topic() + " #" + update.sequence() + " " + update.text());
        }

        @Override
        public void onUnmatched(String topic, long sequence) {
            updates.add("UNMATCHED " + topic + " #" + sequence);
        }

        @Override
        public void onRemoved(String topic, long lastSequence) {
            updates.add("REMOVED " + topic + " #" + lastSequence);
        }

        @Override
        public void onError(RingcastException error) {
            errors.add(error);
        }

        int id() {
            return subscription.id;
        }
    }
}
