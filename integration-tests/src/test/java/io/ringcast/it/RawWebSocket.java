package io.ringcast.it;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageHandler;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.WireCodec;

import javax.net.ssl.SSLContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A protocol-level test peer built on the JDK's own WebSocket client: it sends exactly the bytes a
 * test gives it (including broken ones) and records every decoded server message and the close
 * code. Independent of our Java client, so it can misbehave on purpose.
 */
final class RawWebSocket implements AutoCloseable {
    /** One server message, decoded. */
    record Msg(String type, int a, long b, int flags, String text, byte[] value) {
    }

    private final WebSocket ws;
    final List<Msg> messages = new CopyOnWriteArrayList<>();
    /** When each of {@link #messages} was decoded ({@link System#nanoTime()}), at the same index; written after it. */
    final List<Long> receivedNanos = new CopyOnWriteArrayList<>();
    final CompletableFuture<Integer> closeCode = new CompletableFuture<>();
    private final ByteBuf partial = Unpooled.buffer();

    private RawWebSocket(String url, HttpClient http) throws Exception {
        ws = http.newWebSocketBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(URI.create(url), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
                        partial.writeBytes(data);
                        if (last) {
                            decode(partial);
                            partial.clear();
                        }
                        webSocket.request(1);
                        return null;
                    }

                    @Override
                    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
                        closeCode.complete(statusCode);
                        return null;
                    }

                    @Override
                    public void onError(WebSocket webSocket, Throwable error) {
                        closeCode.complete(-1);
                    }
                }).get(5, TimeUnit.SECONDS);
    }

    static RawWebSocket connect(String url) throws Exception {
        return new RawWebSocket(url, HttpClient.newHttpClient());
    }

    /** Connects and completes the handshake. */
    static RawWebSocket connectAndHello(String url) throws Exception {
        return hello(connect(url));
    }

    /** The same over {@code wss://}, trusting what {@code tls} trusts (a test certificate). */
    static RawWebSocket connectAndHello(String url, SSLContext tls) throws Exception {
        return hello(new RawWebSocket(url, HttpClient.newBuilder().sslContext(tls).build()));
    }

    private static RawWebSocket hello(RawWebSocket raw) {
        return hello(raw, Credentials.ANONYMOUS, 0);
    }

    /** Sends {@code HELLO} (the plain form when anonymous without a publisher id) and waits for {@code WELCOME}. */
    private static RawWebSocket hello(RawWebSocket raw, Credentials credentials, long publisherId) {
        raw.send(out -> WireCodec.writeHello(out, WireCodec.VERSION, "raw-test", credentials, publisherId));
        raw.await("WELCOME");
        return raw;
    }

    /** Connects and completes the handshake giving a publisher id ({@code REPUBLISH} is applied once). */
    static RawWebSocket connectAndHello(String url, long publisherId) throws Exception {
        return connectAndHello(url, Credentials.ANONYMOUS, publisherId);
    }

    /** The same, logging in with {@code credentials}. */
    static RawWebSocket connectAndHello(String url, Credentials credentials, long publisherId) throws Exception {
        return hello(connect(url), credentials, publisherId);
    }

    void republish(int correlationId, String topic, String value) {
        send(out -> WireCodec.writeRepublish(out, correlationId, topic, value.getBytes()));
    }

    void send(Consumer<ByteBuf> writer) {
        ByteBuf out = Unpooled.buffer();
        writer.accept(out);
        sendBytes(ByteBufToArray.of(out));
    }

    void sendBytes(byte[] bytes) {
        ws.sendBinary(ByteBuffer.wrap(bytes), true).join();
    }

    /**
     * Sends a frame the server may refuse before it has all of it (it judges a frame's size from
     * its header and closes), so the send itself may fail; what the server answered is checked
     * by the caller.
     */
    void sendMayBeCutOff(Consumer<ByteBuf> writer) {
        ByteBuf out = Unpooled.buffer();
        writer.accept(out);
        ws.sendBinary(ByteBuffer.wrap(ByteBufToArray.of(out)), true).exceptionally(e -> null).join();
    }

    void sendText(String text) {
        ws.sendText(text, true).join();
    }

    void subscribe(int id, String selector) {
        send(out -> WireCodec.writeSubscribe(out, id, selector, Map.of()));
    }

    void remove(int correlationId, String selector) {
        send(out -> WireCodec.writeRemove(out, correlationId, selector));
    }

    void publish(int correlationId, String topic, String value) {
        send(out -> WireCodec.writePublish(out, correlationId, topic, value.getBytes()));
    }

    /** Waits for the first message of that type and returns it. */
    Msg await(String type) {
        return Await.value(() -> messages.stream().filter(m -> m.type().equals(type)).findFirst().orElse(null),
                () -> "a " + type + " message; got " + messages);
    }

    List<Msg> all(String type) {
        List<Msg> out = new ArrayList<>();
        for (Msg m : messages) {
            if (m.type().equals(type)) {
                out.add(m);
            }
        }
        return out;
    }

    /** The close code the server sent, waiting for it. */
    int awaitClose() throws Exception {
        return closeCode.get(10, TimeUnit.SECONDS);
    }

    ErrorCode awaitError() {
        return ErrorCode.of(await("ERROR").a());
    }

    private void decode(ByteBuf frame) {
        decodeInto(frame, messages);
        long now = System.nanoTime();
        while (receivedNanos.size() < messages.size()) {
            receivedNanos.add(now);
        }
    }

    /** Decodes the messages of one server frame into {@code messages}; shared with {@link WireSocket}. */
    static void decodeInto(ByteBuf frame, List<Msg> messages) {
        try {
            WireCodec.decode(frame, new MessageHandler() {
                @Override
                public void onWelcome(int version, String sessionId, int maxFrameBytes, int idleTimeoutMs) {
                    messages.add(new Msg("WELCOME", version, maxFrameBytes, 0, sessionId, null));
                }

                @Override
                public void onTopic(int alias, String topicPath, int incarnation) {
                    messages.add(new Msg("TOPIC", alias, 0, incarnation, topicPath, null)); // flags: the incarnation
                }

                @Override
                public void onTopicRemoved(int alias, long lastSequence) {
                    messages.add(new Msg("TOPIC_REMOVED", alias, lastSequence, 0, null, null));
                }

                @Override
                public void onRemoved(int correlationId, int removedTopics) {
                    messages.add(new Msg("REMOVED", correlationId, removedTopics, 0, null, null));
                }

                @Override
                public void onSnapshot(int id, int alias, long seq, int flags, int viewId, ByteBuf f, int i, int n) {
                    messages.add(new Msg("SNAPSHOT", alias, seq, flags, Integer.toString(id), bytes(f, i, n)));
                }

                @Override
                public void onUpdate(int alias, long seq, int flags, int viewId, ByteBuf f, int i, int n) {
                    messages.add(new Msg("UPDATE", alias, seq, flags, null, bytes(f, i, n)));
                }

                @Override
                public void onView(int subscriptionId, int viewId) {
                    messages.add(new Msg("VIEW", subscriptionId, viewId, 0, null, null));
                }

                @Override
                public void onPublishAck(int correlationId, long sequence) {
                    messages.add(new Msg("PUBLISH_ACK", correlationId, sequence, 0, null, null));
                }

                @Override
                public void onSubscribed(int subscriptionId, int matchedTopics) {
                    messages.add(new Msg("SUBSCRIBED", subscriptionId, matchedTopics, 0, null, null));
                }

                @Override
                public void onError(int code, int correlationId, String reason) {
                    messages.add(new Msg("ERROR", code, correlationId, 0, reason, null));
                }

                @Override
                public void onPong(long nonce) {
                    messages.add(new Msg("PONG", 0, nonce, 0, null, null));
                }
            });
        } catch (ProtocolException e) {
            messages.add(new Msg("UNDECODABLE", e.code().code(), 0, 0, e.reason(), null));
        }
    }

    private static byte[] bytes(ByteBuf f, int i, int n) {
        byte[] b = new byte[n];
        f.getBytes(i, b);
        return b;
    }

    @Override
    public void close() {
        ws.abort();
    }
}
