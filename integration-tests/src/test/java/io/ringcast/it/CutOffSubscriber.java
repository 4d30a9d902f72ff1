package io.ringcast.it;

import io.ringcast.client.ConnectionListener;
import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.server.RingcastServer;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Java subscriber reaching {@code target} through a proxy that a test cuts, like a network
 * failure, and lets back; it reconnects and resumes on its own.
 */
final class CutOffSubscriber implements AutoCloseable {
    final CuttableProxy proxy;
    final RingcastClient client;
    final AtomicInteger connects = new AtomicInteger();
    final AtomicInteger disconnects = new AtomicInteger();

    CutOffSubscriber(RingcastServer target) throws Exception {
        proxy = new CuttableProxy(target.port());
        client = RingcastClient.builder().addresses(proxy.webSocketUrl())
                .reconnectDelay(Duration.ofMillis(20), Duration.ofMillis(200))
                .connectionListener(new ConnectionListener() {
                    @Override
                    public void onConnected(String address, String sessionId) {
                        connects.incrementAndGet();
                    }

                    @Override
                    public void onDisconnected(String address, RingcastException reason, int closeCode) {
                        disconnects.incrementAndGet();
                    }
                }).build();
        client.connect().get(10, TimeUnit.SECONDS);
    }

    Recorded subscribe(String selector) throws Exception {
        return subscribe(selector, SubscribeOptions.NONE);
    }

    /** A confirmed subscription with {@code options}, and what it receives. */
    Recorded subscribe(String selector, SubscribeOptions options) throws Exception {
        Recorded r = new Recorded();
        client.subscribe(selector, options, r).confirmed().get(10, TimeUnit.SECONDS);
        return r;
    }

    /** Cuts the connection and keeps the server unreachable until {@link #letBack}. */
    void cut() {
        proxy.refuse(true);
        proxy.cut();
        Await.until(() -> disconnects.get() == 1 && client.state() != ConnectionState.CONNECTED,
                "the client to notice the cut");
    }

    void letBack() {
        proxy.refuse(false);
        Await.until(() -> connects.get() == 2, "the reconnect");
    }

    @Override
    public void close() throws IOException {
        client.close();
        proxy.close();
    }
}
