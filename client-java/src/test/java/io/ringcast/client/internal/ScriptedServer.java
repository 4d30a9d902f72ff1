package io.ringcast.client.internal;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.ringcast.protocol.WireCodec;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A scripted Ringcast node on a real loopback socket, for tests of the client's whole path
 * (connector, address rotation, session): Netty's WebSocket server codec, then the test. It
 * answers nothing on its own: the test reads what the client sent, as {@link Wire} lines, and
 * writes the server messages it chooses, encoded with {@link WireCodec}. Every wait is bounded by
 * {@link #WAIT_MS} and fails naming what was awaited.
 */
final class ScriptedServer implements AutoCloseable {
    static final long WAIT_MS = 10_000;
    private static final int MAX_FRAME_BYTES = 1 << 20;

    final String name;
    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel listener;
    private final BlockingQueue<Peer> connections = new LinkedBlockingQueue<>();

    private ScriptedServer(String name) {
        this.name = name;
        listener = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        Peer peer = new Peer(ch);
                        ch.pipeline()
                                .addLast(new HttpServerCodec())
                                .addLast(new HttpObjectAggregator(64 * 1024))
                                .addLast(new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                                        .websocketPath("/ws")
                                        .maxFramePayloadLength(MAX_FRAME_BYTES)
                                        .sendCloseFrame(null) // closing drops the connection, as a crash
                                        .build()))
                                .addLast(new WebSocketFrameAggregator(MAX_FRAME_BYTES))
                                .addLast(new SimpleChannelInboundHandler<BinaryWebSocketFrame>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, BinaryWebSocketFrame f) {
                                        peer.received.addAll(Wire.decodeClientFrame(f.content()));
                                    }
                                });
                        connections.add(peer);
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .syncUninterruptibly()
                .channel();
    }

    static ScriptedServer start(String name) {
        return new ScriptedServer(name);
    }

    String url() {
        return "ws://127.0.0.1:" + ((InetSocketAddress) listener.localAddress()).getPort() + "/ws";
    }

    /** The next connection the client opened to this server, once it sent {@code HELLO}; not yet welcomed. */
    Peer nextSession() throws InterruptedException {
        Peer peer = connections.poll(WAIT_MS, TimeUnit.MILLISECONDS);
        if (peer == null) {
            throw new AssertionError("no connection to " + name + " within " + WAIT_MS + " ms");
        }
        String hello = peer.next("HELLO on " + name);
        if (!hello.startsWith("HELLO ")) {
            throw new AssertionError("the first message on " + name + " is not HELLO: " + hello);
        }
        return peer;
    }

    /** Whether the client opened no connection to this server that {@link #nextSession} has not taken. */
    boolean noOtherConnection() {
        return connections.isEmpty();
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** One client connection, as the server sees it. */
    final class Peer {
        private final Channel channel;
        /** The client's messages in the order received, one {@link Wire} line each, not yet taken. */
        private final BlockingQueue<String> received = new LinkedBlockingQueue<>();

        private Peer(Channel channel) {
            this.channel = channel;
        }

        /** Sends {@code WELCOME} with a 1 MiB frame limit and no idle timeout (so no {@code PING}s). */
        void welcome(String sessionId) {
            send(b -> WireCodec.writeWelcome(b, WireCodec.VERSION, sessionId, MAX_FRAME_BYTES, 0));
        }

        /** Server messages, all in one frame. */
        void send(Consumer<ByteBuf> writer) {
            channel.writeAndFlush(Wire.frame(writer));
        }

        /** Server messages in one frame, then the connection drops (no close frame, as a crashed node). */
        void sendThenDrop(Consumer<ByteBuf> writer) {
            channel.write(Wire.frame(writer));
            channel.flush();
            channel.close();
        }

        /** The client's next {@code n} messages on this connection, waiting for them. */
        List<String> next(int n) throws InterruptedException {
            List<String> lines = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                lines.add(next("message " + (i + 1) + " of " + n + " on " + name + " after " + lines));
            }
            return lines;
        }

        private String next(String what) throws InterruptedException {
            String line = received.poll(WAIT_MS, TimeUnit.MILLISECONDS);
            if (line == null) {
                throw new AssertionError("no " + what + " within " + WAIT_MS + " ms");
            }
            return line;
        }

        /** Waits until the connection is closed (by either side). */
        void awaitClosed() {
            if (!channel.closeFuture().awaitUninterruptibly(WAIT_MS)) {
                throw new AssertionError("the client did not leave " + name + " within " + WAIT_MS + " ms");
            }
        }

        boolean isOpen() {
            return channel.isOpen();
        }
    }
}
