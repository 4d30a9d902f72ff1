package io.ringcast.it;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import io.ringcast.client.ConnectionListener;
import io.ringcast.client.ConnectionState;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.RingcastServer;
import io.ringcast.testkit.FailOnLeakExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.LongStream;

import static io.ringcast.server.ServerCounter.CLIENT_PINGS;
import static io.ringcast.server.ServerCounter.PROTOCOL_ERRORS;
import static io.ringcast.server.ServerCounter.PUBLISHES;
import static io.ringcast.server.ServerCounter.SESSIONS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the Java client promises its application, proven against the real server over real
 * sockets: work queued before {@code connect()}, batching, following a restarted server, failing
 * what a lost connection or {@code close()} leaves pending, the server's refusals, liveness,
 * address rotation and the in-flight limit. Each test runs its own server, configured for it.
 */
@Timeout(120)
class ClientBehaviourTest {
    /** Limits a test server refuses with, far tighter than the client's permissive local checks. */
    static final String TIGHT_LIMITS = "limits:\n  maxFrameBytes: 4096\n  maxPathBytes: 32\n"
            + "  maxSubscriptionsPerSession: 2\n";
    static final int TIGHT_FRAME_BYTES = 4096;
    static final int TIGHT_PATH_BYTES = 32;

    /** Session starts and ends as the client reported them, with the thread it reported them on. */
    static final class Sessions implements ConnectionListener {
        record Event(boolean connected, String address, String sessionId, RingcastException reason, int closeCode,
                     String thread) {
        }

        final List<Event> events = new CopyOnWriteArrayList<>();
        /** Runs on the client's event loop after each session start is recorded; gets the address. */
        volatile Consumer<String> onConnected = address -> { };

        @Override
        public void onConnected(String address, String sessionId) {
            events.add(new Event(true, address, sessionId, null, 0, Thread.currentThread().getName()));
            onConnected.accept(address);
        }

        @Override
        public void onDisconnected(String address, RingcastException reason, int closeCode) {
            events.add(new Event(false, address, null, reason, closeCode, Thread.currentThread().getName()));
        }

        long connects() {
            return events.stream().filter(Event::connected).count();
        }

        List<Event> disconnects() {
            return events.stream().filter(e -> !e.connected()).toList();
        }
    }

    private static RingcastClient.Builder client(Sessions sessions, String... addresses) {
        return RingcastClient.builder()
                .addresses(addresses)
                .clientName("client-behaviour")
                .reconnectDelay(Duration.ofMillis(10), Duration.ofMillis(100))
                .connectionListener(sessions);
    }

    private static RingcastClient connected(RingcastServer server) throws Exception {
        RingcastClient c = RingcastClient.builder().addresses(server.webSocketUrl()).clientName("publisher").build();
        c.connect().get(10, TimeUnit.SECONDS);
        return c;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A loopback port nothing listens on (free a moment ago). */
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String url(int port) {
        return "ws://127.0.0.1:" + port + "/ws";
    }

    /** The {@link RingcastException} a future failed with. */
    private static RingcastException failure(CompletableFuture<?> f) {
        assertThat(f).isCompletedExceptionally();
        try {
            f.get(0, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(RingcastException.class);
            return (RingcastException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("not failed: " + f);
    }

    /** The {@link RingcastException} a future fails with within 10 s. */
    private static RingcastException awaitFailure(CompletableFuture<?> f) {
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> f.get(10, TimeUnit.SECONDS));
        assertThat(e.getCause()).isInstanceOf(RingcastException.class);
        return (RingcastException) e.getCause();
    }

    // ------------------------------------------------------------------ sessions and delivery

    @Test
    void deliversOnTheClientsEventLoopAndReportsTheSessionsStartAndEnd() throws Exception {
        try (RingcastServer server = TestServers.start(); RingcastClient publisher = connected(server)) {
            publisher.publish("loop/a", bytes("first")).get(10, TimeUnit.SECONDS);
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
                assertThat(sessions.events).singleElement().satisfies(e -> {
                    assertThat(e.connected()).isTrue();
                    assertThat(e.address()).isEqualTo(server.webSocketUrl());
                    assertThat(e.sessionId()).startsWith("s-");
                });

                Recorded got = new Recorded();
                List<String> threads = new CopyOnWriteArrayList<>();
                Subscription s = client.subscribe("loop/#", u -> {
                    threads.add(Thread.currentThread().getName());
                    got.onUpdate(u);
                });
                s.confirmed().get(10, TimeUnit.SECONDS);
                assertThat(s.selector()).isEqualTo("loop/#");
                assertThat(client.publish("loop/a", bytes("second")).get(10, TimeUnit.SECONDS)).isEqualTo(2L);
                Await.until(() -> got.updates.size() == 2, "the snapshot and the update");
                assertThat(got.updates).containsExactly(
                        new Recorded.Got("loop/a", 1, UpdateKind.SNAPSHOT, "first"),
                        new Recorded.Got("loop/a", 2, UpdateKind.UPDATE, "second"));
                assertThat(threads).allMatch(t -> t.startsWith("ringcast-client"));
                assertThat(sessions.events.get(0).thread()).startsWith("ringcast-client");

                client.close();
                assertThat(client.state()).isEqualTo(ConnectionState.CLOSED);
                Await.until(() -> sessions.disconnects().size() == 1, "the end of the session");
                Sessions.Event end = sessions.disconnects().get(0);
                assertThat(end.address()).isEqualTo(server.webSocketUrl());
                assertThat(end.reason()).as("no reason: the client closed it").isNull();
                assertThat(end.closeCode()).isEqualTo(1000);
                Await.until(() -> server.stats().get(SESSIONS) == 1, "the server to drop the client's session");
            }
        }
    }

    @Test
    void subscriptionsAndPublishesMadeBeforeConnectGoOutOnceConnected() throws Exception {
        try (RingcastServer server = TestServers.start()) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                assertThat(client.state()).isEqualTo(ConnectionState.NEW);
                Recorded got = new Recorded();
                Subscription s = client.subscribe("early/+", got);
                CompletableFuture<Long> first = client.publish("early/a", bytes("x"));
                CompletableFuture<Long> second = client.publish("early/a", bytes("y"));
                assertThat(first).isNotDone();
                assertThat(second).isNotDone();
                assertThat(s.confirmed()).isNotDone();
                assertThat(server.stats().get(SESSIONS)).as("nothing reached the server").isZero();

                client.connect().get(10, TimeUnit.SECONDS);
                s.confirmed().get(10, TimeUnit.SECONDS);
                assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
                assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(2L);
                Await.until(() -> got.updates.size() == 2, "both updates");
                assertThat(got.updates).containsExactly(
                        new Recorded.Got("early/a", 1, UpdateKind.UPDATE, "x"),
                        new Recorded.Got("early/a", 2, UpdateKind.UPDATE, "y"));
            }
        }
    }

    /**
     * At a sampled leak level, as in {@link FanOutEndToEndTest}: paranoid detection takes a stack
     * trace on every buffer access, which makes this burst take about 27 s on 2 cores instead of
     * about 4, measuring the detector rather than the batching. The same encode and decode paths
     * run under paranoid detection in the other tests of this class.
     */
    @Test
    void hundredThousandPublishesAreAllAckedWellWithinTheTimeout() throws Exception {
        FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.ADVANCED, this::hundredThousandPublishes);
    }

    private void hundredThousandPublishes() throws Exception {
        int count = 100_000;
        int topics = 10;
        try (RingcastServer server = TestServers.start()) {
            RingcastClient client = client(new Sessions(), server.webSocketUrl()).maxInFlightPublishes(count).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                byte[] value = bytes("0123456789abcdef");
                List<CompletableFuture<Long>> acks = new ArrayList<>(count);
                long started = System.nanoTime();
                for (int i = 0; i < count; i++) {
                    acks.add(client.publish("load/" + (i % topics), value));
                }
                // batched into frames of up to 1 MiB this takes a few seconds; the class allows 120
                CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                System.out.printf("%d publishes acked in %d ms%n", count, elapsedMs);

                assertThat(acks).allMatch(f -> !f.isCompletedExceptionally());
                // each topic's acks are its sequences 1..10,000, in publish order
                for (int t = 0; t < topics; t++) {
                    List<Long> sequences = new ArrayList<>();
                    for (int i = t; i < count; i += topics) {
                        sequences.add(acks.get(i).join());
                    }
                    assertThat(sequences).as("acks of load/%d", t)
                            .containsExactlyElementsOf(LongStream.rangeClosed(1, count / topics).boxed().toList());
                }
                Await.until(() -> server.stats().get(PUBLISHES) == count, "the server to count every publish");
            }
        }
    }

    // ------------------------------------------------------------------ reconnects

    @Test
    void resumesAWildcardSubscriptionAndReplaysTopicsCreatedWhileAwayFromTheirFirstUpdate() throws Exception {
        try (RingcastServer server = TestServers.start();
             RingcastClient publisher = connected(server);
             CuttableProxy proxy = new CuttableProxy(server.port())) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, proxy.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                Recorded got = new Recorded();
                client.subscribe("away/#", got).confirmed().get(10, TimeUnit.SECONDS);
                for (int i = 1; i <= 3; i++) {
                    publisher.publish("away/a", bytes("v" + i)).get(10, TimeUnit.SECONDS);
                }
                Await.until(() -> got.updates.size() == 3, "the first 3 updates");

                proxy.refuse(true);
                proxy.cut();
                Await.until(() -> sessions.disconnects().size() == 1, "the client to notice the cut");
                RingcastException reason = sessions.disconnects().get(0).reason();
                assertThat(reason).as("a lost connection has a reason but no server error code").isNotNull();
                assertThat(reason.code()).isNull();
                publisher.publish("away/a", bytes("v4")).get(10, TimeUnit.SECONDS);
                publisher.publish("away/a", bytes("v5")).get(10, TimeUnit.SECONDS);
                publisher.publish("away/b", bytes("b1")).get(10, TimeUnit.SECONDS);
                proxy.refuse(false);

                Await.until(() -> got.updates.size() == 6, "the resume");
                assertThat(got.of("away/a")).containsExactly(
                        new Recorded.Got("away/a", 1, UpdateKind.UPDATE, "v1"),
                        new Recorded.Got("away/a", 2, UpdateKind.UPDATE, "v2"),
                        new Recorded.Got("away/a", 3, UpdateKind.UPDATE, "v3"),
                        new Recorded.Got("away/a", 4, UpdateKind.UPDATE, "v4"),
                        new Recorded.Got("away/a", 5, UpdateKind.UPDATE, "v5"));
                assertThat(got.of("away/b")).containsExactly(new Recorded.Got("away/b", 1, UpdateKind.UPDATE, "b1"));
                assertThat(sessions.connects()).isEqualTo(2);
                assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
                assertThat(got.errors).isEmpty();
            }
        }
    }

    /**
     * The subscriber reaches the port through a proxy that refuses while the server is away, so
     * that it comes back only once the new server has the topic again. A server restarted without
     * its state made the topic anew, another incarnation ({@code docs/protocol.md}, "Removing
     * topics"): the client's resume names the old one, so the listener is told the old topic went,
     * and gets the new one from its first update, none missed. (A topic recreated only after the
     * resume is the next test.)
     */
    @Test
    // "try": the first server is closed inside its try block on purpose, to restart it under the client
    @SuppressWarnings("try")
    void followsARestartedServerAsANewIncarnationOfTheTopic() throws Exception {
        int port = freePort();
        Sessions sessions = new Sessions();
        Recorded got = new Recorded();
        try (RingcastServer first = TestServers.startOnPort(port, "");
             CuttableProxy proxy = new CuttableProxy(port);
             RingcastClient subscriber = client(sessions, proxy.webSocketUrl()).build()) {
            subscriber.connect().get(10, TimeUnit.SECONDS);
            subscriber.subscribe("restart/a", got).confirmed().get(10, TimeUnit.SECONDS);
            try (RingcastClient publisher = connected(first)) {
                for (int i = 1; i <= 3; i++) {
                    publisher.publish("restart/a", bytes("old" + i)).get(10, TimeUnit.SECONDS);
                }
            }
            Await.until(() -> got.updates.size() == 3, "the old server's updates");

            proxy.refuse(true);
            first.close();
            Await.until(() -> sessions.disconnects().size() == 1, "the client to see the server stop");
            // a fatal server error reaches the connection listener and every subscription's listener
            Sessions.Event end = sessions.disconnects().get(0);
            assertThat(end.reason().code()).isEqualTo(ErrorCode.SERVER_SHUTDOWN);
            assertThat(end.closeCode()).isEqualTo(1001);
            Await.until(() -> got.errors.size() == 1, "the subscription's listener to hear of it");
            assertThat(((RingcastException) got.errors.get(0)).code()).isEqualTo(ErrorCode.SERVER_SHUTDOWN);

            try (RingcastServer second = TestServers.startOnPort(port, "");
                 RingcastClient publisher = connected(second)) {
                assertThat(publisher.publish("restart/a", bytes("new1")).get(10, TimeUnit.SECONDS)).isEqualTo(1L);
                proxy.refuse(false);
                Await.until(() -> sessions.connects() == 2, "the client to follow the new server");
                Await.until(() -> got.updates.size() == 4, "the new topic's first update");
                assertThat(publisher.publish("restart/a", bytes("new2")).get(10, TimeUnit.SECONDS)).isEqualTo(2L);
                Await.until(() -> got.updates.size() == 5, "the next update");
                assertThat(got.updates).containsExactly(
                        new Recorded.Got("restart/a", 1, UpdateKind.UPDATE, "old1"),
                        new Recorded.Got("restart/a", 2, UpdateKind.UPDATE, "old2"),
                        new Recorded.Got("restart/a", 3, UpdateKind.UPDATE, "old3"),
                        new Recorded.Got("restart/a", 1, UpdateKind.UPDATE, "new1"),
                        new Recorded.Got("restart/a", 2, UpdateKind.UPDATE, "new2"));
                assertThat(got.removed).as("the old topic's end, before the new one's first update")
                        .containsExactly(new Recorded.Removed("restart/a", 3, 3));
                assertThat(subscriber.state()).isEqualTo(ConnectionState.CONNECTED);
            }
        }
    }

    @Test
    // "try": the first server is closed inside its try block on purpose, to restart it under the client
    @SuppressWarnings("try")
    void deliversATopicThatARestartedServerRecreatesAfterTheClientResumed() throws Exception {
        int port = freePort();
        Sessions sessions = new Sessions();
        Recorded got = new Recorded();
        try (RingcastServer first = TestServers.startOnPort(port, "");
             RingcastClient subscriber = client(sessions, url(port)).build()) {
            subscriber.connect().get(10, TimeUnit.SECONDS);
            subscriber.subscribe("recreated/a", got).confirmed().get(10, TimeUnit.SECONDS);
            try (RingcastClient publisher = connected(first)) {
                for (int i = 1; i <= 3; i++) {
                    publisher.publish("recreated/a", bytes("old" + i)).get(10, TimeUnit.SECONDS);
                }
            }
            Await.until(() -> got.updates.size() == 3, "the old server's updates");
            first.close();

            try (RingcastServer second = TestServers.startOnPort(port, "");
                 RingcastClient publisher = connected(second)) {
                Await.until(() -> sessions.connects() == 2, "the client to follow the new server");
                // the resubscription went out before this publish on the same session, so once it
                // is acked the new server has handled the resume list (naming a topic it lacks)
                subscriber.publish("recreated/marker", bytes("m")).get(10, TimeUnit.SECONDS);
                for (int i = 1; i <= 4; i++) {
                    assertThat(publisher.publish("recreated/a", bytes("new" + i)).get(10, TimeUnit.SECONDS))
                            .isEqualTo(i);
                }
                Await.until(() -> got.updates.stream().anyMatch(g -> g.text().equals("new4")), "the newest value");
                assertThat(got.updates).extracting(Recorded.Got::text)
                        .as("the restarted server's values must all reach the listener")
                        .containsExactly("old1", "old2", "old3", "new1", "new2", "new3", "new4");
                assertThat(got.updates.get(3).kind()).as("the new incarnation's first value, as it is: no gap")
                        .isEqualTo(UpdateKind.UPDATE);
                assertThat(got.removed).as("told the old topic went, before the new one's first value")
                        .containsExactly(new Recorded.Removed("recreated/a", 3, 3));
            }
        }
    }

    /**
     * The whole burst is queued before {@code connect()}, so the client encodes it all the moment
     * the session starts and writes what the socket takes; the connection listener then cuts the
     * proxy, on the client's event loop, before that loop can write more or read any ack. 32 MiB
     * is far more than one write to a fresh loopback socket takes, so some publishes are always
     * unacked at the cut, however the threads are scheduled; acks already on their way may still
     * arrive. At a sampled leak level: the client masks every byte it sends with an int read and
     * write, and paranoid detection takes a stack trace on each, minutes for 32 MiB.
     */
    @Test
    void publishesSentButNotAckedAreSentAgainAndAppliedOnce() throws Exception {
        FailOnLeakExtension.withLevel(ResourceLeakDetector.Level.ADVANCED, this::cutABurstInFlight);
    }

    private void cutABurstInFlight() throws Exception {
        int count = 4_000;
        try (RingcastServer server = TestServers.start(); CuttableProxy proxy = new CuttableProxy(server.port())) {
            Sessions sessions = new Sessions();
            AtomicBoolean cutOnce = new AtomicBoolean();
            sessions.onConnected = address -> {
                if (cutOnce.compareAndSet(false, true)) {
                    proxy.refuse(true);
                    proxy.cut();
                }
            };
            RingcastClient client = client(sessions, proxy.webSocketUrl()).build();
            try (client) {
                byte[] value = new byte[8 * 1024];
                List<CompletableFuture<Long>> burst = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    burst.add(client.publish("drop/t", value));
                }
                client.connect().get(10, TimeUnit.SECONDS);
                Await.until(() -> !sessions.disconnects().isEmpty(), "the cut");
                assertThat(burst.stream().filter(CompletableFuture::isDone).count())
                        .as("publishes acked before the cut").isLessThan(count);

                proxy.refuse(false);
                CompletableFuture.allOf(burst.toArray(CompletableFuture<?>[]::new)).get(30, TimeUnit.SECONDS);
                // sent again on the next session, the ones the server had applied are not applied
                // twice: publish i got sequence i, and the topic has exactly one update per publish
                for (int i = 0; i < count; i++) {
                    assertThat(burst.get(i).join()).as("sequence of publish %d", i).isEqualTo(i + 1L);
                }
                assertThat(client.publish("drop/t", bytes("after")).get(10, TimeUnit.SECONDS))
                        .as("the next publish").isEqualTo(count + 1L);
                assertThat(sessions.connects()).isEqualTo(2);
            }
        }
    }

    // ------------------------------------------------------------------ refusals

    @Test
    void serverRefusesAPathOverItsLimitWithInvalidPath() throws Exception {
        try (RingcastServer server = TestServers.start(TIGHT_LIMITS)) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                String longPath = "refused/" + "p".repeat(TIGHT_PATH_BYTES); // fine for the client, not the server
                RingcastException e = awaitFailure(client.publish(longPath, bytes("x")));
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PATH);
                assertThat(server.stats().get(PROTOCOL_ERRORS)).as("refused by the server").isEqualTo(1);
                assertStillOnItsFirstSession(client, sessions);
            }
        }
    }

    @Test
    void serverRefusesASelectorOverItsLimitWithInvalidSelector() throws Exception {
        try (RingcastServer server = TestServers.start(TIGHT_LIMITS)) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                Recorded got = new Recorded();
                Subscription s = client.subscribe("refused/" + "s".repeat(TIGHT_PATH_BYTES) + "/#", got);
                RingcastException e = awaitFailure(s.confirmed());
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SELECTOR);
                Await.until(() -> got.errors.size() == 1, "the listener's onError");
                assertThat(((RingcastException) got.errors.get(0)).code()).isEqualTo(ErrorCode.INVALID_SELECTOR);
                assertStillOnItsFirstSession(client, sessions);
            }
        }
    }

    @Test
    void serverRefusesAValueWhoseUpdateWouldNotFitWithValueTooLarge() throws Exception {
        try (RingcastServer server = TestServers.start(TIGHT_LIMITS)) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                // the PUBLISH fits the server's frame limit, so the client sends it; the server's
                // UPDATE for it (with a TOPIC in front) would not, so the server refuses it
                byte[] value = new byte[TIGHT_FRAME_BYTES - 30];
                RingcastException e = awaitFailure(client.publish("big", value));
                assertThat(e.code()).isEqualTo(ErrorCode.VALUE_TOO_LARGE);
                assertThat(e).hasMessageContaining("limits.maxFrameBytes");
                assertStillOnItsFirstSession(client, sessions);
            }
        }
    }

    @Test
    void serverRefusesASubscriptionOverItsLimitWithTooManySubscriptions() throws Exception {
        try (RingcastServer server = TestServers.start(TIGHT_LIMITS)) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                Subscription one = client.subscribe("many/1", new Recorded());
                client.subscribe("many/2", new Recorded()).confirmed().get(10, TimeUnit.SECONDS);
                one.confirmed().get(10, TimeUnit.SECONDS);
                Recorded third = new Recorded();
                RingcastException e = awaitFailure(client.subscribe("many/3", third).confirmed());
                assertThat(e.code()).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
                Await.until(() -> third.errors.size() == 1, "the listener's onError");

                one.close(); // the limit counts open subscriptions: this frees a place
                client.subscribe("many/4", new Recorded()).confirmed().get(10, TimeUnit.SECONDS);
                assertStillOnItsFirstSession(client, sessions);
            }
        }
    }

    /** A refusal is not fatal: the session goes on and takes more work. */
    private static void assertStillOnItsFirstSession(RingcastClient client, Sessions sessions) throws Exception {
        assertThat(client.publish("still/ok", bytes("y")).get(10, TimeUnit.SECONDS)).isPositive();
        assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
        assertThat(sessions.events).singleElement().extracting(Sessions.Event::connected).isEqualTo(true);
    }

    // ------------------------------------------------------------------ liveness and addresses

    /**
     * There is no event for "the server did not time the client out", so each idle period is
     * marked by one that does happen: a silent raw session, opened alongside, being closed with
     * {@code IDLE_TIMEOUT} (it answers not even the server's WebSocket pings). Three in a row span
     * at least three idle periods of the client's.
     */
    @Test
    void pingsWhenIdleSoTheServerKeepsTheSession() throws Exception {
        try (RingcastServer server = TestServers.start("session:\n  idleTimeoutMs: 1000\n")) {
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                String sessionId = sessions.events.get(0).sessionId();
                for (int period = 1; period <= 3; period++) {
                    assertThat(ErrorCode.of(WireSocket.awaitIdleTimeoutOfASilentPeer(server.webSocketUrl()).a()))
                            .as("idle period %d", period).isEqualTo(ErrorCode.IDLE_TIMEOUT);
                }
                // the session lived on the client's PINGs, not only on pongs to the server's pings
                assertThat(server.stats().get(CLIENT_PINGS)).as("PINGs from the client").isGreaterThanOrEqualTo(6);
                assertThat(sessions.events).as("no disconnect, no new session").singleElement()
                        .extracting(Sessions.Event::sessionId).isEqualTo(sessionId);
                assertThat(client.state()).isEqualTo(ConnectionState.CONNECTED);
                assertThat(client.publish("idle/t", bytes("awake")).get(10, TimeUnit.SECONDS)).isEqualTo(1L);
                assertThat(sessions.events).hasSize(1);
            }
        }
    }

    @Test
    void triesTheAddressesRoundRobin() throws Exception {
        try (RingcastServer server = TestServers.start()) {
            String dead = url(freePort());
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, dead, server.webSocketUrl()).build();
            try (client) {
                client.connect().get(10, TimeUnit.SECONDS);
                assertThat(sessions.events).singleElement().satisfies(e -> {
                    assertThat(e.connected()).isTrue();
                    assertThat(e.address()).isEqualTo(server.webSocketUrl());
                });
            }
        }
    }

    /**
     * The first address accepts connections and never answers (a frozen node): the attempt there
     * gets its share of the connect timeout (3 s of 6), not all of it, and the client connects to
     * the next address within the timeout.
     */
    @Test
    void anAddressThatAcceptsAndNeverAnswersTakesOnlyItsShareOfTheConnectTimeout() throws Exception {
        try (RingcastServer server = TestServers.start();
             java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            String frozen = "ws://127.0.0.1:" + silent.getLocalPort() + "/ws"; // the kernel accepts; nobody reads
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, frozen, server.webSocketUrl())
                    .connectTimeout(Duration.ofSeconds(6)).build();
            try (client) {
                // before: the silent address took all 6 s, and connect() failed
                client.connect().get(10, TimeUnit.SECONDS);
                assertThat(sessions.events).singleElement()
                        .satisfies(e -> assertThat(e.address()).isEqualTo(server.webSocketUrl()));
            }
        }
    }

    @Test
    void connectFailsWhenNoAddressAnswersInTimeAndTheClientCloses() throws Exception {
        String dead = url(freePort());
        Sessions sessions = new Sessions();
        RingcastClient client = client(sessions, dead).connectTimeout(Duration.ofMillis(300)).build();
        try (client) {
            RingcastException e = awaitFailure(client.connect());
            assertThat(e).hasMessageContaining("could not connect to [" + dead + "] within 300 ms");
            Await.until(() -> client.state() == ConnectionState.CLOSED, "the client to close");
            assertThat(client.publish("a", bytes("x"))).isCompletedExceptionally();
            assertThat(sessions.events).isEmpty();
        }
    }

    // ------------------------------------------------------------------ close and limits

    /**
     * Everything is queued before {@code connect()} and the connection listener closes the client
     * on its event loop, right after the session start sent it all and before any reply can be
     * read: the publishes are on the wire unacked and the subscription unconfirmed.
     */
    @Test
    void closeFailsPendingWorkAndLeavesALentEventLoopGroupRunning() throws Exception {
        EventLoopGroup group = new NioEventLoopGroup(1);
        try (RingcastServer server = TestServers.start()) {
            Sessions sessions = new Sessions();
            AtomicReference<RingcastClient> self = new AtomicReference<>();
            sessions.onConnected = address -> self.get().close();
            RingcastClient client = client(sessions, server.webSocketUrl()).eventLoopGroup(group).build();
            self.set(client);
            try (client) {
                Subscription unconfirmed = client.subscribe("close/#", new Recorded());
                List<CompletableFuture<Long>> pending = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    pending.add(client.publish("close/t", bytes("v" + i)));
                }
                assertThat(awaitFailure(client.connect())).hasMessage("client closed");
                assertThat(sessions.connects()).as("the session did start").isEqualTo(1);

                for (CompletableFuture<Long> p : pending) {
                    RingcastException e = failure(p);
                    assertThat(e).hasMessage("client closed");
                    assertThat(e.code()).isNull();
                }
                assertThat(failure(unconfirmed.confirmed())).hasMessage("client closed");
                assertThat(client.state()).isEqualTo(ConnectionState.CLOSED);
                client.close(); // idempotent
                assertThat(client.connect()).isCompletedExceptionally();
                assertThat(failure(client.publish("close/t", bytes("late")))).hasMessage("client is closed");

                assertThat(group.isShuttingDown()).isFalse();
                assertThat(group.submit(() -> "still running").get(10, TimeUnit.SECONDS)).isEqualTo("still running");
                Await.until(() -> server.stats().get(SESSIONS) == 0, "the server to drop the session");
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void closeFailsPublishesWaitingForAConnection() throws Exception {
        try (RingcastServer server = TestServers.start(); CuttableProxy proxy = new CuttableProxy(server.port())) {
            proxy.refuse(true);
            RingcastClient client = client(new Sessions(), proxy.webSocketUrl()).build();
            try (client) {
                CompletableFuture<Void> connect = client.connect();
                CompletableFuture<Long> waiting = client.publish("wait/t", bytes("x"));
                Subscription unconfirmed = client.subscribe("wait/#", new Recorded());
                assertThat(waiting).isNotDone();
                client.close();
                assertThat(failure(waiting)).hasMessage("client closed");
                assertThat(failure(unconfirmed.confirmed())).hasMessage("client closed");
                assertThat(failure(connect)).hasMessage("client closed");
            }
        }
    }

    @Test
    void inFlightLimitFailsPublishesAtOnce() throws Exception {
        try (RingcastServer server = TestServers.start(); CuttableProxy proxy = new CuttableProxy(server.port())) {
            proxy.refuse(true); // nothing can be acked
            Sessions sessions = new Sessions();
            RingcastClient client = client(sessions, proxy.webSocketUrl()).maxInFlightPublishes(4).build();
            try (client) {
                CompletableFuture<Void> connect = client.connect();
                List<CompletableFuture<Long>> allowed = new ArrayList<>();
                for (int i = 1; i <= 4; i++) {
                    allowed.add(client.publish("limit/t", bytes("v" + i)));
                }
                CompletableFuture<Long> fifth = client.publish("limit/t", bytes("v5"));
                assertThat(allowed).noneMatch(CompletableFuture::isDone);
                RingcastException e = failure(fifth);
                assertThat(e).hasMessageContaining("maxInFlightPublishes");
                assertThat(e.code()).isNull();

                proxy.refuse(false); // the acks free the places
                connect.get(10, TimeUnit.SECONDS);
                for (int i = 0; i < 4; i++) {
                    assertThat(allowed.get(i).get(10, TimeUnit.SECONDS)).isEqualTo(i + 1L);
                }
                assertThat(client.publish("limit/t", bytes("v6")).get(10, TimeUnit.SECONDS)).isEqualTo(5L);
            }
        }
    }
}
