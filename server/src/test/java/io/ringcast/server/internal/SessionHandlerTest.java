package io.ringcast.server.internal;

import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.FlushPolicy;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SessionHandler} on embedded channels with virtual time, without sockets: the real handler,
 * requests, checks, login and {@link SequencerProxy} on a real four-slot inbound ring whose
 * sequencer is a sequence the test moves by hand. What the server writes is decoded with the wire
 * codec and released.
 */
class SessionHandlerTest {
    private static final int RING_SLOTS = 4;
    private static final String DEFAULTS = "limits: {maxConnections: 10}";

    private final RingBuffer<InboundEvent> ring = RingBuffer.createMultiProducer(InboundEvent::new, RING_SLOTS);
    /** Plays the sequencer: the ring has room only for what this sequence has passed. */
    private final Sequence consumed = new Sequence();
    private final SequencerProxy sequencer = new SequencerProxy(ring);
    private final ServerCounters counters = new ServerCounters();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final List<Login> logins = new ArrayList<>();
    private SessionHandler lastHandler;

    SessionHandlerTest() {
        ring.addGatingSequences(consumed);
    }

    @AfterEach
    void closeEverything() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        logins.forEach(Login::close);
        sequencer.releaseUnconsumed();
    }

    // ------------------------------------------------------------------ the node around the handlers

    /** {@code n} connections of one node configured by {@code yaml}, each with its own loop and poller. */
    private List<EmbeddedChannel> connect(String yaml, int n) throws Exception {
        ServerConfig config = ConfigLoader.fromYaml(yaml);
        OutboundLimit outboundLimit = new OutboundLimit(config.limits().outboundQueueBytes(),
                config.limits().slowConsumerCloseGraceMs(), counters);
        RingBuffer<FanOutEvent> fanOut = RingBuffer.createSingleProducer(FanOutEvent::new, 8);
        List<EmbeddedChannel> made = new ArrayList<>();
        EventLoop[] loops = new EventLoop[n];
        FanOutPoller[] pollers = new FanOutPoller[n];
        for (int i = 0; i < n; i++) {
            EmbeddedChannel ch = new EmbeddedChannel();
            ch.freezeTime(); // only advance() moves the clock: a slow machine cannot fire a timer early
            made.add(ch);
            loops[i] = ch.eventLoop();
            pollers[i] = new FanOutPoller(i, loops[i], fanOut, outboundLimit, FlushPolicy.END_OF_BATCH, 0, counters);
        }
        OpenSessions sessions = new OpenSessions(new DefaultChannelGroup(GlobalEventExecutor.INSTANCE), counters,
                loops, pollers);
        Login login = new Login(new Authenticator(config.security()));
        logins.add(login);
        SessionServices services = new SessionServices(config.limits(), config.session().idleTimeoutMs(), sessions,
                sequencer, new SubscribeChecks(config.limits().maxSubscriptionsPerSession(),
                        config.limits().maxViewsPerSession(), config.history().length(),
                        new Views(config.limits().maxViews(), config.limits().maxViewsPerPrincipal()),
                        new SubscribeMemory(config.limits().subscribeBytesPerSession(),
                                config.limits().subscribeBytesPerPrincipal())),
                login, null, outboundLimit, counters);
        for (EmbeddedChannel ch : made) {
            lastHandler = new SessionHandler(services);
            ch.pipeline().addLast("session", lastHandler);
        }
        channels.addAll(made);
        return made;
    }

    private EmbeddedChannel connect(String yaml) throws Exception {
        return connect(yaml, 1).get(0);
    }

    /** A connection that sent HELLO and read its WELCOME. */
    private EmbeddedChannel welcomed(String yaml) throws Exception {
        EmbeddedChannel ch = connect(yaml);
        ch.writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION, "test")));
        assertThat(written(ch)).containsExactly("WELCOME s-" + Long.toHexString(counters.sessions()));
        return ch;
    }

    private static BinaryWebSocketFrame frame(Consumer<ByteBuf> messages) {
        ByteBuf b = Unpooled.buffer();
        messages.accept(b);
        return new BinaryWebSocketFrame(b);
    }

    private static void publish(ByteBuf b, int correlationId, String path, String value) {
        WireCodec.writePublish(b, correlationId, path, value.getBytes(StandardCharsets.UTF_8));
    }

    private static void advance(EmbeddedChannel ch, long nanos) {
        ch.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
        ch.runScheduledPendingTasks();
    }

    /** The event at {@code slot}, which must be published. */
    private InboundEvent published(long slot) {
        assertThat(ring.isAvailable(slot)).as("slot " + slot + " published").isTrue();
        return ring.get(slot);
    }

    /** What the server wrote so far, one line per message or control frame; every buffer released. */
    private static List<String> written(EmbeddedChannel ch) throws ProtocolException {
        List<String> out = new ArrayList<>();
        for (Object m; (m = ch.readOutbound()) != null; ReferenceCountUtil.release(m)) {
            if (m instanceof ByteBuf frame) {
                WireCodec.decode(payload(frame), new Recorder(out));
            } else if (m instanceof CloseWebSocketFrame close) {
                out.add("CLOSE " + close.statusCode());
            } else if (m instanceof PingWebSocketFrame) {
                out.add("PING");
            } else {
                out.add(m.getClass().getSimpleName());
            }
        }
        return out;
    }

    /** The payload of a complete server frame ({@link OutboundFrame}): after its 2-, 4- or 10-byte header. */
    private static ByteBuf payload(ByteBuf frame) {
        int length = frame.getUnsignedByte(frame.readerIndex() + 1);
        int header = length < 126 ? 2 : length == 126 ? 4 : 10;
        return frame.slice(frame.readerIndex() + header, frame.readableBytes() - header);
    }

    private static final class Recorder implements MessageHandler {
        private final List<String> out;

        Recorder(List<String> out) {
            this.out = out;
        }

        @Override
        public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
            out.add("WELCOME " + sessionId);
        }

        @Override
        public void onError(int code, int correlationId, String reason) {
            out.add("ERROR " + ErrorCode.of(code) + " " + correlationId + " " + reason);
        }

        @Override
        public void onPong(long nonce) {
            out.add("PONG " + nonce);
        }
    }

    // ------------------------------------------------------------------ handshake

    @Test
    void helloIsAnsweredWithWelcomeAndTheSessionIsCounted() throws Exception {
        EmbeddedChannel ch = connect(DEFAULTS);

        ch.writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION, "test")));

        assertThat(written(ch)).containsExactly("WELCOME s-1");
        assertThat(counters.sessions()).isEqualTo(1);
        assertThat(ch.config().isAutoRead()).isTrue();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void publishBeforeHelloIsHandshakeRequiredAndClaimsNoSlot() throws Exception {
        EmbeddedChannel ch = connect(DEFAULTS);

        ch.writeInbound(frame(b -> publish(b, 1, "demo/a", "1")));

        assertThat(written(ch)).containsExactly("ERROR HANDSHAKE_REQUIRED 0 PUBLISH before HELLO: the first message "
                + "of a session must be HELLO", "CLOSE 1008");
        assertThat(ch.isOpen()).isFalse();
        assertThat(published(0).kind).as("the only command: the session's close").isEqualTo(InboundEvent.SESSION_CLOSED);
        assertThat(ring.getCursor()).isZero();
    }

    @Test
    void secondHelloIsHandshakeRequired() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION, "again")));

        assertThat(written(ch)).containsExactly("ERROR HANDSHAKE_REQUIRED 0 second HELLO on session s-1", "CLOSE 1008");
    }

    @Test
    void helloOfAnotherProtocolVersionIsUnsupportedVersion() throws Exception {
        EmbeddedChannel ch = connect(DEFAULTS);

        ch.writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION + 1, "future")));

        assertThat(written(ch).get(0)).isEqualTo("ERROR UNSUPPORTED_VERSION 0 client speaks protocol version "
                + (WireCodec.VERSION + 1) + "; this server speaks version " + WireCodec.VERSION);
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void anonymousHelloRefusedWithAuthenticationFailedWhenAnonymousRolesIsEmpty() throws Exception {
        EmbeddedChannel ch = connect("security: {anonymousRoles: []}");

        ch.writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION, "test")));

        assertThat(written(ch).get(0)).isEqualTo("ERROR AUTHENTICATION_FAILED 0 authentication failed: anonymous "
                + "sessions are not allowed here (security.anonymousRoles is empty): send a password or a token");
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void noHelloWithinTheHandshakeTimeoutIsHandshakeTimeout() throws Exception {
        EmbeddedChannel ch = connect("limits: {handshakeTimeoutMs: 500}");
        ch.pipeline().fireUserEventTriggered(
                new WebSocketServerProtocolHandler.HandshakeComplete("/ws", EmptyHttpHeaders.INSTANCE, null));

        advance(ch, TimeUnit.MILLISECONDS.toNanos(499));
        assertThat(ch.isOpen()).isTrue();
        advance(ch, TimeUnit.MILLISECONDS.toNanos(1));

        assertThat(written(ch)).containsExactly("ERROR HANDSHAKE_TIMEOUT 0 no HELLO within "
                + "limits.handshakeTimeoutMs = 500 ms", "CLOSE " + ErrorCode.HANDSHAKE_TIMEOUT.closeCode());
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void welcomedSessionIsNotTimedOut() throws Exception {
        EmbeddedChannel ch = welcomed("limits: {handshakeTimeoutMs: 500}");

        advance(ch, TimeUnit.SECONDS.toNanos(10));

        assertThat(written(ch)).isEmpty();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void sessionPastMaxConnectionsIsTooManyConnections() throws Exception {
        List<EmbeddedChannel> two = connect("limits: {maxConnections: 1}", 2);
        two.get(0).writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION, "first")));
        assertThat(written(two.get(0))).containsExactly("WELCOME s-1");

        two.get(1).writeInbound(frame(b -> WireCodec.writeHello(b, WireCodec.VERSION, "second")));

        assertThat(written(two.get(1)).get(0)).isEqualTo("ERROR TOO_MANY_CONNECTIONS 0 the server has "
                + "limits.maxConnections = 1 sessions; try another address or later");
        assertThat(two.get(1).isOpen()).isFalse();
        assertThat(counters.sessions()).as("the refused one uncounted when it closed").isEqualTo(1);
    }

    // ------------------------------------------------------------------ bad frames

    @Test
    void truncatedMessageIsMalformedFrameThenCloseAndTheSequencerForgetsTheSession() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {0x70, 0})));

        assertThat(written(ch)).containsExactly("ERROR MALFORMED_FRAME 0 truncated message header at offset 0: 2 bytes "
                + "left, a header needs " + WireCodec.HEADER_BYTES, "CLOSE 1002");
        assertThat(ch.isOpen()).isFalse();
        assertThat(published(0).kind).isEqualTo(InboundEvent.SESSION_CLOSED);
        assertThat(counters.sessions()).isZero();
    }

    @Test
    void textFrameIsTextFrameNotSupported() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(new TextWebSocketFrame("{\"hello\":1}"));

        assertThat(written(ch)).containsExactly("ERROR TEXT_FRAME_NOT_SUPPORTED 0 text frame received; Ringcast "
                + "messages travel in binary frames", "CLOSE " + ErrorCode.TEXT_FRAME_NOT_SUPPORTED.closeCode());
    }

    @Test
    void frameWithReservedBitsAndNoExtensionIsMalformedFrame() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(new BinaryWebSocketFrame(true, 4, Unpooled.wrappedBuffer(new byte[] {1})));

        assertThat(written(ch).get(0)).isEqualTo("ERROR MALFORMED_FRAME 0 frame with reserved bits 0x40 set, but no "
                + "extension that defines them was negotiated on this connection");
    }

    @Test
    void emptyFrameIsMalformedFrame() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(new BinaryWebSocketFrame(Unpooled.EMPTY_BUFFER));

        assertThat(written(ch).get(0)).isEqualTo("ERROR MALFORMED_FRAME 0 empty frame: a frame holds at least one "
                + "message");
    }

    @Test
    void oversizedFrameReportedByTheDecoderIsFrameTooLarge() throws Exception {
        EmbeddedChannel ch = welcomed("limits: {maxFrameBytes: 4096}");

        ch.pipeline().fireExceptionCaught(new TooLongFrameException("too long"));

        assertThat(written(ch)).containsExactly("ERROR FRAME_TOO_LARGE 0 frame larger than limits.maxFrameBytes = 4096 "
                + "(too long)", "CLOSE " + ErrorCode.FRAME_TOO_LARGE.closeCode());
    }

    @Test
    void unexpectedFailureIsInternalError() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.pipeline().fireExceptionCaught(new IllegalStateException("bug"));

        assertThat(written(ch).get(0)).isEqualTo("ERROR INTERNAL_ERROR 0 internal error: "
                + "java.lang.IllegalStateException: bug");
    }

    // ------------------------------------------------------------------ requests

    @Test
    void publishFillsTheSlotClaimedForIt() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> publish(b, 7, "demo/a", "1.0842")));

        InboundEvent e = published(0);
        assertThat(e.kind).isEqualTo(InboundEvent.PUBLISH);
        assertThat(e.id).isEqualTo(7);
        assertThat(e.path).isEqualTo("demo/a");
        assertThat(e.segments).containsExactly("demo", "a");
        assertThat(e.value.toString(StandardCharsets.UTF_8)).isEqualTo("1.0842");
        assertThat(e.republish).isFalse();
        assertThat(written(ch)).as("acked by the poller, not here").isEmpty();
    }

    @Test
    void republishIsMarkedForTheLedger() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> WireCodec.writeRepublish(b, 8, "demo/a", new byte[] {1})));

        assertThat(published(0).republish).isTrue();
    }

    @Test
    void refusedPublishAnswersItsErrorAndLeavesItsClaimedSlotANoop() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS); // the default anonymous role publishes under demo/ only

        ch.writeInbound(frame(b -> publish(b, 9, "fx/EURUSD", "1")));

        assertThat(written(ch)).containsExactly("ERROR PERMISSION_DENIED 9 publish to 'fx/EURUSD' refused: anonymous "
                + "may not publish there");
        assertThat(published(0).kind).isEqualTo(InboundEvent.NOOP);
        assertThat(ch.isOpen()).as("a refusal is for the one request").isTrue();
        assertThat(counters.protocolErrors()).isEqualTo(1);
    }

    @Test
    void publishToAnInvalidPathIsRefusedWithThePathsError() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> publish(b, 4, "demo//a", "1")));

        List<String> replies = written(ch);
        assertThat(replies).hasSize(1);
        assertThat(replies.get(0)).startsWith("ERROR INVALID_PATH 4 ");
        assertThat(published(0).kind).isEqualTo(InboundEvent.NOOP);
    }

    @Test
    void subscribeAndUnsubscribeFillTheirSlotsAndCountTheSubscription() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> WireCodec.writeSubscribe(b, 5, "demo/#", Map.of("demo/a", 3L))));
        assertThat(counters.subscriptions()).isEqualTo(1);
        ch.writeInbound(frame(b -> WireCodec.writeUnsubscribe(b, 5)));

        InboundEvent subscribe = published(0);
        assertThat(subscribe.kind).isEqualTo(InboundEvent.SUBSCRIBE);
        assertThat(subscribe.id).isEqualTo(5);
        assertThat(subscribe.selector.toString()).isEqualTo("demo/#");
        assertThat(subscribe.resume).containsEntry("demo/a", 3L);
        InboundEvent unsubscribe = published(1);
        assertThat(unsubscribe.kind).isEqualTo(InboundEvent.UNSUBSCRIBE);
        assertThat(unsubscribe.id).isEqualTo(5);
        assertThat(counters.subscriptions()).isZero();
        assertThat(written(ch)).isEmpty();
    }

    @Test
    void unsubscribeOfNoOpenSubscriptionIsANoop() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> WireCodec.writeUnsubscribe(b, 99)));

        assertThat(published(0).kind).isEqualTo(InboundEvent.NOOP);
        assertThat(written(ch)).isEmpty();
    }

    @Test
    void subscriptionWithADuplicateIdIsRefusedAndTheFirstStaysOpen() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> {
            WireCodec.writeSubscribe(b, 5, "demo/#", Map.of());
            WireCodec.writeSubscribe(b, 5, "demo/a", Map.of());
        }));

        assertThat(written(ch)).containsExactly("ERROR DUPLICATE_SUBSCRIPTION_ID 5 subscription id 5 is already open "
                + "on this session");
        assertThat(published(1).kind).isEqualTo(InboundEvent.NOOP);
        assertThat(counters.subscriptions()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ subscribe options (issue 16, refused until views are served)

    /** A {@code SUBSCRIBE} of {@code id} to {@code demo/#} whose options block is these bytes, as a client could send. */
    private static void subscribeWithBlock(ByteBuf b, int id, String blockHex) {
        int start = b.writerIndex();
        WireCodec.writeSubscribe(b, id, "demo/#", Map.of());
        byte[] block = HexFormat.of().parseHex(blockHex.replace(" ", ""));
        b.writeBytes(block);
        b.setInt(start + 1, b.getInt(start + 1) + block.length);
    }

    private static void subscribe(ByteBuf b, int id, String selector, SubscribeOptions options) {
        WireCodec.writeSubscribe(b, id, selector, Map.of(), options);
    }

    /** The session answered the refusal and nothing else, opened nothing, and still serves. */
    private void refusedAndNothingOpened(EmbeddedChannel ch, String error) throws Exception {
        ch.writeInbound(frame(b -> WireCodec.writePing(b, 9)));
        assertThat(written(ch)).containsExactly(error, "PONG 9");
        assertThat(published(0).kind).as("the claimed slot, published empty").isEqualTo(InboundEvent.NOOP);
        assertThat(counters.subscriptions()).isZero();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void optionsTheCodecRefusesAreInvalidOptionsForThatSubscriptionAlone() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> subscribeWithBlock(b, 7, "01 090000")));

        refusedAndNothingOpened(ch, "ERROR INVALID_OPTIONS 7 option kind 9 is unknown (1 maxRate, 2 fields, 3 filter, "
                + "4 rewind, 5 rewindSince, 6 incarnations)");
    }

    @Test
    void fieldsThatDoNotParseAreInvalidOptionsWithTheProjectionsMessage() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> subscribe(b, 7, "demo/#", SubscribeOptions.builder().fields("bid", "bid").build())));

        refusedAndNothingOpened(ch, "ERROR INVALID_OPTIONS 7 fields: path 'bid' is named twice");
    }

    @Test
    void aFilterThatDoesNotParseIsInvalidOptionsWithTheFiltersMessage() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> subscribe(b, 7, "demo/#",
                SubscribeOptions.builder().maxRate(2).filter("spread 0.0005").build())));

        refusedAndNothingOpened(ch, "ERROR INVALID_OPTIONS 7 filter: expected a comparison operator after 'spread' "
                + "at column 8");
    }

    @Test
    void rewindBeyondHistoryLengthIsInvalidOptions() throws Exception {
        EmbeddedChannel ch = welcomed("limits: {maxConnections: 10}\nhistory: {length: 8}");

        ch.writeInbound(frame(b -> subscribe(b, 7, "demo/#", SubscribeOptions.builder().rewind(9).build())));

        refusedAndNothingOpened(ch, "ERROR INVALID_OPTIONS 7 rewind: 9 updates, more than the 8 a topic's history "
                + "keeps (history.length)");
    }

    @Test
    void everyOptionGoesToTheSequencerWithTheSubscriptionAndRewindAloneMakesNoView() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);
        SubscribeOptions all = SubscribeOptions.builder().maxRate(4).fields("bid", "ask").filter("spread < 0.0005")
                .rewind(8).rewindSince(0).build();
        SubscribeOptions rewindOnly = SubscribeOptions.builder().rewind(8).build();

        ch.writeInbound(frame(b -> {
            subscribe(b, 7, "demo/#", all);
            subscribe(b, 8, "demo/#", rewindOnly);
        }));

        assertThat(written(ch)).isEmpty();
        assertThat(published(0).options).isEqualTo(all);
        assertThat(published(0).view).isNotNull();
        assertThat(published(1).options).isEqualTo(rewindOnly);
        assertThat(published(1).view).isNull();
        assertThat(counters.subscriptions()).isEqualTo(2);
    }

    @Test
    void subscriptionsWithTheSameViewOptionsShareOneViewWhateverTheOrderOfTheirFields() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> {
            subscribe(b, 7, "demo/#", SubscribeOptions.builder().maxRate(4).fields("bid", "ask").filter("bid > 1").build());
            subscribe(b, 8, "demo/a", SubscribeOptions.builder().filter("bid > 1").fields("ask", "bid").maxRate(4).build());
            subscribe(b, 9, "demo/a", SubscribeOptions.builder().fields("ask", "bid").build());
            WireCodec.writeSubscribe(b, 10, "demo/a", Map.of());
        }));

        assertThat(written(ch)).isEmpty();
        View first = published(0).view;
        assertThat(first).isNotNull();
        assertThat(published(1).view).isSameAs(first);
        assertThat(published(2).view).isNotNull().isNotSameAs(first);
        assertThat(published(2).view.id).isNotEqualTo(first.id);
        assertThat(published(3).view).as("a plain subscription has no view").isNull();
        assertThat(counters.subscriptions()).isEqualTo(4);
    }

    @Test
    void aSessionIsRefusedAViewBeyondMaxViewsPerSessionButNotOneItHas() throws Exception {
        EmbeddedChannel ch = welcomed("limits: {maxConnections: 10, maxViewsPerSession: 2}");
        SubscribeOptions bid = SubscribeOptions.builder().fields("bid").build();
        SubscribeOptions ask = SubscribeOptions.builder().fields("ask").build();

        ch.writeInbound(frame(b -> {
            subscribe(b, 1, "demo/#", bid);
            subscribe(b, 2, "demo/#", ask);
            subscribe(b, 3, "demo/a", bid);
            subscribe(b, 4, "demo/#", SubscribeOptions.builder().fields("spread").build());
        }));

        assertThat(written(ch)).containsExactly("ERROR TOO_MANY_SUBSCRIPTIONS 4 session already has 2 distinct views, "
                + "the limit limits.maxViewsPerSession; subscribe with the options of one of them, or without maxRate,"
                + " fields and filter");
        assertThat(published(2).view).as("a view it has").isSameAs(published(0).view);
        assertThat(counters.subscriptions()).isEqualTo(3);
    }

    @Test
    void unsubscribingFreesTheSessionsViewForAnother() throws Exception {
        EmbeddedChannel ch = welcomed("limits: {maxConnections: 10, maxViewsPerSession: 1}");

        ch.writeInbound(frame(b -> {
            subscribe(b, 1, "demo/#", SubscribeOptions.builder().fields("bid").build());
            WireCodec.writeUnsubscribe(b, 1);
            subscribe(b, 2, "demo/#", SubscribeOptions.builder().fields("ask").build());
        }));

        assertThat(written(ch)).isEmpty();
        assertThat(published(2).view).as("the session's one view, after the unsubscribe").isNotNull();
        assertThat(counters.subscriptions()).isEqualTo(1);
    }

    @Test
    void aSubscriptionThatWouldMakeAViewBeyondMaxViewsIsRefusedAndAnExistingViewIsStillServed() throws Exception {
        EmbeddedChannel ch = welcomed("limits: {maxConnections: 10, maxViews: 1}");

        ch.writeInbound(frame(b -> {
            subscribe(b, 7, "demo/#", SubscribeOptions.builder().fields("bid").build());
            subscribe(b, 8, "demo/#", SubscribeOptions.builder().fields("ask").build());
            subscribe(b, 9, "demo/a", SubscribeOptions.builder().fields("bid").build());
        }));

        assertThat(written(ch)).containsExactly("ERROR TOO_MANY_SUBSCRIPTIONS 8 subscription to 'demo/#' refused: the "
                + "server already serves 1 distinct views (limits.maxViews); subscribe with the options of an existing "
                + "view, or without maxRate, fields and filter");
        assertThat(published(0).view).isNotNull();
        assertThat(published(1).kind).as("the refused one's slot").isEqualTo(InboundEvent.NOOP);
        assertThat(published(2).view).as("the existing view").isSameAs(published(0).view);
        assertThat(counters.subscriptions()).isEqualTo(2);
    }

    @Test
    void faultsOfTheSelectorTheOptionsAndTheLadderAreEachToldWithTheirOwnCode() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);
        SubscribeOptions valid = SubscribeOptions.builder().rewind(1).build();

        ch.writeInbound(frame(b -> {
            WireCodec.writeSubscribe(b, 5, "demo/#", Map.of());
            subscribe(b, 6, "demo//a", valid);
            subscribe(b, 5, "demo/a", valid);
            subscribe(b, 7, "demo/a", SubscribeOptions.builder().filter("x ~ 1").build());
        }));

        List<String> replies = written(ch);
        assertThat(replies).hasSize(3);
        assertThat(replies.get(0)).startsWith("ERROR INVALID_SELECTOR 6 ");
        assertThat(replies.get(1)).isEqualTo("ERROR DUPLICATE_SUBSCRIPTION_ID 5 subscription id 5 is already open on "
                + "this session");
        assertThat(replies.get(2)).isEqualTo("ERROR INVALID_OPTIONS 7 filter: expected a comparison operator after 'x' "
                + "at column 3");
        assertThat(counters.subscriptions()).isEqualTo(1);
    }

    @Test
    void aMalformedOptionsBlockIsFatal() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> subscribeWithBlock(b, 7, "01 01000400000fa0 ca")));

        assertThat(written(ch)).containsExactly("ERROR MALFORMED_FRAME 0 truncated or malformed SUBSCRIBE message: "
                + "1 bytes after the last of 1 options: the options block ends the message", "CLOSE 1002");
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void aSubscribeWithRefusableOptionsBeforeHelloIsHandshakeRequired() throws Exception {
        EmbeddedChannel ch = connect(DEFAULTS);

        ch.writeInbound(frame(b -> subscribeWithBlock(b, 7, "00")));

        assertThat(written(ch)).containsExactly("ERROR HANDSHAKE_REQUIRED 0 SUBSCRIBE before HELLO: the first message "
                + "of a session must be HELLO", "CLOSE 1008");
    }

    @Test
    void pingsInOneFrameArePongedInOneGatheredFrame() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> {
            WireCodec.writePing(b, 1);
            WireCodec.writePing(b, 2);
        }));

        assertThat(ch.outboundMessages()).as("one frame").hasSize(1);
        assertThat(written(ch)).containsExactly("PONG 1", "PONG 2");
        assertThat(counters.clientPings()).isEqualTo(2);
        assertThat(ring.getCursor()).as("a ping needs no slot").isEqualTo(-1);
    }

    // ------------------------------------------------------------------ backpressure

    @Test
    void readingPausesWhenTheInboundRingIsFullAndResumesInOrderWhenItDrains() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        ch.writeInbound(frame(b -> {
            for (int i = 0; i < RING_SLOTS + 2; i++) {
                publish(b, i, "demo/a", "v" + i);
            }
        }));
        assertThat(ring.getCursor()).as("every slot claimed").isEqualTo(RING_SLOTS - 1);
        assertThat(ch.config().isAutoRead()).as("paused").isFalse();
        ch.writeInbound(frame(b -> publish(b, 100, "demo/a", "later")));
        advance(ch, TimeUnit.MICROSECONDS.toNanos(100));
        assertThat(ring.getCursor()).as("still full: nothing more decoded").isEqualTo(RING_SLOTS - 1);
        assertThat(ch.config().isAutoRead()).isFalse();

        consumed.set(RING_SLOTS - 1); // the sequencer took all four
        advance(ch, TimeUnit.MICROSECONDS.toNanos(100));

        assertThat(ring.getCursor()).isEqualTo(RING_SLOTS + 2);
        assertThat(published(RING_SLOTS).id).isEqualTo(RING_SLOTS);
        assertThat(published(RING_SLOTS + 1).id).isEqualTo(RING_SLOTS + 1);
        assertThat(published(RING_SLOTS + 2).id).as("the frame read while paused, after the rest").isEqualTo(100);
        assertThat(ch.config().isAutoRead()).as("resumed").isTrue();
        assertThat(written(ch)).isEmpty();
    }

    @Test
    void sessionClosedIsRetriedUntilTheRingHasRoom() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);
        ch.writeInbound(frame(b -> {
            for (int i = 0; i < RING_SLOTS; i++) {
                publish(b, i, "demo/a", "v");
            }
        }));

        ch.pipeline().close(); // not ch.close(), which cancels the embedded loop's scheduled tasks
        ch.runPendingTasks();
        assertThat(counters.sessions()).as("closed").isZero();
        assertThat(ring.getCursor()).as("full: the close waits").isEqualTo(RING_SLOTS - 1);
        consumed.set(0);
        advance(ch, TimeUnit.MICROSECONDS.toNanos(100));

        InboundEvent e = published(RING_SLOTS);
        assertThat(e.kind).isEqualTo(InboundEvent.SESSION_CLOSED);
        assertThat(ring.getCursor()).as("sent once").isEqualTo(RING_SLOTS);
    }

    // ------------------------------------------------------------------ liveness and shutdown

    @Test
    void idleSessionIsPingedAtHalfTheTimeoutAndClosedWithIdleTimeoutAtTheWhole() throws Exception {
        EmbeddedChannel ch = welcomed("session: {idleTimeoutMs: 2000}");

        ch.pipeline().fireUserEventTriggered(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT);
        assertThat(written(ch)).containsExactly("PING");
        assertThat(counters.idlePings()).isEqualTo(1);
        ch.pipeline().fireUserEventTriggered(IdleStateEvent.READER_IDLE_STATE_EVENT);

        assertThat(written(ch)).containsExactly("ERROR IDLE_TIMEOUT 0 nothing received for session.idleTimeoutMs = "
                + "2000 ms, not even a pong to the server's ping", "CLOSE " + ErrorCode.IDLE_TIMEOUT.closeCode());
    }

    @Test
    void shutdownTellsTheClientServerShutdownAndCloses() throws Exception {
        EmbeddedChannel ch = welcomed(DEFAULTS);

        lastHandler.shutdown();

        assertThat(written(ch)).containsExactly("ERROR SERVER_SHUTDOWN 0 the server is stopping", "CLOSE 1001");
        assertThat(ch.isOpen()).isFalse();
        assertThat(counters.protocolErrors()).as("not the client's error").isZero();
    }
}
