package io.ringcast.client;

import io.netty.channel.nio.NioEventLoopGroup;
import io.ringcast.client.Recorders.Connections;
import io.ringcast.client.Recorders.Updates;
import io.ringcast.protocol.ErrorCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ringcast.client.Recorders.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client over a real socket against {@link FakeServer}: handshake, routing, resume after a
 * drop, gaps, fatal errors, liveness, connect failure. The real server's end-to-end tests live in
 * the integration-tests module.
 */
@Timeout(60)
class ClientAgainstFakeServerTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Connections connections = new Connections();
    private FakeServer server = started(FakeServer.start());

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T started(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private RingcastClient.Builder builder(String... addresses) {
        return RingcastClient.builder()
                .addresses(addresses)
                .clientName("test")
                .reconnectDelay(Duration.ofMillis(10), Duration.ofMillis(50))
                .connectTimeout(Duration.ofSeconds(5))
                .connectionListener(connections);
    }

    private RingcastClient connected() throws Exception {
        RingcastClient client = started(builder(server.url()).build());
        client.connect().get(10, TimeUnit.SECONDS);
        return client;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void subscribesPublishesAndReceivesOnTheEventLoop() throws Exception {
        server.publish("fx/EURUSD", "1.0842");
        RingcastClient client = connected();
        assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
        assertThat(connections.events).containsExactly("connected " + server.url() + " s-1");

        Updates fx = new Updates();
        Subscription s = client.subscribe("fx/#", fx);
        s.confirmed().get(10, TimeUnit.SECONDS);
        assertThat(s.selector()).isEqualTo("fx/#");
        assertThat(client.publish("fx/EURUSD", bytes("1.0843")).get(10, TimeUnit.SECONDS)).isEqualTo(2L);
        fx.awaitCount(2);
        assertThat(fx.lines).containsExactly("SNAPSHOT fx/EURUSD #1 1.0842", "UPDATE fx/EURUSD #2 1.0843");
        assertThat(fx.threads).allMatch(t -> t.startsWith("ringcast-client"));

        client.close();
        assertThat(client.state()).isEqualTo(ConnectionState.CLOSED);
        assertThat(connections.events).last().isEqualTo("disconnected " + server.url() + " 1000");
    }

    @Test
    void subscriptionsAndPublishesMadeBeforeConnectGoOutOnceConnected() throws Exception {
        RingcastClient client = started(builder(server.url()).build());
        assertThat(client.state()).isEqualTo(ConnectionState.NEW);
        Updates a = new Updates();
        Subscription s = client.subscribe("a/+", a);
        CompletableFuture<Long> p1 = client.publish("a/1", bytes("x"));
        CompletableFuture<Long> p2 = client.publish("a/1", bytes("y"));
        assertThat(p1).isNotDone();

        client.connect().get(10, TimeUnit.SECONDS);
        assertThat(p1.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
        assertThat(p2.get(10, TimeUnit.SECONDS)).isEqualTo(2L);
        s.confirmed().get(10, TimeUnit.SECONDS);
        a.awaitCount(2);
        assertThat(a.lines).containsExactly("UPDATE a/1 #1 x", "UPDATE a/1 #2 y");
    }

    @Test
    void hundredThousandPublishesGoOutInFewFrames() throws Exception {
        int count = 100_000;
        RingcastClient client = started(builder(server.url()).maxInFlightPublishes(count).build());
        client.connect().get(10, TimeUnit.SECONDS);
        List<CompletableFuture<Long>> acks = new ArrayList<>(count);
        byte[] value = bytes("0123456789abcdef");
        for (int i = 0; i < count; i++) {
            acks.add(client.publish("load/" + (i % 10), value));
        }
        CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(50, TimeUnit.SECONDS);
        assertThat(acks.get(count - 1).get()).isEqualTo(count / 10L);
        assertThat(server.publishes).hasValue(count);
        // ~3.3 MB of messages in frames of up to 1 MiB: a handful, and far from one per publish
        assertThat(server.inboundFrames.get()).isLessThan(count / 100);
    }

    @Test
    void reconnectsAndResumesWithoutDuplicatesOrGaps() throws Exception {
        RingcastClient client = connected();
        Updates fx = new Updates();
        client.subscribe("fx/#", fx).confirmed().get(10, TimeUnit.SECONDS);
        for (int i = 1; i <= 3; i++) {
            server.publish("fx/A", "v" + i);
        }
        fx.awaitCount(3);
        // published while the client is away: runs on the client's loop before it can reconnect
        connections.onDisconnect = () -> {
            server.publish("fx/A", "v4");
            server.publish("fx/A", "v5");
            server.publish("fx/B", "b1");
        };

        server.dropConnections();
        fx.awaitCount(6);
        assertThat(fx.lines).containsExactly("UPDATE fx/A #1 v1", "UPDATE fx/A #2 v2", "UPDATE fx/A #3 v3",
                "UPDATE fx/A #4 v4", "UPDATE fx/A #5 v5", "SNAPSHOT fx/B #1 b1");
        assertThat(server.subscribes).last().asString().endsWith("fx/# {fx/A=3}");
        await("reconnected", () -> client.state() == ConnectionState.CONNECTED && connections.connects() == 2);
        // Netty's server handler says goodbye with a normal-closure frame when its channel closes
        assertThat(connections.reasons).singleElement().satisfies(r -> {
            assertThat(r.code()).isNull();
            assertThat(r.closeCode()).isEqualTo(1000);
            assertThat(r).hasMessageContaining("close code 1000");
        });
        assertThat(fx.errors).isEmpty();
    }

    @Test
    void tellsOfAGapWhenHistoryNoLongerReachesBack() throws Exception {
        server.historyLength = 2;
        RingcastClient client = connected();
        Updates fx = new Updates();
        server.publish("fx/A", "v1");
        client.subscribe("fx/A", fx).confirmed().get(10, TimeUnit.SECONDS);
        connections.onDisconnect = () -> {
            for (int i = 2; i <= 6; i++) {
                server.publish("fx/A", "v" + i);
            }
        };
        server.dropConnections();
        fx.awaitCount(2);
        server.publish("fx/A", "v7");
        fx.awaitCount(3);
        assertThat(fx.lines).containsExactly("SNAPSHOT fx/A #1 v1", "SNAPSHOT_AFTER_GAP fx/A #6 v6",
                "UPDATE fx/A #7 v7");
    }

    @Test
    void followsARestartedServerWhoseSequencesStartOver() throws Exception {
        RingcastClient client = connected();
        Updates fx = new Updates();
        client.subscribe("fx/A", fx).confirmed().get(10, TimeUnit.SECONDS);
        for (int i = 1; i <= 3; i++) {
            server.publish("fx/A", "old" + i);
        }
        fx.awaitCount(3);
        int port = server.port();
        server.close();
        server = started(FakeServer.start(port));
        server.publish("fx/A", "new1");
        await("reconnected", () -> connections.connects() == 2);
        fx.awaitCount(4);
        server.publish("fx/A", "new2");
        fx.awaitCount(5);
        assertThat(fx.lines).endsWith("SNAPSHOT_AFTER_GAP fx/A #1 new1", "UPDATE fx/A #2 new2");
    }

    @Test
    void publishesSentButNotAckedFailWhenTheConnectionDrops() throws Exception {
        server.ackPublishes = false;
        RingcastClient client = connected();
        CompletableFuture<Long> lost = client.publish("a", bytes("x"));
        await("publish received", () -> server.publishes.get() == 1);
        server.dropConnections();

        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> lost.get(10, TimeUnit.SECONDS));
        assertThat(e.getCause()).isInstanceOf(RingcastException.class).hasMessage("connection lost before the ack");
        assertThat(((RingcastException) e.getCause()).code()).isNull();

        server.ackPublishes = true;
        assertThat(client.publish("a", bytes("y")).get(10, TimeUnit.SECONDS)).isEqualTo(2L);
    }

    @Test
    void serverRefusalsFailTheirFutures() throws Exception {
        RingcastClient client = connected();
        // within the client's permissive limits, beyond the server's 16 segments
        String deep = "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q";
        Updates u = new Updates();
        Subscription s = client.subscribe(deep, u);
        assertThatThrownBy(() -> s.confirmed().get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RingcastException.class)
                .satisfies(e -> assertThat(((RingcastException) e).code()).isEqualTo(ErrorCode.INVALID_SELECTOR));
        await("onError", () -> u.errors.size() == 1);

        assertThatThrownBy(() -> client.publish(deep, bytes("x")).get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RingcastException.class)
                .satisfies(e -> assertThat(((RingcastException) e).code()).isEqualTo(ErrorCode.INVALID_PATH));
        assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
    }

    @Test
    void fatalErrorReachesTheConnectionAndSubscriptionListenersThenTheClientReconnects() throws Exception {
        RingcastClient client = connected();
        Updates u = new Updates();
        client.subscribe("x", u).confirmed().get(10, TimeUnit.SECONDS);
        server.fatal(ErrorCode.SLOW_CONSUMER, "4 MiB unsent");

        await("reconnected", () -> connections.connects() == 2);
        assertThat(connections.events).contains("disconnected " + server.url() + " 1008");
        assertThat(connections.reasons).singleElement().satisfies(r -> {
            assertThat(r.code()).isEqualTo(ErrorCode.SLOW_CONSUMER);
            assertThat(r.closeCode()).isEqualTo(1008);
            assertThat(r).hasMessageContaining("4 MiB unsent");
        });
        assertThat(u.errors).singleElement().extracting(RingcastException::code).isEqualTo(ErrorCode.SLOW_CONSUMER);
        assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
    }

    @Test
    void pingsWhenIdle() throws Exception {
        server.idleTimeoutMs = 150;
        connected();
        await("two pings", () -> server.pings.get() >= 2);
    }

    @Test
    void triesTheAddressesRoundRobin() throws Exception {
        String dead;
        try (FakeServer gone = FakeServer.start()) {
            dead = gone.url();
        }
        RingcastClient client = started(builder(dead, server.url()).build());
        client.connect().get(10, TimeUnit.SECONDS);
        assertThat(connections.events).containsExactly("connected " + server.url() + " s-1");
    }

    @Test
    void connectFailsWhenNoAddressAnswersInTimeAndTheClientCloses() {
        String dead;
        try (FakeServer gone = FakeServer.start()) {
            dead = gone.url();
        }
        RingcastClient client = started(builder(dead).connectTimeout(Duration.ofMillis(300)).build());
        assertThatThrownBy(() -> client.connect().get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RingcastException.class)
                .hasMessageContaining("could not connect to [" + dead + "] within 300 ms");
        await("closed", () -> client.state() == ConnectionState.CLOSED);
        assertThat(client.publish("a", bytes("x"))).isCompletedExceptionally();
    }

    @Test
    void closeFailsPendingWorkAndLeavesALentGroupRunning() throws Exception {
        server.ackPublishes = false;
        NioEventLoopGroup group = new NioEventLoopGroup(1);
        try {
            RingcastClient client = builder(server.url()).eventLoopGroup(group).build();
            client.connect().get(10, TimeUnit.SECONDS);
            CompletableFuture<Long> pending = client.publish("a", bytes("x"));
            Subscription unconfirmed = client.subscribe("never/confirmed", new Updates());
            await("publish received", () -> server.publishes.get() == 1);
            client.close();
            client.close();

            assertThatThrownBy(pending::get).cause().isInstanceOf(RingcastException.class).hasMessage("client closed");
            assertThat(unconfirmed.confirmed()).isCompleted(); // confirmed by the server, or failed by the close
            assertThat(client.state()).isEqualTo(ConnectionState.CLOSED);
            assertThat(client.connect()).isCompletedExceptionally();
            assertThat(group.isShuttingDown()).isFalse();
            await("session gone", () -> server.openSessions() == 0);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void inFlightLimitFailsPublishesAtOnce() {
        RingcastClient client = started(builder(server.url()).maxInFlightPublishes(2).build());
        CompletableFuture<Long> a = client.publish("a", bytes("1"));
        CompletableFuture<Long> b = client.publish("a", bytes("2"));
        CompletableFuture<Long> c = client.publish("a", bytes("3"));
        assertThat(a).isNotDone();
        assertThat(b).isNotDone();
        assertThatThrownBy(c::join).cause().hasMessageContaining("maxInFlightPublishes");
        client.close();
        assertThat(a).isCompletedExceptionally();
        assertThat(b).isCompletedExceptionally();
    }
}
