package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.config.ServerConfig;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One connection to a node configured from YAML, without sockets: an {@link EmbeddedChannel}
 * carrying the node's real pipeline ({@link ServerChannelInitializer}) and what its handlers are
 * given, built of real parts (counters, rings nobody drains, one fan-out poller for the channel's
 * loop, a login). The sessions know only this channel's loop, so each connection has its own. Bytes go in as a
 * client sends them and come out as the server writes them; everything read is released.
 */
final class SocketlessConnection implements AutoCloseable {
    static final String UPGRADE = """
            GET /ws HTTP/1.1\r
            Host: localhost\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
            Sec-WebSocket-Version: 13\r
            """;
    /** RFC 6455's example answer to the key above. */
    static final String ACCEPT = "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

    final ServerCounters counters = new ServerCounters();
    final EmbeddedChannel channel;
    private final Login login;

    private SocketlessConnection(ServerConfig config) {
        channel = new EmbeddedChannel(); // registered first: the sessions must know its loop
        OutboundLimit outboundLimit = new OutboundLimit(config.limits().outboundQueueBytes(),
                config.limits().slowConsumerCloseGraceMs(), counters);
        EventLoop loop = channel.eventLoop();
        FanOutPoller poller = new FanOutPoller(0, loop, RingBuffer.createSingleProducer(FanOutEvent::new, 64),
                outboundLimit, FlushPolicy.END_OF_BATCH, 0, counters);
        try {
            login = new Login(new Authenticator(config.security()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        OpenSessions sessions = new OpenSessions(new DefaultChannelGroup(ImmediateEventExecutor.INSTANCE), counters,
                new EventLoop[]{loop}, new FanOutPoller[]{poller});
        RingBuffer<InboundEvent> inbound = RingBuffer.createMultiProducer(InboundEvent::new, 64);
        counters.readQueuesOf(sessions.channels(), inbound); // as the node does at start
        SessionServices services = new SessionServices(config.limits(), config.session().idleTimeoutMs(), sessions,
                new SequencerProxy(inbound),
                new SubscribeChecks(config.limits().maxSubscriptionsPerSession(),
                        config.limits().maxViewsPerSession(), config.history().length(),
                        new Views(config.limits().maxViews(), config.limits().maxViewsPerPrincipal()),
                        new SubscribeMemory(config.limits().subscribeBytesPerSession(),
                                config.limits().subscribeBytesPerPrincipal())), login, null,
                outboundLimit, counters);
        HttpEndpointHandler.NodeView endpoints = new HttpEndpointHandler.NodeView(counters,
                new ServerMetrics(counters, null), System.currentTimeMillis(), config.demo().enabled(), null,
                config.server().transport().resolve("key 'server.transport'"));
        channel.pipeline().addLast(new ServerChannelInitializer(config, null, counters, endpoints, services));
        channel.pipeline().fireChannelActive(); // the accept, for the handlers just installed
    }

    /** A connection to a node with this config (merged over the defaults, as a file would be). */
    static SocketlessConnection open(String yaml) {
        return new SocketlessConnection(ConfigLoader.fromYaml(yaml));
    }

    /** Sends text as the client would, e.g. an HTTP request. */
    void send(String ascii) {
        channel.writeInbound(Unpooled.copiedBuffer(ascii, StandardCharsets.UTF_8));
    }

    /** Sends raw bytes, e.g. a WebSocket frame. */
    void send(byte[] bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
    }

    /** Everything the server wrote since the last call, as bytes; the buffers are released. */
    byte[] writtenBytes() {
        channel.runPendingTasks();
        ByteBuf all = Unpooled.buffer();
        for (Object o; (o = channel.readOutbound()) != null; ReferenceCountUtil.release(o)) {
            if (o instanceof ByteBuf b) {
                all.writeBytes(b);
            }
            // else: what no encoder took, which a socket refuses (unsupported message type). Netty's
            // WebSocket handler writes a close frame when a connection closes before any upgrade.
        }
        byte[] out = new byte[all.readableBytes()];
        all.readBytes(out);
        return out;
    }

    /** The same as text (HTTP responses). */
    String written() {
        return new String(writtenBytes(), StandardCharsets.UTF_8);
    }

    /** Sends a complete request and returns the whole response. */
    HttpAnswer request(String request) {
        send(request);
        return HttpAnswer.parse(written());
    }

    /** A WebSocket frame as a client must send it: masked (with a zero key, so the payload reads as is). */
    static byte[] clientFrame(int opcode, byte[] payload) {
        if (payload.length > 125) {
            throw new IllegalArgumentException("short frames only");
        }
        byte[] frame = new byte[6 + payload.length];
        frame[0] = (byte) (0x80 | opcode);
        frame[1] = (byte) (0x80 | payload.length);
        System.arraycopy(payload, 0, frame, 6, payload.length);
        return frame;
    }

    @Override
    public void close() {
        channel.finishAndReleaseAll();
        login.close();
    }

    /** A parsed HTTP response: status line, headers (names lower-cased), body. */
    record HttpAnswer(String statusLine, Map<String, String> headers, String body) {
        static HttpAnswer parse(String text) {
            int end = text.indexOf("\r\n\r\n");
            if (end < 0) {
                throw new AssertionError("no complete HTTP response in: " + text);
            }
            String[] lines = text.substring(0, end).split("\r\n");
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        lines[i].substring(colon + 1).trim());
            }
            return new HttpAnswer(lines[0], headers, text.substring(end + 4));
        }

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }
}
