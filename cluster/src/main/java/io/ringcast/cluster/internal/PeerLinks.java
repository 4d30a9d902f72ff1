package io.ringcast.cluster.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.AttributeKey;
import io.ringcast.cluster.ClusterSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The TCP links between nodes: a listener on this node's peer port, and one outgoing connection
 * to each other member, opened when first needed. A node sends only on its outgoing links and
 * reads only on the incoming ones, so each direction of a pair is one ordered stream.
 *
 * <p>Thread contract: everything (the listener, the links, {@link #send}) runs on the one cluster
 * event loop given to the constructor; received messages are handed over on it. A message to a
 * node that cannot be reached is dropped: the protocol recovers by fetching and retrying, which is
 * why nothing here buffers without bound.
 */
final class PeerLinks implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PeerLinks.class);
    private static final AttributeKey<String> PEER = AttributeKey.valueOf("ringcast.peer");
    /** Messages waiting for a link being opened; beyond this they are dropped (and recovered). */
    private static final int MAX_QUEUED_PER_PEER = 65536;

    private final ClusterSettings settings;
    private final EventLoop loop;
    private final BiConsumer<String, PeerMessage> onMessage;
    private final Map<String, Link> links = new HashMap<>();
    private final List<Channel> dirty = new ArrayList<>();
    private boolean flushScheduled;
    private Channel listener;

    PeerLinks(ClusterSettings settings, EventLoop loop, BiConsumer<String, PeerMessage> onMessage) {
        this.settings = settings;
        this.loop = loop;
        this.onMessage = onMessage;
    }

    /** Binds the peer port. Any thread, before the links are used. */
    void start() throws InterruptedException {
        ClusterSettings.Member self = settings.self();
        listener = new ServerBootstrap()
                .group(loop)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(PeerCodec.MAX_MESSAGE_BYTES, 0, 4, 0, 4),
                                new Receiver());
                    }
                })
                .bind(self.host(), self.peerPort()).sync().channel();
    }

    /** Sends {@code m} to {@code node}, opening the link if needed. Cluster thread only. */
    void send(String node, PeerMessage m) {
        assert loop.inEventLoop() : "peer links are used on the cluster thread only";
        Link link = links.computeIfAbsent(node, Link::new);
        if (link.channel != null && link.channel.isActive()) {
            write(link.channel, m);
            return;
        }
        if (link.queued.size() < MAX_QUEUED_PER_PEER) {
            link.queued.add(m);
        }
        if (link.connecting == null) {
            connect(link);
        }
    }

    /** Closes the link to a node that left the view; a later {@link #send} opens a new one. */
    void disconnect(String node) {
        Link link = links.remove(node);
        if (link != null) {
            link.queued.clear();
            if (link.channel != null) {
                link.channel.close();
            }
        }
    }

    private void connect(Link link) {
        ClusterSettings.Member member = settings.member(link.node);
        if (member == null) {
            link.queued.clear();
            return;
        }
        link.connecting = new Bootstrap()
                .group(loop)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 2000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new LengthFieldPrepender(4), new ChannelInboundHandlerAdapter() {
                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                // the peer died or left: its view change follows; what was lost is fetched again
                                log.debug("peer link to {} failed: {}", link.node, cause.toString());
                                ctx.close();
                            }
                        });
                    }
                })
                .connect(member.host(), member.peerPort());
        ChannelFuture f = link.connecting;
        f.addListener(done -> {
            if (links.get(link.node) != link) {
                f.channel().close(); // disconnected meanwhile
                return;
            }
            link.connecting = null;
            if (!done.isSuccess()) {
                log.debug("peer link to {} failed: {}", link.node, done.cause().toString());
                link.queued.clear();
                return;
            }
            link.channel = f.channel();
            write(link.channel, new PeerMessage.Hello(settings.nodeName()));
            while (!link.queued.isEmpty()) {
                write(link.channel, link.queued.poll());
            }
            link.channel.closeFuture().addListener(closed -> {
                if (link.channel == f.channel()) {
                    link.channel = null;
                }
            });
        });
    }

    private void write(Channel ch, PeerMessage m) {
        ch.write(PeerCodec.encode(ch.alloc(), m), ch.voidPromise());
        dirty.add(ch);
        if (!flushScheduled) {
            // one flush per channel for everything written in this turn of the loop
            flushScheduled = true;
            loop.execute(this::flushDirty);
        }
    }

    private void flushDirty() {
        flushScheduled = false;
        for (Channel ch : dirty) {
            ch.flush();
        }
        dirty.clear();
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().awaitUninterruptibly();
        }
        if (loop.inEventLoop()) {
            links.values().forEach(l -> {
                if (l.channel != null) {
                    l.channel.close();
                }
            });
        } else {
            loop.submit(() -> links.values().forEach(l -> {
                if (l.channel != null) {
                    l.channel.close();
                }
            })).awaitUninterruptibly();
        }
    }

    private static final class Link {
        final String node;
        final ArrayDeque<PeerMessage> queued = new ArrayDeque<>();
        Channel channel;
        ChannelFuture connecting;

        Link(String node) {
            this.node = node;
        }
    }

    /** Reads the incoming link of one peer: its {@code Hello}, then its messages. */
    private final class Receiver extends SimpleChannelInboundHandler<ByteBuf> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            PeerMessage m;
            try {
                m = PeerCodec.decode(frame);
            } catch (IllegalArgumentException e) {
                log.warn("peer link from {} sent a bad message ({}); closing it", ctx.channel().remoteAddress(),
                        e.getMessage());
                ctx.close();
                return;
            }
            String from = ctx.channel().attr(PEER).get();
            if (from == null) {
                if (!(m instanceof PeerMessage.Hello hello) || settings.member(hello.node()) == null) {
                    log.warn("peer link from {} did not start with the Hello of a configured member; closing it",
                            ctx.channel().remoteAddress());
                    ctx.close();
                    return;
                }
                ctx.channel().attr(PEER).set(hello.node());
                return;
            }
            onMessage.accept(from, m);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("peer link from {} failed: {}", ctx.channel().attr(PEER).get(), cause.toString());
            ctx.close();
        }
    }
}
