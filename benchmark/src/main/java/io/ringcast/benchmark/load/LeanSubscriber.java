package io.ringcast.benchmark.load;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.ReferenceCountUtil;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.Transport;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A subscriber without the Java client ({@code --subscriber-client lean}): one raw WebSocket
 * connection, made with Netty's client codec on the generator's shared event loop group, that
 * speaks the Ringcast protocol with the shared {@link WireCodec}: {@code HELLO}, then, once
 * {@code WELCOME} came and the run asks ({@link #subscribe}), one {@code SUBSCRIBE} to the run's
 * selector, with its view shape's options in a run with views ({@link LoadSpec#subscribeOptions}),
 * confirmed by {@code SUBSCRIBED}. It maps aliases to topic indices from the {@code TOPIC} messages, and for
 * every {@code UPDATE} and {@code SNAPSHOT} reads the value's header in place from the frame
 * ({@link ValueHeader}: binary or JSON) and hands it to its {@link SubscriberTally}, which makes the same checks
 * as for the Java client. Per update it allocates nothing: no copy of the value, no cache of the
 * last one, no boxing. That is the point: at a million deliveries a second the Java client's
 * copies, not the server, set the latency the generator measures.
 *
 * <p>It refuses what it cannot check honestly, and each refusal is a failure of the run
 * ({@link SubscriberTally#fail}): the subscriber stops, closes its connection, and the run is not
 * clean. That is a {@code DELTA} update (it keeps no values to apply one to: delta runs need
 * {@code --subscriber-client java}), a lost connection (it neither reconnects nor resumes), a fatal
 * {@code ERROR}, a malformed message, and a value whose header names another topic than its alias.
 * With a view: a reply without {@code VIEW} (a server that does not serve views), a message through
 * another view or none, and an {@code UNMATCHED} (the run's filters pass every value, so the server
 * dropped one it should have sent). A view's sequences are the topic's: with the run's view shapes
 * every update comes through, so its counters are checked as a plain subscriber's are.
 * A {@code CONFLATED} update is counted as the Java client's listener counts it. It does not offer
 * permessage-deflate, so the server never compresses what it sends it.
 *
 * <p>Threads: {@link #connect} from the run's thread, once; {@link #closeAsync} and {@link #close}
 * from any thread, any number of times; everything else on the channel's event loop, one call at a
 * time, as Netty calls a handler. The tally is written on that loop only.
 */
final class LeanSubscriber extends ChannelSubscriber implements MessageHandler, AutoCloseable {
    /** The id of the one subscription. */
    static final int SUBSCRIPTION_ID = 1;
    /**
     * The largest frame accepted, the Java client's default: the server gathers messages into frames
     * of up to 64 KiB, and a larger value (up to {@code --payload-bytes}' 1 MiB) travels alone.
     */
    static final int MAX_INBOUND_FRAME_BYTES = 16 << 20;
    /** The HTTP upgrade response is headers only. */
    static final int HANDSHAKE_RESPONSE_BYTES = 64 * 1024;
    /** TCP connect and WebSocket upgrade, each: a thousand of them at once take a while on two cores. */
    static final int HANDSHAKE_TIMEOUT_MS = 30_000;
    /** How long closing waits for the close frame to be written, and {@link #close} for the channel to close. */
    static final long CLOSE_TIMEOUT_MS = 1000;
    /** What {@link #fail} adds when the cause is a lost connection. */
    static final String NO_RESUME = "lean subscribers do not reconnect or resume (use --subscriber-client java to"
            + " ride out lost connections)";
    /** What {@link #fail} says of a {@code DELTA} update. */
    static final String NO_DELTAS = "lean subscribers keep no values and cannot apply deltas: use"
            + " --subscriber-client java for delta runs (features.deltas)";

    private final String clientName;
    private final LoadSpec spec;
    private final int runId;
    /** The run's count of lost connections, shared with its Java clients. */
    private final AtomicLong disconnects;
    private final AliasTable aliases;
    /** The subscription's options: its view shape, or none. */
    private final SubscribeOptions options;
    /** Each value's header, read in place. */
    private final ValueHeader header;
    /**
     * Completes on {@code WELCOME}, or fails with why the session could not start. The run waits for
     * every subscriber's before any subscribes: a subscription to {@code #} over 100,000 topics is
     * answered with 2 MB of {@code TOPIC}s, and a thousand of those read by the generator's two
     * event loops held later connections' {@code HELLO}s past the server's handshake timeout.
     */
    private final CompletableFuture<Void> welcomed = new CompletableFuture<>();

    // ------------------------------------------------------------------ event loop only
    /** A fatal {@code ERROR}'s name and reason: the close that follows is explained by it. */
    private String serverError;
    private int closeCode;
    private String closeReason;
    /** The subscription's view, once {@code VIEW} named it. */
    private boolean viewAnnounced;
    private int viewId;

    /**
     * @param index       the subscriber's index in the run, for its client name and messages
     * @param address     the {@code ws://} URL it connects to
     * @param spec        the run: its selector, and its topics' paths
     * @param runId       the run's id in every value's header
     * @param tally       where every value goes
     * @param disconnects counted up when the connection is lost
     */
    LeanSubscriber(int index, URI address, LoadSpec spec, int runId, SubscriberTally tally, AtomicLong disconnects) {
        super("lean subscriber " + index, address, tally);
        this.clientName = "load-sub-" + index;
        this.spec = spec;
        this.runId = runId;
        this.disconnects = disconnects;
        this.aliases = new AliasTable(spec.topics());
        this.options = spec.subscribeOptions(index);
        this.header = new ValueHeader(spec.valueFormat());
    }

    /**
     * Connects on {@code group} (with the socket channel of that group's transport) and starts a
     * session; the future completes on {@code WELCOME} and fails, with a {@link LoadException}, when
     * the connection, the upgrade or the session is refused. Once; then {@link #subscribe}.
     */
    CompletableFuture<Void> connect(EventLoopGroup group) {
        connecting(bootstrap(group)
                .handler(new Initializer(address, this))
                .connect(address.getHost(), address.getPort() > 0 ? address.getPort() : 80));
        return welcomed;
    }

    /** The session's start fails too: the run waits for it first. */
    @Override
    void failStart(LoadException why) {
        welcomed.completeExceptionally(why);
        super.failStart(why);
    }

    /**
     * A client bootstrap on {@code group}, with the socket channel of that group's transport (the
     * generator's {@code --transport}) and the options of every connection the generator makes on
     * its own, without a client library: lean subscribers, and Redis's ({@link RedisClients}).
     */
    static Bootstrap bootstrap(EventLoopGroup group) {
        return new Bootstrap()
                .group(group)
                .channel(Transport.of(group).socketChannelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, HANDSHAKE_TIMEOUT_MS);
    }

    /**
     * Sends the {@code SUBSCRIBE}, after {@link #connect}'s future completed; the future completes on
     * {@code SUBSCRIBED} and fails, with a {@link LoadException}, when the subscription is refused or
     * the connection lost. Any thread, once.
     */
    CompletableFuture<Void> subscribe() {
        assert welcomed.isDone() : "subscribe() before WELCOME";
        ctx.executor().execute(() -> {
            if (stopped) {
                return;
            }
            String selector = spec.selector();
            ByteBuf subscribe = ctx.alloc().ioBuffer(WireCodec.subscribeBytes(ByteBufUtil.utf8Bytes(selector))
                    + WireCodec.subscribeOptionsBytes(options));
            WireCodec.writeSubscribe(subscribe, SUBSCRIPTION_ID, selector, Map.of(), options);
            ctx.writeAndFlush(new BinaryWebSocketFrame(subscribe), ctx.voidPromise());
        });
        return subscribed;
    }

    /** Closes the connection and waits (at most {@link #CLOSE_TIMEOUT_MS} more) until it is closed. Any thread. */
    @Override
    public void close() {
        if (hasChannel()) {
            closeAsync().awaitUninterruptibly(2 * CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    // ------------------------------------------------------------------ Netty

    /**
     * The whole pipeline of a lean subscriber's connection, in order: {@code http-codec} and
     * {@code http-aggregator} for the upgrade (the handshaker then swaps them for its frame codec);
     * {@code websocket}: handshake, masking, answers the server's pings, drops pongs, passes close
     * frames on (so their code is known) and sends one when the channel closes; no extension
     * handler, so permessage-deflate is never offered; {@code websocket-aggregator}: joins a
     * fragmented message (the server sends none today); {@code ringcast}: the subscriber.
     */
    private static final class Initializer extends ChannelInitializer<SocketChannel> {
        private final URI address;
        private final LeanSubscriber subscriber;

        Initializer(URI address, LeanSubscriber subscriber) {
            this.address = address;
            this.subscriber = subscriber;
        }

        @Override
        protected void initChannel(SocketChannel ch) {
            WebSocketClientProtocolConfig webSocket = WebSocketClientProtocolConfig.newBuilder()
                    .webSocketUri(address)
                    .version(WebSocketVersion.V13)
                    .allowExtensions(false)
                    .maxFramePayloadLength(MAX_INBOUND_FRAME_BYTES)
                    .handleCloseFrames(false)
                    .sendCloseFrame(WebSocketCloseStatus.NORMAL_CLOSURE)
                    .forceCloseTimeoutMillis(CLOSE_TIMEOUT_MS)
                    .handshakeTimeoutMillis(HANDSHAKE_TIMEOUT_MS)
                    .withUTF8Validator(false) // binary frames only; a text frame fails the subscriber anyway
                    .generateOriginHeader(false) // a program, not a page
                    .build();
            ch.pipeline()
                    .addLast("http-codec", new HttpClientCodec())
                    .addLast("http-aggregator", new HttpObjectAggregator(HANDSHAKE_RESPONSE_BYTES))
                    .addLast("websocket", new WebSocketClientProtocolHandler(webSocket))
                    .addLast("websocket-aggregator", new WebSocketFrameAggregator(MAX_INBOUND_FRAME_BYTES))
                    .addLast("ringcast", subscriber);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
            ByteBuf hello = ctx.alloc().ioBuffer(WireCodec.helloBytes(clientName, Credentials.ANONYMOUS, 0));
            WireCodec.writeHello(hello, WireCodec.VERSION, clientName);
            ctx.writeAndFlush(new BinaryWebSocketFrame(hello), ctx.voidPromise());
        } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
            fail("the WebSocket upgrade to " + address + " took longer than " + HANDSHAKE_TIMEOUT_MS + " ms");
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    /** Every frame is released here, whatever it holds. */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof BinaryWebSocketFrame) {
                if (!stopped) {
                    // message by message: the server gathers many UPDATEs (and TOPICs) into one frame
                    WireCodec.decode(((BinaryWebSocketFrame) msg).content(), this);
                }
            } else if (msg instanceof CloseWebSocketFrame) {
                CloseWebSocketFrame close = (CloseWebSocketFrame) msg;
                closeCode = Math.max(0, close.statusCode());
                closeReason = close.reasonText();
                ctx.close(); // answered with a close frame on the way out; channelInactive says why
            } else if (msg instanceof TextWebSocketFrame) {
                fail("the server sent a text frame; Ringcast uses binary frames only");
            }
        } catch (ProtocolException e) {
            fail("bad message from the server: " + e.code() + ": " + e.reason());
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!stopped && !closedByRun) {
            disconnects.incrementAndGet();
            String why = serverError != null ? "the server ended the session: " + serverError
                    : closeCode > 0 ? "the server closed the connection with WebSocket close code " + closeCode
                            + (closeReason == null || closeReason.isEmpty() ? "" : " (" + closeReason + ")")
                    : "connection lost";
            fail("lost its connection to " + address + ": " + why + "; " + NO_RESUME);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(LoadException.describe(cause));
    }

    // ------------------------------------------------------------------ MessageHandler: what the server sends

    @Override
    public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs)
            throws ProtocolException {
        if (version != WireCodec.VERSION) {
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, "WELCOME for protocol version " + version
                    + ", this subscriber speaks " + WireCodec.VERSION);
        }
        welcomed.complete(null);
        // the server pings an idle session and Netty answers: a subscriber that only reads stays connected
    }

    @Override
    public void onTopic(int alias, String topicPath) {
        if (!stopped) {
            aliases.put(alias, spec.topicIndex(topicPath));
        }
    }

    @Override
    public void onSnapshot(int subscriptionId, int alias, long sequence, int flags, int viewId, ByteBuf frame,
                           int valueIndex, int valueLength) throws ProtocolException {
        long receivedNs = System.nanoTime();
        if (stopped || !throughOurView("SNAPSHOT", flags, viewId)) {
            return;
        }
        UpdateKind kind = (flags & UpdateFlags.GAP) == 0 ? UpdateKind.SNAPSHOT
                : (flags & UpdateFlags.NO_VALUE) != 0 ? UpdateKind.GAP_WITHOUT_VALUE : UpdateKind.SNAPSHOT_AFTER_GAP;
        value(topic(alias, "SNAPSHOT"), sequence, kind, frame, valueIndex, valueLength, receivedNs);
    }

    @Override
    public void onUpdate(int alias, long sequence, int flags, int viewId, ByteBuf frame, int valueIndex,
                         int valueLength) throws ProtocolException {
        long receivedNs = System.nanoTime();
        if (stopped || !throughOurView("UPDATE", flags, viewId)) {
            return;
        }
        int t = topic(alias, "UPDATE");
        if ((flags & UpdateFlags.DELTA) != 0 && t != AliasTable.NOT_A_RUN_TOPIC) {
            fail("UPDATE #" + sequence + " of " + spec.topicPath(t) + " is a delta; " + NO_DELTAS);
            return;
        }
        value(t, sequence, (flags & UpdateFlags.CONFLATED) != 0 ? UpdateKind.CONFLATED : UpdateKind.UPDATE, frame,
                valueIndex, valueLength, receivedNs);
    }

    @Override
    public void onSubscribed(int subscriptionId, int matchedTopics) {
        if (subscriptionId != SUBSCRIPTION_ID || stopped) {
            return;
        }
        if (options.makesView() && !viewAnnounced) {
            fail("the server confirmed the subscription with " + options + " without a VIEW: it does not serve"
                    + " views (issue 16)");
            return;
        }
        subscribed.complete(null);
    }

    /** {@code VIEW}: the reply to a subscription with a view starts with the view's id. */
    @Override
    public void onView(int subscriptionId, int viewId) {
        if (stopped) {
            return;
        }
        if (subscriptionId != SUBSCRIPTION_ID || !options.makesView()) {
            fail("VIEW " + Integer.toUnsignedString(viewId) + " for subscription " + subscriptionId
                    + ", which asked for no view");
            return;
        }
        this.viewAnnounced = true;
        this.viewId = viewId;
    }

    /** {@code UNMATCHED}: every value of the run passes its view shapes' filters, so none is due. */
    @Override
    public void onUnmatched(int viewId, int alias, long sequence) throws ProtocolException {
        if (stopped) {
            return;
        }
        int t = topic(alias, "UNMATCHED");
        fail(SubscriberTally.unmatchedMessage(t == AliasTable.NOT_A_RUN_TOPIC ? "alias " + alias : spec.topicPath(t),
                sequence));
    }

    /**
     * Whether a {@code SNAPSHOT} or {@code UPDATE} with these flags is for this subscriber's one
     * subscription: through its view when it has one, through none when it has none. Fails the
     * subscriber when not, for the session has no other subscription to give it to.
     */
    private boolean throughOurView(String message, int flags, int viewId) {
        boolean viewed = (flags & UpdateFlags.VIEWED) != 0;
        if (viewed == viewAnnounced && (!viewed || viewId == this.viewId)) {
            return true;
        }
        fail(message + (viewed ? " through view " + Integer.toUnsignedString(viewId) : " without a view")
                + ", but the subscription " + (viewAnnounced ? "has view " + Integer.toUnsignedString(this.viewId)
                : "has no view"));
        return false;
    }

    @Override
    public void onError(int code, int correlationId, String reason) {
        if (stopped) {
            return;
        }
        ErrorCode known = ErrorCode.of(code);
        String name = known == null ? "error " + code : known.name();
        if (known == null || known.fatal()) {
            // the server closes the connection after it (and a code unknown to this version is fatal then)
            serverError = serverError == null ? name + ": " + reason : serverError;
        } else if (correlationId == SUBSCRIPTION_ID) {
            fail("subscription to '" + spec.selector() + "'" + (options.isEmpty() ? "" : " with " + options)
                    + " refused: " + name + ": " + reason);
        }
    }

    @Override
    public void onPong(long nonce) {
        // never asked for: harmless
    }

    /** Hands a value of this run to the tally; anything else is foreign. No allocation. */
    private void value(int aliasTopic, long sequence, UpdateKind kind, ByteBuf frame, int valueIndex,
                       int valueLength, long receivedNs) {
        if (aliasTopic == AliasTable.NOT_A_RUN_TOPIC || !header.read(frame, valueIndex, valueLength)
                || header.runId != runId) {
            tally.foreignValue(); // an earlier run's snapshot, a topic of no run
            return;
        }
        int t = header.topicIndex;
        if (t != aliasTopic) {
            fail("a value whose header names topic index " + t + " arrived under the alias of "
                    + spec.topicPath(aliasTopic));
            return;
        }
        tally.onValue(t, header.counter, sequence, kind, receivedNs, header.intendedSendNs);
    }

    /** The topic index {@code alias} names on this connection ({@link AliasTable#NOT_A_RUN_TOPIC} for no run's). */
    private int topic(int alias, String message) throws ProtocolException {
        int t = aliases.topicIndex(alias);
        if (t == AliasTable.UNKNOWN) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, message + " names alias " + alias
                    + ", which no TOPIC announced on this connection");
        }
        return t;
    }
}
