package io.ringcast.server.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

import io.ringcast.cluster.ClusterNode;
import io.ringcast.cluster.ClusterStatus;
import io.ringcast.protocol.Transport;
import io.ringcast.server.ServerCounter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Plain HTTP requests that are not the WebSocket upgrade: {@code GET /health} (JSON),
 * {@code GET /metrics} (Prometheus text), the demo page and the browser client
 * ({@link StaticContent}), {@code POST /api/publish} and {@code /api/publish/batch} (handed to the
 * connection's {@link HttpPublisher}, put in front of this handler at its first publish), and 404
 * for the rest.
 */
final class HttpEndpointHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final StaticContent FILES = new StaticContent();
    /**
     * What the endpoints read, and nothing else: the node's counters and metrics, when it started,
     * whether the demo runs, the cluster's status (null for a single node) and the transport its
     * sockets run on. Immutable; its members are thread-safe.
     */
    record NodeView(ServerCounters counters, ServerMetrics metrics, long startedAtMs, boolean demo,
                    ClusterNode cluster, Transport transport) {
    }

    static final String PUBLISH_PATH = "/api/publish";
    static final String PUBLISH_BATCH_PATH = "/api/publish/batch";
    static final String REMOVE_PATH = "/api/remove";

    private final NodeView server;
    /** What an {@link HttpPublisher} uses; null where publishing over HTTP is not served (tests of the other endpoints). */
    private final SessionServices sessionServices;
    /** Reading stopped because an answer could not be written yet. */
    private boolean waitingForWritable;

    HttpEndpointHandler(NodeView server, SessionServices sessionServices) {
        this.server = server;
        this.sessionServices = sessionServices;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (waitingForWritable && ctx.channel().isWritable()) {
            waitingForWritable = false;
            ctx.channel().config().setAutoRead(true);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) throws Exception {
        String path = new QueryStringDecoder(request.uri()).path();
        if (path.equals("/status")) {
            path = "/status.html"; // the live charts of /metrics
        }
        FullHttpResponse response;
        StaticContent.File file;
        boolean publishPath = path.equals(PUBLISH_PATH) || path.equals(PUBLISH_BATCH_PATH) || path.equals(REMOVE_PATH);
        if (!request.decoderResult().isSuccess()) {
            response = text(HttpResponseStatus.BAD_REQUEST, "bad request\n");
        } else if (publishPath && request.method().equals(HttpMethod.POST) && sessionServices != null) {
            if (path.equals(REMOVE_PATH)) {
                publisher(ctx).remove(request);
            } else {
                publisher(ctx).publish(request, path.equals(PUBLISH_BATCH_PATH));
            }
            return; // answered once its publishes are
        } else if (publishPath) {
            response = HttpPublisher.problem(HttpResponseStatus.METHOD_NOT_ALLOWED, "BAD_REQUEST", "use POST, with a JSON"
                    + " body (docs/http-api.md)");
            response.headers().set(HttpHeaderNames.ALLOW, HttpMethod.POST.name());
        } else if (path.equals("/health") && request.method().equals(HttpMethod.GET)) {
            response = health();
        } else if (path.equals("/metrics") && request.method().equals(HttpMethod.GET)) {
            response = metrics();
        } else if ((file = FILES.find(path)) != null) {
            response = request.method().equals(HttpMethod.GET) ? file(request, file) : onlyGet();
        } else if (path.equals("/health") || path.equals("/metrics")) {
            response = onlyGet();
        } else {
            response = text(HttpResponseStatus.NOT_FOUND, "not found: " + path
                    + "\nWebSocket clients connect to /ws; the demo page is at /, the browser client at"
                    + " /js/ringcast.js, health at /health, Prometheus metrics at /metrics, publishing by POST"
                    + " at " + PUBLISH_PATH + " and " + PUBLISH_BATCH_PATH + ", removing topics at " + REMOVE_PATH + "\n");
        }
        answer(ctx, HttpUtil.isKeepAlive(request), response);
    }

    /** The connection's publisher, put in front of this handler at its first publish. */
    private HttpPublisher publisher(ChannelHandlerContext ctx) {
        HttpPublisher publisher = ctx.pipeline().get(HttpPublisher.class);
        if (publisher == null) {
            publisher = new HttpPublisher(sessionServices, this, ctx);
            ctx.pipeline().addBefore(ctx.name(), HttpPublisher.NAME, publisher);
        }
        return publisher;
    }

    /**
     * Writes {@code response} to the request just read (or, from the {@link HttpPublisher}, the one
     * it answers), keeping the connection or closing it after; stops reading while the answer cannot
     * be written. The channel's event loop.
     */
    void answer(ChannelHandlerContext ctx, boolean keepAlive, FullHttpResponse response) {
        HttpUtil.setKeepAlive(response, keepAlive);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        if (keepAlive) {
            ctx.writeAndFlush(response);
            if (!ctx.channel().isWritable()) {
                // a client that sends requests and reads no answers is held back by TCP, not by a queue
                waitingForWritable = true;
                ctx.channel().config().setAutoRead(false);
            }
        } else {
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private FullHttpResponse health() throws Exception {
        ObjectNode body = JSON.createObjectNode()
                .put("status", "UP")
                .put("uptimeMs", System.currentTimeMillis() - server.startedAtMs())
                .put("transport", server.transport().configName());
        putFigures(body, server.counters());
        body.put("demo", server.demo());
        if (server.cluster() != null) {
            ClusterStatus cs = server.cluster().status();
            ObjectNode cluster = body.putObject("cluster")
                    .put("node", cs.node())
                    .put("leader", cs.leader())
                    .put("term", cs.term())
                    .put("majority", cs.majority())
                    .put("ready", cs.ready())
                    .put("commitIndex", cs.commitIndex())
                    .put("lastAppended", cs.lastAppended())
                    .put("queuedPublishes", cs.queuedPublishes())
                    .put("snapshots", cs.snapshots());
            cs.members().forEach(cluster.putArray("members")::add);
            cs.view().forEach(cluster.putArray("view")::add);
            cluster.put("engine", cs.engine());
            ArrayNode groups = cluster.putArray("groups");
            for (ClusterStatus.Group g : cs.groups()) {
                ObjectNode group = groups.addObject().put("name", g.name()).put("leader", g.leader()).put("term", g.term())
                        .put("commitIndex", g.commitIndex()).put("appliedIndex", g.appliedIndex())
                        .put("lastAppended", g.lastAppended()).put("queuedPublishes", g.queuedPublishes())
                        .put("snapshots", g.snapshots());
                ClusterStatus.Snapshot last = g.lastSnapshot();
                if (last == null) {
                    group.putNull("lastSnapshot");
                } else {
                    group.putObject("lastSnapshot").put("bytes", last.bytes()).put("millis", last.millis())
                            .put("atMs", last.atMs()).put("index", last.index());
                }
                ArrayNode followers = group.putArray("followers");
                for (ClusterStatus.Follower f : g.followers()) {
                    followers.addObject().put("member", f.member()).put("matchIndex", f.matchIndex()).put("lag", f.lag());
                }
            }
        }
        ByteBuf content = Unpooled.wrappedBuffer(JSON.writeValueAsBytes(body));
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        return r;
    }

    /** Every {@link ServerCounter} under its stat name: {@code /health} gives the figures {@code /metrics} does. */
    static void putFigures(ObjectNode body, ServerCounters counters) {
        for (ServerCounter counter : ServerCounter.values()) {
            body.put(counter.statName(), counter.read(counters));
        }
    }

    private FullHttpResponse metrics() throws IOException {
        ByteBuf content = Unpooled.buffer(4096);
        try (ByteBufOutputStream out = new ByteBufOutputStream(content)) {
            server.metrics().write(out);
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, server.metrics().contentType());
        return r;
    }

    /** Revalidated on every load (no-cache), so a new server version's client is never stale. */
    private static FullHttpResponse file(FullHttpRequest request, StaticContent.File file) {
        FullHttpResponse r;
        if (file.etag().equals(request.headers().get(HttpHeaderNames.IF_NONE_MATCH))) {
            r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_MODIFIED);
        } else {
            r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.wrappedBuffer(file.bytes()));
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, file.contentType());
        }
        r.headers().set(HttpHeaderNames.ETAG, file.etag());
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        return r;
    }

    /** 405 for a path that answers only GET; RFC 9110 15.5.6 requires the {@code Allow} header. */
    private static FullHttpResponse onlyGet() {
        FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "use GET\n");
        r.headers().set(HttpHeaderNames.ALLOW, HttpMethod.GET.name());
        return r;
    }

    /** A plain-text response (its {@code Content-Length} is set where it is written). */
    static FullHttpResponse text(HttpResponseStatus status, String body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        return r;
    }
}
