package io.ringcast.it;

import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.ringcast.server.ServerCounter.CONNECTIONS_BEFORE_UPGRADE;
import static io.ringcast.server.ServerCounter.CONNECTIONS_REFUSED_BEFORE_UPGRADE;
import static io.ringcast.server.ServerCounter.HTTP_TIMEOUTS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP phase of a connection, from its accept (and TLS handshake) to its WebSocket upgrade, is
 * bounded in time by {@code limits.handshakeTimeoutMs} and in number by
 * {@code limits.maxConnectionsBeforeUpgrade}. Each test holds connections open before the upgrade
 * the way an attacker would (half-sent requests, headers one byte at a time, an idle keep-alive,
 * a TCP connection that never starts TLS) and checks that the server refuses the excess at once,
 * closes the rest at the deadline, never holds more than the limit, and that a witness session
 * misses nothing meanwhile.
 */
@Timeout(90)
class HttpPhaseDeadlineTest {
    private static final long DEADLINE_MS = 1000;
    /** Scheduling slack on a loaded two-core machine: a connection must be closed by DEADLINE_MS + this. */
    private static final long MARGIN_MS = 1500;
    /** The request line and two headers of an upgrade, without the blank line that would end it. */
    private static final byte[] HALF_UPGRADE = ascii("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n");
    private static final byte[] FULL_UPGRADE = ascii("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");

    private static String limits(int maxConnectionsBeforeUpgrade) {
        return "limits:\n  handshakeTimeoutMs: " + DEADLINE_MS + "\n  maxConnectionsBeforeUpgrade: "
                + maxConnectionsBeforeUpgrade + "\n";
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    // ------------------------------------------------------------------ the server's own account

    private static int openBeforeUpgrade(RingcastServer server) {
        return Math.toIntExact(server.stats().get(CONNECTIONS_BEFORE_UPGRADE));
    }

    private static long refusedBeforeUpgrade(RingcastServer server) {
        return server.stats().get(CONNECTIONS_REFUSED_BEFORE_UPGRADE);
    }

    private static long httpTimeouts(RingcastServer server) {
        return server.stats().get(HTTP_TIMEOUTS);
    }

    // ------------------------------------------------------------------ tests

    @Test
    void halfSentUpgradesBeyondTheLimitAreRefusedAtOnceAndTheOthersClosedAtTheDeadline() throws Exception {
        int limit = 200;
        int attackers = 1500;
        try (RingcastServer server = TestServers.start(limits(limit));
             Witness witness = Witness.start(server);
             HighWaterMark open = new HighWaterMark(() -> openBeforeUpgrade(server));
             WatchedConnections crowd = new WatchedConnections()) {
            long started = System.nanoTime();
            for (int i = 0; i < attackers; i++) {
                crowd.open(server.port(), HALF_UPGRADE);
            }
            long openingMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            crowd.awaitAllClosed(Duration.ofMillis(DEADLINE_MS + MARGIN_MS));

            List<WatchedConnections.Conn> refused = new ArrayList<>();
            List<WatchedConnections.Conn> timedOut = new ArrayList<>();
            for (WatchedConnections.Conn c : crowd.all) {
                (c.closedAfterMs() < DEADLINE_MS / 2 ? refused : timedOut).add(c);
            }
            assertThat(open.max()).as("connections before the upgrade the server held at once").isEqualTo(limit);
            assertThat(refused).as("connections refused at once").isNotEmpty();
            for (WatchedConnections.Conn c : timedOut) {
                assertThat(c.closedAfterMs()).as("ms from a half-sent upgrade to its close")
                        .isBetween(DEADLINE_MS * 9 / 10, DEADLINE_MS + MARGIN_MS);
                assertThat(c.received()).as("what a connection closed at the deadline read")
                        .startsWith("HTTP/1.1 408 Request Timeout\r\n").containsIgnoringCase("connection: close")
                        .contains("limits.handshakeTimeoutMs = " + DEADLINE_MS);
            }
            // at most `limit` admitted per deadline while the crowd was arriving
            assertThat((long) timedOut.size()).as("connections admitted (opening took %d ms)", openingMs)
                    .isLessThanOrEqualTo(limit * (openingMs / DEADLINE_MS + 2));
            Await.until(() -> refusedBeforeUpgrade(server) == refused.size() && httpTimeouts(server) == timedOut.size(),
                    "the server to count " + refused.size() + " refusals and " + timedOut.size() + " timeouts; counted "
                            + refusedBeforeUpgrade(server) + " and " + httpTimeouts(server));
            Await.until(() -> openBeforeUpgrade(server) == 0, "every place before the upgrade to be released");

            try (RawWebSocket fresh = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                fresh.publish(1, "after/abuse", "ok");
                fresh.await("PUBLISH_ACK");
                assertThat(openBeforeUpgrade(server)).as("places held with three sessions upgraded").isZero();
            }
            witness.stopAndVerify();
        }
    }

    @Test
    void slowlorisUpgradesAreClosedAtTheDeadlineNotWhenTheirHeadersHaveTrickledIn() throws Exception {
        int limit = 64;
        int attackers = 50;
        try (RingcastServer server = TestServers.start(limits(limit));
             Witness witness = Witness.start(server);
             HighWaterMark open = new HighWaterMark(() -> openBeforeUpgrade(server));
             WatchedConnections crowd = new WatchedConnections()) {
            for (int i = 0; i < attackers; i++) {
                crowd.open(server.port(), new byte[0]);
            }
            Thread trickle = new Thread(() -> {
                // one byte per connection every 200 ms: the whole request would take 30 s
                for (int sent = 0; sent < FULL_UPGRADE.length && !crowd.allClosed(); sent++) {
                    for (WatchedConnections.Conn c : crowd.all) {
                        c.send(new byte[] {FULL_UPGRADE[sent]});
                    }
                    try {
                        Thread.sleep(200); // the attack's pace, not a wait for an outcome
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "slowloris");
            trickle.setDaemon(true);
            trickle.start();
            crowd.awaitAllClosed(Duration.ofMillis(DEADLINE_MS + MARGIN_MS));
            trickle.interrupt();

            for (WatchedConnections.Conn c : crowd.all) {
                assertThat(c.closedAfterMs()).as("ms from connect to the server's close")
                        .isBetween(DEADLINE_MS * 9 / 10, DEADLINE_MS + MARGIN_MS);
                assertThat(c.sent()).as("bytes of the %d-byte upgrade sent before the close", FULL_UPGRADE.length)
                        .isLessThan(FULL_UPGRADE.length / 4);
            }
            assertThat(open.max()).as("connections before the upgrade the server held at once")
                    .isBetween(1, attackers);
            Await.until(() -> httpTimeouts(server) == attackers, "the server to count " + attackers + " timeouts");
            Await.until(() -> openBeforeUpgrade(server) == 0, "every place before the upgrade to be released");
            witness.stopAndVerify();
        }
    }

    @Test
    void idleKeepAliveIsClosedADeadlineAfterItsLastResponseAndAHalfSentRequestGets408() throws Exception {
        int limit = 64;
        try (RingcastServer server = TestServers.start(limits(limit));
             Witness witness = Witness.start(server);
             HighWaterMark open = new HighWaterMark(() -> openBeforeUpgrade(server));
             Socket keepAlive = connect(server.port());
             Socket halfSent = connect(server.port())) {
            // the first request comes late in the deadline on purpose: the next wait is counted from
            // the response, so the connection must outlive the accept's deadline
            Thread.sleep(DEADLINE_MS * 6 / 10);
            keepAlive.getOutputStream().write(ascii("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
            HttpReply health = HttpReply.read(keepAlive.getInputStream());
            long answered = System.nanoTime();
            assertThat(health.status()).isEqualTo("HTTP/1.1 200 OK");
            assertThat(health.headers().get("connection")).isNotEqualToIgnoringCase("close");

            HttpReply idle = HttpReply.read(keepAlive.getInputStream());
            long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - answered);
            assertThat(idle.status()).isEqualTo("HTTP/1.1 408 Request Timeout");
            assertThat(keepAlive.getInputStream().read()).as("the keep-alive connection closed after its 408").isEqualTo(-1);
            assertThat(idleMs).as("ms the keep-alive connection waited for a next request")
                    .isBetween(DEADLINE_MS * 9 / 10, DEADLINE_MS + MARGIN_MS);

            long sent = System.nanoTime();
            halfSent.getOutputStream().write(ascii("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
            HttpReply timeout = HttpReply.read(halfSent.getInputStream());
            assertThat(timeout.status()).isEqualTo("HTTP/1.1 408 Request Timeout");
            assertThat(timeout.headers().get("connection")).isEqualToIgnoringCase("close");
            assertThat(timeout.body()).contains("limits.handshakeTimeoutMs = " + DEADLINE_MS);
            assertThat(halfSent.getInputStream().read()).as("the half-sent request's connection closed").isEqualTo(-1);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).isLessThanOrEqualTo(DEADLINE_MS + MARGIN_MS);

            assertThat(open.max()).as("connections before the upgrade the server held at once").isBetween(1, 2);
            Await.until(() -> httpTimeouts(server) == 2, "the server to count both timeouts");
            Await.until(() -> openBeforeUpgrade(server) == 0, "every place before the upgrade to be released");
            witness.stopAndVerify();
        }
    }

    @Test
    void connectionThatNeverStartsTlsIsClosedAtTheDeadlineAndAHalfSentRequestOverTlsGets408() throws Exception {
        SSLContext trusting = TlsAndOriginTest.trusting(TlsAndOriginTest.CERTIFICATE);
        String config = limits(64) + "security:\n  tlsCertificateFile: \"" + TlsAndOriginTest.CERTIFICATE
                + "\"\n  tlsPrivateKeyFile: \"" + TlsAndOriginTest.KEY + "\"\n" + TestServers.OPEN_TO_ANONYMOUS;
        try (RingcastServer server = TestServers.start(config);
             Witness witness = Witness.start(server, trusting);
             HighWaterMark open = new HighWaterMark(() -> openBeforeUpgrade(server));
             Socket silent = connect(server.port())) {
            long connected = System.nanoTime();
            assertThat(readsToTheEnd(silent.getInputStream())).as("the silent TCP connection closed by the server").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - connected)).as("ms to close the silent connection")
                    .isBetween(DEADLINE_MS * 9 / 10, DEADLINE_MS + MARGIN_MS);

            try (SSLSocket halfSent = (SSLSocket) trusting.getSocketFactory().createSocket("127.0.0.1", server.port())) {
                halfSent.setSoTimeout((int) (DEADLINE_MS + MARGIN_MS + 1000));
                halfSent.startHandshake();
                halfSent.getOutputStream().write(ascii("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
                HttpReply timeout = HttpReply.read(halfSent.getInputStream());
                assertThat(timeout.status()).isEqualTo("HTTP/1.1 408 Request Timeout");
                assertThat(timeout.body()).contains("limits.handshakeTimeoutMs = " + DEADLINE_MS);
                assertThat(readsToTheEnd(halfSent.getInputStream())).as("closed after its 408").isTrue();
            }

            assertThat(open.max()).as("connections before the upgrade the server held at once").isBetween(1, 2);
            Await.until(() -> httpTimeouts(server) == 2, "the server to count both timeouts");
            Await.until(() -> openBeforeUpgrade(server) == 0, "every place before the upgrade to be released");
            witness.stopAndVerify();
        }
    }

    // ------------------------------------------------------------------ helpers

    private static Socket connect(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        s.setSoTimeout((int) (DEADLINE_MS + MARGIN_MS + 1000)); // a read past this fails the test
        return s;
    }

    /** Reads until the server closes: true at end of stream or a reset (both are the server's close). */
    private static boolean readsToTheEnd(InputStream in) throws IOException {
        try {
            while (in.read() != -1) {
                // whatever the TLS layer sends on its way out
            }
            return true;
        } catch (SocketException reset) {
            return true;
        }
    }

    /** One HTTP/1.1 response with a {@code Content-Length}, read off a raw stream. */
    private record HttpReply(String status, Map<String, String> headers, String body) {
        static HttpReply read(InputStream in) throws IOException {
            String status = line(in);
            Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            for (String l = line(in); !l.isEmpty(); l = line(in)) {
                int colon = l.indexOf(':');
                headers.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
            }
            byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
            return new HttpReply(status, headers, new String(body, StandardCharsets.UTF_8));
        }

        private static String line(InputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c == -1) {
                    throw new IOException("connection closed inside a response, after: " + line);
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }

    /** The highest value a gauge of the server took while the test ran, sampled every millisecond. */
    private static final class HighWaterMark implements AutoCloseable {
        private final AtomicInteger max = new AtomicInteger();
        private final Thread thread;

        HighWaterMark(java.util.function.IntSupplier gauge) {
            thread = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    max.accumulateAndGet(gauge.getAsInt(), Math::max);
                    try {
                        Thread.sleep(1); // the sampling interval
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "high-water-mark");
            thread.setDaemon(true);
            thread.start();
        }

        int max() {
            return max.get();
        }

        @Override
        public void close() {
            thread.interrupt();
        }
    }

    /**
     * Raw TCP connections, as many as an attack needs, watched by one selector thread that notes
     * when the server closed each (end of stream or a reset) and keeps the first bytes it sent.
     * A selector rather than a thread per socket: 1,500 blocked readers would swamp two cores.
     */
    private static final class WatchedConnections implements AutoCloseable {
        final List<Conn> all = new CopyOnWriteArrayList<>();
        private final Selector selector = Selector.open();
        private final Queue<Conn> toRegister = new ConcurrentLinkedQueue<>();
        private final Thread thread;
        private volatile boolean running = true;

        static final class Conn {
            final SocketChannel channel;
            final long openedNs = System.nanoTime();
            private final AtomicLong closedNs = new AtomicLong();
            /** The first bytes the server sent; the selector thread writes them before {@link #closedNs}. */
            private final ByteArrayOutputStream received = new ByteArrayOutputStream();
            private volatile int sent;

            Conn(SocketChannel channel) {
                this.channel = channel;
            }

            /** Sends {@code bytes} unless the server has closed; a failed write is its close. */
            void send(byte[] bytes) {
                if (closedNs.get() != 0) {
                    return;
                }
                try {
                    channel.write(ByteBuffer.wrap(bytes));
                    sent += bytes.length;
                } catch (IOException closedByServer) {
                    closed();
                }
            }

            void closed() {
                closedNs.compareAndSet(0, System.nanoTime());
            }

            boolean isClosed() {
                return closedNs.get() != 0;
            }

            long closedAfterMs() {
                return TimeUnit.NANOSECONDS.toMillis(closedNs.get() - openedNs);
            }

            int sent() {
                return sent;
            }

            /** What the server sent before closing; read only once {@link #isClosed()}. */
            String received() {
                return received.toString(StandardCharsets.US_ASCII);
            }
        }

        WatchedConnections() throws IOException {
            thread = new Thread(this::watch, "watched-connections");
            thread.setDaemon(true);
            thread.start();
        }

        /** Connects to the loopback {@code port} and sends {@code firstBytes} at once. */
        Conn open(int port, byte[] firstBytes) throws IOException {
            SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            channel.configureBlocking(false);
            Conn c = new Conn(channel);
            all.add(c);
            if (firstBytes.length > 0) {
                c.send(firstBytes);
            }
            toRegister.add(c);
            selector.wakeup();
            return c;
        }

        boolean allClosed() {
            return all.stream().allMatch(Conn::isClosed);
        }

        /** Waits until the server has closed every connection, {@code each} at most after its opening. */
        void awaitAllClosed(Duration each) {
            Await.until(this::allClosed, each.plusSeconds(5), () -> all.stream().filter(c -> !c.isClosed()).count()
                    + " of " + all.size() + " connections still open, the server should have closed each within "
                    + each.toMillis() + " ms");
        }

        private void watch() {
            ByteBuffer buffer = ByteBuffer.allocate(4096);
            try {
                while (running) {
                    selector.select(10);
                    for (Conn c; (c = toRegister.poll()) != null; ) {
                        c.channel.register(selector, SelectionKey.OP_READ, c);
                    }
                    for (SelectionKey key : selector.selectedKeys()) {
                        Conn c = (Conn) key.attachment();
                        buffer.clear();
                        int n;
                        try {
                            n = c.channel.read(buffer);
                        } catch (IOException reset) {
                            n = -1;
                        }
                        if (n > 0 && c.received.size() < 1024) {
                            c.received.write(buffer.array(), 0, n);
                        } else if (n < 0) {
                            key.cancel();
                            c.closed();
                        }
                    }
                    selector.selectedKeys().clear();
                }
            } catch (IOException e) {
                throw new AssertionError("the selector failed", e);
            }
        }

        @Override
        public void close() throws IOException {
            running = false;
            selector.wakeup();
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (Conn c : all) {
                c.channel.close();
            }
            selector.close();
        }
    }
}
