package io.ringcast.server.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.WireCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * {@code POST /api/publish} and {@code POST /api/publish/batch} on one connection: publishes from a
 * backend without a WebSocket session (docs/http-api.md). Each request is a short session of its
 * own. Its credentials ({@code Authorization: Bearer} a JWT, {@code Basic} a principal's password,
 * or none) are checked as a {@code HELLO}'s are, by the {@link Login}; a keep-alive connection that
 * sends the header that was granted before is not checked again. Its publishes become the
 * protocol's {@code PUBLISH} messages ({@code REPUBLISH} with {@code "retry"}) and are decoded by a
 * {@link SessionRequests}, as a WebSocket's are: they climb the same checks and reach the sequencer,
 * or a cluster's log, the same way. What the node then writes to the session, {@code PUBLISH_ACK}
 * or {@code ERROR} per publish, passes this stage on its way out (the session writes through the
 * endpoint handler's context, behind this one), is read here instead of sent, and once every
 * publish has its answer the request gets one JSON response.
 *
 * <p>Reading stops while a request is answered, so responses leave in the order of the requests.
 * The publish rate ({@code limits.publishRatePerSession}) is counted per connection. Added to the
 * pipeline by {@link HttpEndpointHandler} at a connection's first publish, so WebSocket sessions'
 * writes never pass it.
 *
 * <p>Thread contract: the channel's event loop only, like every Netty handler.
 */
final class HttpPublisher extends ChannelDuplexHandler {
    static final String NAME = "http-publish";
    /**
     * A backstop: every publish is answered (the sequencer at once, a cluster within
     * {@code cluster.replicationTimeoutMs}); a request still unanswered after this gets a 500.
     */
    static final long ANSWER_DEADLINE_MS = 60_000;
    private static final Logger log = LoggerFactory.getLogger(HttpPublisher.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHALLENGE = "Bearer realm=\"ringcast\", Basic realm=\"ringcast\", charset=\"UTF-8\"";

    private final SessionServices node;
    private final HttpEndpointHandler endpoint;
    /** The endpoint handler's context: the sessions write through it, and the responses go out through it. */
    private final ChannelHandlerContext endpointCtx;
    /** The connection's rate bucket, shared by the sessions of its requests. */
    private final PublishChecks publishChecks;
    /** The {@code Authorization} header last granted on this connection (null: none sent), and what it granted. */
    private String grantedAuthorization;
    private Permissions granted;
    /** The request being answered, or null. */
    private Exchange exchange;
    /**
     * Requests read behind the one being answered (pipelined, or decoded from the same read before
     * reading stopped), passed on in order once it is: at most what one read brought.
     */
    private final ArrayDeque<Object> held = new ArrayDeque<>(2);
    private ChannelHandlerContext ctx;

    HttpPublisher(SessionServices node, HttpEndpointHandler endpoint, ChannelHandlerContext endpointCtx) {
        this.node = node;
        this.endpoint = endpoint;
        this.endpointCtx = endpointCtx;
        this.publishChecks = new PublishChecks(node.limits(), node.clusterRoute() != null, System.nanoTime());
    }

    /**
     * Answers {@code request}, a {@code POST} to {@code /api/publish} ({@code batch} false) or
     * {@code /api/publish/batch}: now when it is refused before any publish, else once every
     * publish is answered. Its content is read before this returns.
     */
    void publish(FullHttpRequest request, boolean batch) {
        exchange(request, batch, null);
    }

    /**
     * Answers {@code request}, a {@code POST} to {@code /api/remove}: the topics its selector
     * matches that the credentials may publish to are removed, as by a session's {@code REMOVE}.
     */
    void remove(FullHttpRequest request) {
        exchange(request, false, "");
    }

    /** A publish, a batch, or a removal ({@code removal} not null). */
    private void exchange(FullHttpRequest request, boolean batch, String removal) {
        assert endpointCtx.executor().inEventLoop();
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        node.counters().receivedBytes.add(request.content().readableBytes());
        HttpPublishBody body;
        Credentials credentials;
        String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        try {
            byte[] content = ByteBufUtil.getBytes(request.content());
            if (removal != null) {
                removal = HttpPublishBody.parseRemove(content);
                body = new HttpPublishBody(0, false, List.of());
            } else {
                body = HttpPublishBody.parse(content, batch);
            }
        } catch (HttpPublishBody.Malformed e) {
            endpoint.answer(endpointCtx, keepAlive, problem(HttpResponseStatus.BAD_REQUEST, "BAD_REQUEST", e.getMessage()));
            return;
        }
        try {
            credentials = credentials(authorization);
        } catch (HttpPublishBody.Malformed e) {
            node.counters().error(ErrorCode.AUTHENTICATION_FAILED);
            endpoint.answer(endpointCtx, keepAlive, unauthorized(e.getMessage()));
            return;
        }
        String client = Objects.requireNonNullElse(request.headers().get(HttpHeaderNames.USER_AGENT), "");
        Exchange x = new Exchange(body, batch, removal, keepAlive, authorization, client);
        exchange = x;
        endpointCtx.channel().config().setAutoRead(false); // the next request waits for this one's answer
        x.deadline = endpointCtx.executor().schedule(() -> x.noAnswer(), ANSWER_DEADLINE_MS, TimeUnit.MILLISECONDS);
        if (granted != null && Objects.equals(authorization, grantedAuthorization)) {
            x.granted(granted);
        } else {
            node.login().check(credentials, endpointCtx.executor(), x);
        }
    }

    /** The credentials of an {@code Authorization} header: none, {@code Bearer <JWT>} or {@code Basic <name:password>}. */
    static Credentials credentials(String authorization) throws HttpPublishBody.Malformed {
        if (authorization == null || authorization.isBlank()) {
            return Credentials.ANONYMOUS;
        }
        String value = authorization.strip();
        int space = value.indexOf(' ');
        String scheme = (space < 0 ? value : value.substring(0, space)).toLowerCase(Locale.ROOT);
        String rest = space < 0 ? "" : value.substring(space + 1).strip();
        if (scheme.equals("bearer") && !rest.isEmpty()) {
            return Credentials.token(rest);
        }
        if (scheme.equals("basic")) {
            String pair;
            try {
                pair = new String(Base64.getDecoder().decode(rest), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new HttpPublishBody.Malformed("Authorization: Basic takes base64 of name:password, and this is"
                        + " not base64");
            }
            int colon = pair.indexOf(':');
            if (colon < 1) {
                throw new HttpPublishBody.Malformed("Authorization: Basic takes base64 of name:password, and this has"
                        + (colon < 0 ? " no ':'" : " no name"));
            }
            return Credentials.password(pair.substring(0, colon), pair.substring(colon + 1));
        }
        throw new HttpPublishBody.Malformed("the Authorization header takes \"Bearer <JWT>\" or \"Basic <base64 of"
                + " name:password>\", not \"" + (scheme.length() > 20 ? scheme.substring(0, 20) + "..." : scheme) + "\"");
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (exchange != null || !held.isEmpty()) {
            held.addLast(msg);
            ctx.channel().config().setAutoRead(false); // whatever turned it on: one read's worth at most waits here
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    /** Passes on the requests held while one was answered, until one of them is a publish again. */
    private void passHeld() {
        while (exchange == null && !held.isEmpty() && ctx.channel().isActive()) {
            ctx.fireChannelRead(held.pollFirst());
        }
    }

    /**
     * What the session of the request being answered writes: its answers, read here. Anything
     * else (the endpoint handler's responses) goes on.
     */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf frame) {
            try {
                if (exchange != null && exchange.session != null) {
                    exchange.read(OutboundFrame.payload(frame));
                }
                // else a late frame of a session already answered: it has no reader
            } finally {
                frame.release();
                promise.trySuccess();
            }
        } else if (msg instanceof WebSocketFrame closing) {
            // a session's fatal error ends with a close frame (Session#closeWithError): the connection ends
            ReferenceCountUtil.release(closing);
            promise.tryFailure(new ClosedChannelException());
        } else {
            ctx.write(msg, promise);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        abandon();
        super.channelInactive(ctx);
    }

    /** The connection was upgraded to a WebSocket ({@link SessionHandler}), or closed: nothing more is answered here. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        abandon();
    }

    private void abandon() {
        if (exchange != null) {
            exchange.end();
            exchange = null;
        }
        for (Object msg; (msg = held.pollFirst()) != null; ) {
            ReferenceCountUtil.release(msg);
        }
    }

    /** One request, from its login to its response. */
    private final class Exchange implements Login.Outcome, MessageHandler {
        final HttpPublishBody body;
        final boolean batch;
        /** A removal's selector ({@code POST /api/remove}), answered as the one request of the exchange; or null. */
        final String removal;
        final boolean keepAlive;
        final String authorization;
        final String client;
        /** Per publish, in the request's order: the sequence it got, or 0 while unanswered or refused. */
        final long[] sequences;
        /** Per publish: answered, acked or refused ({@code sequences} cannot tell: a removal may count 0). */
        final boolean[] done;
        final ErrorCode[] refusals;
        final String[] reasons;
        final Map<Integer, Integer> byCorrelationId = new HashMap<>();
        int unanswered;
        ScheduledFuture<?> deadline;
        Session session;
        SessionReplies replies;
        SessionRequests requests;
        /** The publishes as protocol messages, until every one was decoded. */
        ByteBuf messages;
        /** The session failed: the connection closes after the response. */
        boolean fatal;

        Exchange(HttpPublishBody body, boolean batch, String removal, boolean keepAlive, String authorization,
                 String client) {
            this.body = body;
            this.batch = batch;
            this.removal = removal;
            this.keepAlive = keepAlive;
            this.authorization = authorization;
            this.client = client;
            int n = removal != null ? 1 : body.publishes().size();
            if (removal != null) {
                byCorrelationId.put(REMOVAL_ID, 0);
            }
            this.sequences = new long[n];
            this.done = new boolean[n];
            this.refusals = new ErrorCode[n];
            this.reasons = new String[n];
            this.unanswered = n;
            for (int i = 0; i < body.publishes().size(); i++) {
                byCorrelationId.put(body.publishes().get(i).correlationId(), i);
            }
        }

        @Override
        public void refused(Credentials credentials, String reason) {
            if (exchange != this) {
                return;
            }
            log.info("HTTP publish from {} (client '{}'): login with {} refused: {}", endpointCtx.channel().remoteAddress(),
                    client, credentials, reason);
            node.counters().error(ErrorCode.AUTHENTICATION_FAILED);
            respond(unauthorized("authentication failed: " + reason));
        }

        @Override
        public void granted(Permissions permissions) {
            if (exchange != this || !endpointCtx.channel().isActive()) {
                return;
            }
            grantedAuthorization = authorization;
            granted = permissions;
            Session s = node.sessions().newSession(endpointCtx, false);
            s.clientName = "HTTP " + client;
            s.publisherId = body.publisherId();
            int open = node.sessions().add(s);
            session = s;
            if (open > node.limits().maxConnections()) {
                refuseAll(ErrorCode.TOO_MANY_CONNECTIONS, "the server has limits.maxConnections = "
                        + node.limits().maxConnections() + " sessions; try another address or later");
                return;
            }
            if (!node.sessions().admit(permissions.who())) {
                refuseAll(ErrorCode.TOO_MANY_CONNECTIONS, permissions.who() + " has " + node.sessions().maxPerPrincipal()
                        + " sessions open, its share of the server (limits.maxConnectionsPerPrincipal); try later");
                return;
            }
            s.permissions = permissions;
            s.welcomed = true;
            // reading is stopped already: nothing to hold back when the channel fills
            replies = new SessionReplies(s, node.limits().maxFrameBytes(), node.outboundLimit(), node.counters(), () -> { });
            requests = new SessionRequests(node, s, replies, publishChecks);
            messages = encode(body, removal);
            feed();
        }

        /** Decodes the publishes into the session's requests, waiting while the ring (or the cluster's queue) is full. */
        void feed() {
            if (exchange != this || messages == null) {
                return;
            }
            try {
                // an answer read meanwhile may end the exchange (a refusal of all): then stop
                while (exchange == this && messages.isReadable()) {
                    if (!requests.decodeNext(messages)) {
                        replies.flush();
                        endpointCtx.executor().schedule(this::feed, SequencerProxy.RING_FULL_RETRY_US, TimeUnit.MICROSECONDS);
                        return;
                    }
                }
            } catch (ProtocolException e) {
                log.error("HTTP publish: the session refused messages made here", e);
                refuseAll(ErrorCode.INTERNAL_ERROR, "internal error: " + e.getMessage());
                return;
            }
            if (exchange == this) {
                messages.release();
                messages = null;
                replies.flush(); // the checks' refusals are answers too
            }
        }

        /** One frame's messages the node wrote to the session. */
        void read(ByteBuf payload) {
            try {
                while (payload.isReadable()) {
                    WireCodec.decodeOne(payload, this);
                }
            } catch (ProtocolException e) {
                log.error("HTTP publish: a frame the node wrote to the session does not decode", e);
                refuseAll(ErrorCode.INTERNAL_ERROR, "internal error: " + e.getMessage());
            }
        }

        @Override
        public void onPublishAck(int correlationId, long sequence) {
            Integer i = byCorrelationId.get(correlationId);
            if (i != null && !done[i]) {
                sequences[i] = sequence;
                answered(i);
            }
        }

        @Override
        public void onRemoved(int correlationId, int removedTopics) {
            Integer i = byCorrelationId.get(correlationId);
            if (i != null && !done[i]) {
                sequences[i] = removedTopics;
                answered(i);
            }
        }

        @Override
        public void onTopicRemoved(int alias, long lastSequence) {
            // an HTTP session subscribes to nothing: never sent one
        }

        @Override
        public void onError(int code, int correlationId, String reason) {
            ErrorCode error = Objects.requireNonNullElse(ErrorCode.of(code), ErrorCode.INTERNAL_ERROR);
            if (correlationId == 0 || error.fatal()) {
                fatal = true;
                refuseAll(error, reason);
                return;
            }
            Integer i = byCorrelationId.get(correlationId);
            if (i != null && !done[i]) {
                refusals[i] = error;
                reasons[i] = reason;
                answered(i);
            }
        }

        /** Every publish still unanswered gets {@code code}, and the request its response. */
        void refuseAll(ErrorCode code, String reason) {
            for (int i = 0; i < sequences.length; i++) {
                if (!done[i]) {
                    refusals[i] = code;
                    reasons[i] = reason;
                    done[i] = true;
                }
            }
            unanswered = 0;
            respondIfAllAnswered();
        }

        /** The backstop: some publish had no answer within {@link #ANSWER_DEADLINE_MS}. */
        void noAnswer() {
            if (exchange != this) {
                return;
            }
            log.warn("HTTP publish from {}: {} of {} publishes unanswered after {} ms", endpointCtx.channel().remoteAddress(),
                    unanswered, sequences.length, ANSWER_DEADLINE_MS);
            refuseAll(ErrorCode.INTERNAL_ERROR, "no answer from the node within " + ANSWER_DEADLINE_MS + " ms; whether"
                    + " it was applied is unknown (send it again with \"retry\": true to learn)");
        }

        /** Publish {@code i} has its answer. */
        private void answered(int i) {
            done[i] = true;
            unanswered--;
            respondIfAllAnswered();
        }

        private void respondIfAllAnswered() {
            if (unanswered == 0 && exchange == this) {
                respond(results());
            }
        }

        private FullHttpResponse results() {
            HttpResponseStatus status = HttpResponseStatus.OK;
            int acked = 0;
            ObjectNode root;
            if (removal != null) {
                root = JSON.createObjectNode().put("selector", removal);
                if (refusals[0] == null) {
                    root.put("removed", sequences[0]);
                } else {
                    root.set("error", error(refusals[0].name(), reasons[0]));
                    status = statusOf(refusals[0]);
                }
            } else if (batch) {
                root = JSON.createObjectNode();
                ArrayNode results = JSON.createArrayNode();
                for (int i = 0; i < sequences.length; i++) {
                    results.add(result(i));
                    if (refusals[i] == null) {
                        acked++;
                    } else if (status == HttpResponseStatus.OK) {
                        status = statusOf(refusals[i]);
                    }
                }
                root.put("acked", acked);
                root.set("results", results);
            } else {
                root = result(0);
                status = refusals[0] == null ? HttpResponseStatus.OK : statusOf(refusals[0]);
            }
            return json(status, root);
        }

        private ObjectNode result(int i) {
            HttpPublishBody.Publish p = body.publishes().get(i);
            ObjectNode r = JSON.createObjectNode().put("topic", p.topic()).put("correlationId", p.correlationId());
            if (refusals[i] == null) {
                r.put("sequence", sequences[i]);
            } else {
                r.set("error", error(refusals[i].name(), reasons[i]));
            }
            return r;
        }

        /** Sends {@code response}, ends the request's session and reads the next request. */
        private void respond(FullHttpResponse response) {
            end();
            exchange = null;
            if (fatal) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
            endpointCtx.channel().config().setAutoRead(true);
            endpoint.answer(endpointCtx, keepAlive && !fatal, response);
            if (!held.isEmpty()) {
                endpointCtx.executor().execute(HttpPublisher.this::passHeld); // after this response's write
            }
        }

        /** Gives back what the request held: its deadline, its messages, its session. */
        void end() {
            deadline.cancel(false);
            if (messages != null) {
                messages.release();
                messages = null;
            }
            if (session != null) {
                session.closing = true; // its late answers, if any, are not written
                if (requests != null) {
                    requests.closed();
                    replies.release();
                }
                node.sessions().remove(session);
                if (requests != null) { // the sequencer may have heard of it
                    node.sequencer().sessionClosed(session);
                }
                log.debug("HTTP publish session {} (client '{}') ended", session, session.clientName);
            }
        }
    }

    /** The correlation id of an HTTP removal's {@code REMOVE}: the one request of its session. */
    private static final int REMOVAL_ID = 1;

    private static ByteBuf encode(HttpPublishBody body, String removal) {
        if (removal != null) {
            ByteBuf out = Unpooled.buffer(WireCodec.removeBytes(ByteBufUtil.utf8Bytes(removal)));
            WireCodec.writeRemove(out, REMOVAL_ID, removal);
            return out;
        }
        int bytes = 0;
        for (HttpPublishBody.Publish p : body.publishes()) {
            bytes += WireCodec.publishBytes(ByteBufUtil.utf8Bytes(p.topic()), p.value().length);
        }
        ByteBuf out = Unpooled.buffer(bytes);
        for (HttpPublishBody.Publish p : body.publishes()) {
            if (body.retry()) {
                WireCodec.writeRepublish(out, p.correlationId(), p.topic(), p.value());
            } else {
                WireCodec.writePublish(out, p.correlationId(), p.topic(), p.value());
            }
        }
        return out;
    }

    /** The HTTP status of a publish refused with {@code code}. */
    static HttpResponseStatus statusOf(ErrorCode code) {
        return switch (code) {
            case AUTHENTICATION_FAILED -> HttpResponseStatus.UNAUTHORIZED;
            case PERMISSION_DENIED -> HttpResponseStatus.FORBIDDEN;
            case INVALID_PATH, INVALID_SELECTOR -> HttpResponseStatus.BAD_REQUEST;
            case VALUE_TOO_LARGE -> HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE;
            case REPUBLISH_CONFLICT, PUBLISH_OUTCOME_UNKNOWN -> HttpResponseStatus.CONFLICT;
            case PUBLISH_RATE_EXCEEDED, TOO_MANY_CONNECTIONS -> HttpResponseStatus.TOO_MANY_REQUESTS;
            case TOO_MANY_TOPICS -> HttpResponseStatus.INSUFFICIENT_STORAGE;
            case NO_MAJORITY, SERVER_SHUTDOWN -> HttpResponseStatus.SERVICE_UNAVAILABLE;
            case REPLICATION_TIMEOUT -> HttpResponseStatus.GATEWAY_TIMEOUT;
            default -> HttpResponseStatus.INTERNAL_SERVER_ERROR;
        };
    }

    private static ObjectNode error(String code, String text) {
        return JSON.createObjectNode().put("code", code).put("text", text);
    }

    /** A request refused as a whole: {@code {"error": {"code": ..., "text": ...}}}. */
    static FullHttpResponse problem(HttpResponseStatus status, String code, String text) {
        ObjectNode root = JSON.createObjectNode();
        root.set("error", error(code, text));
        return json(status, root);
    }

    private static FullHttpResponse unauthorized(String text) {
        FullHttpResponse r = problem(HttpResponseStatus.UNAUTHORIZED, ErrorCode.AUTHENTICATION_FAILED.name(), text);
        r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, CHALLENGE);
        return r;
    }

    private static FullHttpResponse json(HttpResponseStatus status, ObjectNode root) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(root);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree made here does not write", e);
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        return r;
    }
}
