package io.ringcast.client;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.TopicPath;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small in-process stand-in for the Ringcast server, for client tests that need a socket:
 * handshake, TOPIC aliases, SUBSCRIBE with the resume rules of {@code docs/protocol.md}, PUBLISH
 * with acks and fan-out, PING. Plus hooks to drop connections and to end sessions with a fatal
 * error. Not the real server: no limits, one thread, values kept in full.
 *
 * <p>Thread contract: all state is on the server's one event loop; the hooks hop onto it and wait.
 */
final class FakeServer implements AutoCloseable {
    final List<String> subscribes = new CopyOnWriteArrayList<>();
    final AtomicInteger inboundFrames = new AtomicInteger();
    final AtomicInteger publishes = new AtomicInteger();
    final AtomicInteger pings = new AtomicInteger();
    final AtomicInteger sessionsStarted = new AtomicInteger();
    volatile int maxFrameBytes = 1 << 20;
    volatile int idleTimeoutMs = 120_000;
    volatile int historyLength = 64;
    volatile boolean ackPublishes = true;

    private final NioEventLoopGroup group = new NioEventLoopGroup(1, new DefaultThreadFactory("fake-server", true));
    private final EventLoop loop = group.next();
    private final Channel serverChannel;
    private final Map<String, Topic> topics = new LinkedHashMap<>();
    private final List<Session> sessions = new ArrayList<>();
    private int nextAlias = 1;

    private FakeServer(int port) {
        serverChannel = new ServerBootstrap().group(loop).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(new HttpServerCodec())
                                .addLast(new HttpObjectAggregator(65536))
                                .addLast(new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                                        .websocketPath("/ws").maxFramePayloadLength(64 << 20).build()))
                                .addLast(new WebSocketFrameAggregator(64 << 20))
                                .addLast(new Session());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", port)).syncUninterruptibly().channel();
    }

    static FakeServer start() {
        return new FakeServer(0);
    }

    /** A server on a given port, e.g. one a client is reconnecting to. */
    static FakeServer start(int port) {
        return new FakeServer(port);
    }

    int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    String url() {
        return "ws://127.0.0.1:" + port() + "/ws";
    }

    /** Publishes as if another client did. */
    void publish(String topic, String value) {
        onLoop(() -> doPublish(topic, value.getBytes(StandardCharsets.UTF_8)));
    }

    /** Closes every session's socket without a word, as a crash or a network cut would. */
    void dropConnections() {
        onLoop(() -> {
            for (Session s : new ArrayList<>(sessions)) {
                s.channel.close();
            }
        });
    }

    /** Ends every session the protocol's way: ERROR, then a close frame with the error's close code. */
    void fatal(ErrorCode code, String reason) {
        onLoop(() -> {
            for (Session s : new ArrayList<>(sessions)) {
                WireCodec.writeError(s.out(), code, 0, reason);
                s.flushOut();
                s.channel.writeAndFlush(new CloseWebSocketFrame(code.closeCode(), reason))
                        .addListener(ChannelFutureListener.CLOSE);
            }
        });
    }

    int openSessions() {
        int[] n = new int[1];
        onLoop(() -> n[0] = sessions.size());
        return n[0];
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private void onLoop(Runnable r) {
        loop.submit(r).syncUninterruptibly();
    }

    private void doPublish(String path, byte[] value) {
        Topic t = topics.computeIfAbsent(path, p -> new Topic(p, nextAlias++));
        t.values.add(value);
        long seq = t.values.size();
        for (Session s : sessions) {
            if (s.subscriptions.values().stream().anyMatch(sel -> sel.matches(t.segments))) {
                s.announce(t);
                ByteBuf out = s.out();
                out.writeByte(0x84).writeInt(4 + 8 + 1 + value.length).writeInt(t.alias).writeLong(seq).writeByte(0)
                        .writeBytes(value);
                s.flushOut();
            }
        }
    }

    private static final class Topic {
        final String path;
        final String[] segments;
        final int alias;
        final List<byte[]> values = new ArrayList<>();

        Topic(String path, int alias) {
            this.path = path;
            this.segments = path.split("/");
            this.alias = alias;
        }

        long sequence() {
            return values.size();
        }
    }

    /** One client session; its handler is also the decoder's {@link MessageHandler}. */
    private final class Session extends ChannelInboundHandlerAdapter implements MessageHandler {
        final Map<Integer, Selector> subscriptions = new HashMap<>();
        final Set<Integer> aliasesSent = new HashSet<>();
        Channel channel;
        ByteBuf out;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            sessions.add(this);
            channel.closeFuture().addListener(f -> {
                sessions.remove(this);
                if (out != null) {
                    out.release();
                    out = null;
                }
            });
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof BinaryWebSocketFrame) {
                    inboundFrames.incrementAndGet();
                    WireCodec.decode(((BinaryWebSocketFrame) msg).content(), this);
                    flushOut();
                }
            } catch (ProtocolException e) {
                WireCodec.writeError(out(), e.code(), 0, e.reason());
                flushOut();
                ctx.close();
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        ByteBuf out() {
            if (out == null) {
                out = channel.alloc().buffer();
            }
            return out;
        }

        void flushOut() {
            if (out != null && channel.isActive()) {
                channel.writeAndFlush(new BinaryWebSocketFrame(out));
                out = null;
            }
        }

        void announce(Topic t) {
            if (aliasesSent.add(t.alias)) {
                WireCodec.writeTopic(out(), t.alias, t.path);
            }
        }

        void snapshot(int subscriptionId, Topic t, int flags) {
            announce(t);
            byte[] v = t.values.get(t.values.size() - 1);
            ByteBuf value = channel.alloc().buffer(v.length).writeBytes(v);
            WireCodec.writeSnapshot(out(), subscriptionId, t.alias, t.sequence(), flags, value, 0, v.length);
            value.release();
        }

        @Override
        public void onHello(int version, String clientName) {
            sessionsStarted.incrementAndGet();
            WireCodec.writeWelcome(out(), 1, "s-" + sessionsStarted.get(), maxFrameBytes, idleTimeoutMs);
        }

        @Override
        public void onSubscribe(int id, String selectorText, Map<String, Long> resume) {
            subscribes.add(id + " " + selectorText + " " + resume);
            Selector selector;
            try {
                selector = Selector.parse(selectorText, PathLimits.DEFAULT);
            } catch (ProtocolException e) {
                WireCodec.writeError(out(), ErrorCode.INVALID_SELECTOR, id, e.reason());
                return;
            }
            if (id == 0 || subscriptions.containsKey(id)) {
                WireCodec.writeError(out(), ErrorCode.DUPLICATE_SUBSCRIPTION_ID, id, "subscription id " + id);
                return;
            }
            int matched = 0;
            for (Topic t : topics.values()) {
                if (!selector.matches(t.segments)) {
                    continue;
                }
                matched++;
                Long last = resume.get(t.path);
                boolean receivedAlready = subscriptions.values().stream().anyMatch(s -> s.matches(t.segments));
                if (receivedAlready) {
                    if (last == null) {
                        snapshot(id, t, 0);
                    }
                } else if (last == null) {
                    snapshot(id, t, 0);
                } else if (last == t.sequence()) {
                    continue;
                } else if (last < t.sequence() && last + 1 > t.sequence() - historyLength) {
                    announce(t);
                    for (long seq = last + 1; seq <= t.sequence(); seq++) {
                        byte[] v = t.values.get((int) seq - 1);
                        out().writeByte(0x84).writeInt(4 + 8 + 1 + v.length).writeInt(t.alias).writeLong(seq)
                                .writeByte(0).writeBytes(v);
                    }
                } else {
                    snapshot(0, t, UpdateFlags.GAP);
                }
            }
            subscriptions.put(id, selector);
            WireCodec.writeSubscribed(out(), id, matched);
        }

        @Override
        public void onUnsubscribe(int subscriptionId) {
            subscriptions.remove(subscriptionId);
        }

        @Override
        public void onPublish(int correlationId, String topicPath, ByteBuf frame, int valueIndex, int valueLength) {
            publishes.incrementAndGet();
            if (!TopicPath.isValid(topicPath, PathLimits.DEFAULT)) {
                WireCodec.writeError(out(), ErrorCode.INVALID_PATH, correlationId, "invalid path '" + topicPath + "'");
                return;
            }
            doPublish(topicPath, ByteBufUtil.getBytes(frame, valueIndex, valueLength));
            if (ackPublishes) {
                WireCodec.writePublishAck(out(), correlationId, topics.get(topicPath).sequence());
            }
        }

        @Override
        public void onPing(long nonce) {
            pings.incrementAndGet();
            WireCodec.writePong(out(), nonce);
        }
    }
}
