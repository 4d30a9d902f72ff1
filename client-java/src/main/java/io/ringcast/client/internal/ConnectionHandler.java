package io.ringcast.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.util.concurrent.TimeUnit;

/**
 * The last stage of one connection's pipeline: sends {@code HELLO} once the WebSocket handshake
 * is done, decodes every inbound binary frame with {@link WireCodec} into the
 * {@link ClientSession}, keeps the connection's alias map, watches liveness, and remembers why
 * the connection ended (fatal {@code ERROR}, close frame, local failure) for the
 * {@link Connector}.
 *
 * <p>Thread contract: one instance per connection; every method runs on the channel's event loop,
 * the client's one loop. Not sharable.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter implements MessageHandler {
    /** Extra silence allowed beyond the server's idle timeout before the connection counts as dead. */
    static final long READ_GRACE_MS = 5000;
    /** The smallest frame limit a server may state; anything less cannot carry a useful publish. */
    static final int MIN_SERVER_FRAME_BYTES = 64;
    static final String IDLE_HANDLER_NAME = "idle";

    final String address;
    private final ClientSession session;
    private final ConnectionObserver observer;
    private final String clientName;
    /** Sent at the end of HELLO; never logged. */
    private final Credentials credentials;
    /** alias -> topic, for this connection only. */
    private final IntObjectHashMap<TopicState> aliases = new IntObjectHashMap<>();
    /** Set by the {@link Connector} when it connects; null in tests that drive the handler directly. */
    ChannelFuture connectFuture;
    private ChannelHandlerContext ctx;

    private boolean welcomed;
    /** The WebSocket upgrade completed (the server answered the HTTP request with 101). */
    private boolean upgraded;
    private String sessionId;
    /** The connection is ending: inbound messages are ignored from now on. */
    private boolean closing;
    private boolean closedByClient;
    private ErrorCode fatalCode;
    private String fatalReason;
    private int unknownErrorCode;
    private String unknownErrorReason;
    private int closeCode;
    private String closeReason;
    private String localReason;
    private Throwable localCause;
    private long readerIdleMs;
    /**
     * The last frame whose messages held this connection's I/O thread at least {@link #STALL_NANOS}
     * (listeners that block: printing to a full pipe, say): how long, and when it ended. 0: none.
     */
    private long lastStallNanos;
    private long lastStallEndNanos;

    /**
     * How long a frame's listeners must hold the I/O thread to count as a stall. A server closes a
     * session that falls behind by {@code limits.outboundQueueBytes} once
     * {@code limits.slowConsumerCloseGraceMs} (5 s by default) pass, and its {@code SLOW_CONSUMER}
     * then waits behind the updates this side is not reading: a client that stalls longer never
     * receives it, only the end of the connection. So a connection lost within
     * {@link #STALL_MEMORY_NANOS} of a stall is said to be most likely that.
     */
    static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long STALL_MEMORY_NANOS = TimeUnit.SECONDS.toNanos(30);

    ConnectionHandler(ClientSession session, ConnectionObserver observer, String address, String clientName) {
        this(session, observer, address, clientName, Credentials.ANONYMOUS);
    }

    ConnectionHandler(ClientSession session, ConnectionObserver observer, String address, String clientName,
                      Credentials credentials) {
        this.credentials = credentials;
        this.session = session;
        this.observer = observer;
        this.address = address;
        this.clientName = clientName;
    }

    // ------------------------------------------------------------------ for the Connector

    boolean welcomed() {
        return welcomed;
    }

    String sessionId() {
        return sessionId;
    }

    /** Whether the server ended the session with a fatal {@code ERROR} (or one of a code unknown to this version). */
    boolean endedByFatalError() {
        return fatalCode != null || unknownErrorCode != 0;
    }

    /** The WebSocket close code: from the close frame, else the one the protocol gives the fatal error, else 0. */
    int closeCode() {
        if (closeCode > 0) {
            return closeCode;
        }
        if (closedByClient) {
            return 1000;
        }
        return fatalCode != null ? fatalCode.closeCode() : 0;
    }

    /** Why the connection ended (or failed to start); null when the client closed it. */
    RingcastException disconnectReason() {
        if (closedByClient) {
            return null;
        }
        if (fatalCode != null) {
            return new RingcastException("server ended the session: " + fatalCode + ": " + fatalReason, fatalCode,
                    closeCode());
        }
        if (unknownErrorCode != 0) {
            return new RingcastException("server ended the session after error " + unknownErrorCode + ": "
                    + unknownErrorReason, null, closeCode());
        }
        if (localReason != null) {
            return new RingcastException(localReason, null, closeCode, localCause);
        }
        if (connectFuture != null && connectFuture.cause() != null) {
            return new RingcastException(describe(connectFuture.cause()), connectFuture.cause());
        }
        if (closeCode > 0) {
            return new RingcastException("server closed the connection with WebSocket close code " + closeCode
                    + (closeReason == null || closeReason.isEmpty() ? "" : " (" + closeReason + ")"), null, closeCode);
        }
        if (!upgraded && address.startsWith("ws://")) {
            // a TLS port closes a plain HTTP request without an answer
            return new RingcastException("connection closed before the WebSocket upgrade: no HTTP answer from "
                    + address + " (if that port takes TLS, use wss://)");
        }
        if (welcomed && lastStallNanos > 0 && System.nanoTime() - lastStallEndNanos < STALL_MEMORY_NANOS) {
            return new RingcastException("connection lost, most likely closed by the server as a slow consumer"
                    + " (SLOW_CONSUMER, which could not reach this client behind the updates it did not read): the"
                    + " listeners held this client's I/O thread for " + TimeUnit.NANOSECONDS.toMillis(lastStallNanos)
                    + " ms, reading nothing meanwhile, and a server closes a session that falls"
                    + " limits.outboundQueueBytes behind once limits.slowConsumerCloseGraceMs (5 s by default) pass;"
                    + " return from listeners sooner, or let the server conflate");
        }
        return new RingcastException(welcomed ? "connection lost" : "connection closed before the session started");
    }

    /** Closes the connection for the client's {@code close()}; completes once the socket is closed. */
    ChannelFuture closeByClient() {
        closedByClient = true;
        closing = true;
        return channel().close();
    }

    /** Ends the connection for a reason found on this side; the first reason wins. */
    void fail(String reason, Throwable cause) {
        if (closing) {
            return;
        }
        closing = true;
        localReason = reason;
        localCause = cause;
        channel().close();
    }

    private Channel channel() {
        return ctx != null ? ctx.channel() : connectFuture.channel();
    }

    // ------------------------------------------------------------------ Netty

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt == ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
            upgraded = true;
            sendHello(ctx);
        } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
            fail("WebSocket handshake timed out", null);
        } else if (evt instanceof IdleStateEvent) {
            IdleStateEvent idle = (IdleStateEvent) evt;
            if (idle.state() == IdleState.WRITER_IDLE) {
                session.ping();
            } else if (idle.state() == IdleState.READER_IDLE) {
                fail("nothing received from the server for " + readerIdleMs + " ms", null);
            }
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof BinaryWebSocketFrame) {
                if (!closing) {
                    long start = System.nanoTime();
                    WireCodec.decode(((BinaryWebSocketFrame) msg).content(), this);
                    session.flush(); // publishes the frame's acks let out of the window
                    long end = System.nanoTime();
                    if (end - start >= STALL_NANOS) {
                        lastStallNanos = end - start;
                        lastStallEndNanos = end;
                    }
                }
            } else if (msg instanceof CloseWebSocketFrame) {
                CloseWebSocketFrame close = (CloseWebSocketFrame) msg;
                closeCode = Math.max(0, close.statusCode());
                closeReason = close.reasonText();
                closing = true;
                ctx.close(); // answers with a close frame on the way out
            } else if (msg instanceof TextWebSocketFrame) {
                fail("the server sent a text frame; Ringcast uses binary frames only", null);
            }
            // other frames: pings are answered and pongs dropped upstream, continuations aggregated
        } catch (ProtocolException e) {
            fail("bad message from the server: " + e.code() + ": " + e.reason(), null);
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            observer.onWritable();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(describe(cause), cause);
    }

    private void sendHello(ChannelHandlerContext ctx) {
        long connection = session.nextConnection();
        ByteBuf buf = ctx.alloc().ioBuffer(WireCodec.helloBytes(clientName, credentials, session.publisherId(),
                connection));
        WireCodec.writeHello(buf, WireCodec.VERSION, clientName, credentials, session.publisherId(), connection);
        ctx.writeAndFlush(new BinaryWebSocketFrame(buf), ctx.voidPromise());
    }

    static String describe(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException) {
                return "the server's TLS certificate is not trusted (" + t.getMessage() + "): give the client its "
                        + "certificate or its CA's as a PEM file (RingcastClient.Builder.trustedCertificates; the "
                        + "CLI's --trust)";
            }
        }
        String message = cause.getMessage();
        return message == null || message.isEmpty() ? cause.getClass().getSimpleName()
                : cause.getClass().getSimpleName() + ": " + message;
    }

    // ------------------------------------------------------------------ MessageHandler (inbound messages)

    @Override
    public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs)
            throws ProtocolException {
        if (closing) {
            return;
        }
        if (welcomed) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "a second WELCOME on one session");
        }
        if (version != WireCodec.VERSION) {
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, "WELCOME for protocol version " + version
                    + ", the client speaks " + WireCodec.VERSION);
        }
        int frameBytes = maxFrameBytes < 0 ? Integer.MAX_VALUE : maxFrameBytes; // a u32 beyond 2^31-1
        if (frameBytes < MIN_SERVER_FRAME_BYTES) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "WELCOME states maxFrameBytes " + frameBytes
                    + ", below the least usable " + MIN_SERVER_FRAME_BYTES);
        }
        welcomed = true;
        this.sessionId = sessionId;
        Channel ch = ctx.channel();
        if (idleTimeoutMs != 0) {
            long idleMs = idleTimeoutMs & 0xFFFFFFFFL;
            readerIdleMs = idleMs + READ_GRACE_MS;
            ctx.pipeline().addBefore(ctx.name(), IDLE_HANDLER_NAME, new IdleStateHandler(readerIdleMs,
                    Math.max(1, idleMs / 3), 0, TimeUnit.MILLISECONDS));
        }
        // room for about two full frames before a drain yields to the socket
        int high = (int) Math.min(Integer.MAX_VALUE, Math.max(64 * 1024, 2L * frameBytes));
        int low = Math.max(32 * 1024, high / 4);
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(low, high));
        session.attach(ch, frameBytes);
        observer.onWelcome(this);
    }

    @Override
    public void onTopic(int alias, String topicPath, int incarnation) throws ProtocolException {
        if (!closing) {
            requireWelcome("TOPIC");
            aliases.put(alias, session.topic(topicPath, incarnation));
        }
    }

    /**
     * {@code TOPIC_REMOVED}: the alias is forgotten with the topic. Harmless for an alias this
     * connection does not know, or no longer does: the server may send it once per view of the
     * topic, and the first told every subscription already.
     */
    @Override
    public void onTopicRemoved(int alias, long lastSequence) throws ProtocolException {
        if (!closing) {
            requireWelcome("TOPIC_REMOVED");
            TopicState t = aliases.remove(alias);
            if (t != null) {
                session.onTopicRemoved(t, lastSequence);
            }
        }
    }

    @Override
    public void onRemoved(int correlationId, int removedTopics) throws ProtocolException {
        if (!closing) {
            requireWelcome("REMOVED");
            session.onRemoved(correlationId, removedTopics);
        }
    }

    @Override
    public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                           int valueIndex, int valueLength) throws ProtocolException {
        if (closing) {
            return;
        }
        TopicState t = topic(alias, "SNAPSHOT");
        if ((flags & UpdateFlags.VIEWED) != 0) {
            session.onViewedSnapshot(subscriptionId, Integer.toUnsignedLong(viewId), t, sequence, flags, frame,
                    valueIndex, valueLength);
        } else {
            session.onSnapshot(subscriptionId, t, sequence, flags, frame, valueIndex, valueLength);
        }
    }

    @Override
    public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                         int valueLength) throws ProtocolException {
        if (closing) {
            return;
        }
        TopicState t = topic(alias, "UPDATE");
        if ((flags & UpdateFlags.VIEWED) != 0) {
            session.onViewedUpdate(Integer.toUnsignedLong(viewId), t, sequence, flags, frame, valueIndex, valueLength);
        } else {
            session.onUpdate(t, sequence, flags, frame, valueIndex, valueLength);
        }
    }

    @Override
    public void onView(int subscriptionId, int viewId) throws ProtocolException {
        if (!closing) {
            requireWelcome("VIEW");
            session.onView(subscriptionId, Integer.toUnsignedLong(viewId));
        }
    }

    @Override
    public void onUnmatched(int viewId, int alias, long sequence) throws ProtocolException {
        if (!closing) {
            session.onUnmatched(Integer.toUnsignedLong(viewId), topic(alias, "UNMATCHED"), sequence);
        }
    }

    @Override
    public void onPublishAck(int correlationId, long sequence) throws ProtocolException {
        if (!closing) {
            requireWelcome("PUBLISH_ACK");
            session.onPublishAck(correlationId, sequence);
        }
    }

    @Override
    public void onSubscribed(int subscriptionId, int matchedTopics) throws ProtocolException {
        if (!closing) {
            requireWelcome("SUBSCRIBED");
            session.onSubscribed(subscriptionId);
        }
    }

    @Override
    public void onError(int code, int correlationId, String reason) {
        if (closing) {
            return;
        }
        ErrorCode known = ErrorCode.of(code);
        if (known != null && known.fatal()) {
            if (fatalCode == null) { // the first fatal error is the reason; the server closes after it
                fatalCode = known;
                fatalReason = reason;
            }
        } else if (welcomed && correlationId != 0 && session.onRequestError(known, code, correlationId, reason)) {
            return;
        } else if (known == null && unknownErrorCode == 0) {
            // fatal if the connection then closes (protocol: "Errors")
            unknownErrorCode = code;
            unknownErrorReason = reason;
        }
        // a known non-fatal error naming nothing pending (e.g. a publish already failed locally): nothing to do
    }

    @Override
    public void onPong(long nonce) {
        // receiving it is the point: the read side is alive
    }

    private TopicState topic(int alias, String message) throws ProtocolException {
        requireWelcome(message);
        TopicState t = aliases.get(alias);
        if (t == null) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, message + " names alias " + alias
                    + ", which no TOPIC announced on this connection");
        }
        return t;
    }

    private void requireWelcome(String message) throws ProtocolException {
        if (!welcomed) {
            throw new ProtocolException(ErrorCode.HANDSHAKE_REQUIRED, message + " before WELCOME");
        }
    }
}
