package io.ringcast.it;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.ServerCounter.ORIGIN_REFUSALS;
import static io.ringcast.server.ServerCounter.SESSIONS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code security}: TLS from PEM files on the one port ({@code wss://}, {@code https://}), and
 * {@code allowedOrigins} refusing pages of other sites at the upgrade, with real clients and a real
 * browser. Test certificate: {@code src/test/resources/tls/} (self-signed, localhost and 127.0.0.1).
 */
@Timeout(90)
class TlsAndOriginTest {
    static final Path CERTIFICATE = Path.of("src/test/resources/tls/server.crt").toAbsolutePath();
    static final Path KEY = Path.of("src/test/resources/tls/server.key").toAbsolutePath();
    static final String TLS = "security:\n  tlsCertificateFile: \"" + CERTIFICATE + "\"\n  tlsPrivateKeyFile: \""
            + KEY + "\"\n" + TestServers.OPEN_TO_ANONYMOUS;

    private static RingcastClient.Builder client(String url) {
        return RingcastClient.builder().addresses(url).connectTimeout(Duration.ofSeconds(3));
    }

    @Test
    void javaClientSubscribesAndPublishesOverWss() throws Exception {
        try (RingcastServer server = TestServers.start(TLS);
             RingcastClient client = client(server.webSocketUrl()).trustedCertificates(CERTIFICATE).build()) {
            assertThat(server.webSocketUrl()).startsWith("wss://127.0.0.1:");
            client.connect().get(10, TimeUnit.SECONDS);
            Recorded got = new Recorded();
            client.subscribe("tls/#", got).confirmed().get(10, TimeUnit.SECONDS);
            assertThat(client.publish("tls/t", "secret".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS))
                    .isEqualTo(1L);
            Await.until(() -> got.updates.size() == 1, "the update over TLS");
            assertThat(got.updates.get(0)).isEqualTo(new Recorded.Got("tls/t", 1, UpdateKind.UPDATE, "secret"));
        }
    }

    @Test
    void clientThatDoesNotTrustTheCertificateOrSpeaksPlainTcpGetsNoSession() throws Exception {
        try (RingcastServer server = TestServers.start(TLS)) {
            try (RingcastClient untrusting = client(server.webSocketUrl()).build()) { // the JDK's trust store
                assertThatThrownBy(() -> untrusting.connect().get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .satisfies(e -> assertThat(messages(e)).as("says what to do, not a raw PKIX error")
                                .contains("the server's TLS certificate is not trusted").contains("trustedCertificates")
                                .contains("--trust"));
            }
            String plain = server.webSocketUrl().replace("wss://", "ws://");
            try (RingcastClient plainClient = client(plain).build()) {
                assertThatThrownBy(() -> plainClient.connect().get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .satisfies(e -> assertThat(messages(e)).as("points at wss://")
                                .contains("if that port takes TLS, use wss://"));
            }
            assertThat(server.stats().get(SESSIONS)).isZero();
        }
    }

    /** The messages of a failure and its causes, one after another. */
    private static String messages(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append(t.getMessage()).append(" | ");
        }
        return b.toString();
    }

    @Test
    void healthIsServedOverHttps() throws Exception {
        try (RingcastServer server = TestServers.start(TLS)) {
            HttpClient https = HttpClient.newBuilder().sslContext(trusting(CERTIFICATE)).build();
            HttpResponse<String> health = https.send(HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + server.port() + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"");
        }
    }

    @Test
    void browserLoadsThePageOverHttpsAndReceivesOverWss() throws Exception {
        try (RingcastServer server = TestServers.start(TLS + "demo:\n  enabled: true\n  instruments: 10\n");
             Chromium chromium = new Chromium("--ignore-certificate-errors")) { // the test certificate is self-signed
            chromium.open("https://127.0.0.1:" + server.port() + "/");
            chromium.waitFor("document.body.dataset.state === 'connected' && window.ringcastDemo.stats.received > 50",
                    "the demo page to receive over wss://");
            assertThat(chromium.eval("window.ringcastDemo.client.url")).asString().startsWith("wss://");
        }
    }

    @Test
    void pageOfAnotherOriginIsRefusedAtTheUpgradeAndOthersCarryOn() throws Exception {
        String config = "security:\n  allowedOrigins: [\"https://app.example.com\"]\n" + TestServers.OPEN_TO_ANONYMOUS;
        try (RingcastServer server = TestServers.start(config);
             RingcastClient program = client(server.webSocketUrl()).build()) { // sends no Origin: not concerned
            program.connect().get(10, TimeUnit.SECONDS);
            Recorded got = new Recorded();
            program.subscribe("origin/#", got).confirmed().get(10, TimeUnit.SECONDS);

            assertThatThrownBy(() -> new WireSocket(server.webSocketUrl(), null, 0,
                    Map.of("Origin", "https://evil.example.com")))
                    .isInstanceOf(IOException.class).hasMessageContaining("403");
            try (WireSocket allowed = new WireSocket(server.webSocketUrl(), null, 0,
                    Map.of("Origin", "https://APP.example.com"))) {
                allowed.hello(); // origins compare case-insensitively
            }
            // a real page: its origin is http://127.0.0.1:PORT, which is not listed
            try (Chromium chromium = new Chromium()) {
                chromium.open("http://127.0.0.1:" + server.port() + "/");
                Object refused = chromium.run("""
                        const rc = await import('/js/ringcast.js');
                        try { await rc.connect(args[0], { connectTimeoutMs: 2000 }); return 'connected'; }
                        catch (e) { return 'refused: ' + e.message; }
                        """, server.webSocketUrl());
                assertThat(refused).asString().startsWith("refused");
            }
            assertThat(program.publish("origin/t", "still here".getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS)).isEqualTo(1L);
            Await.until(() -> got.updates.size() == 1, "the program's subscription to carry on");
            assertThat(server.stats().get(ORIGIN_REFUSALS)).isGreaterThanOrEqualTo(2); // the socket, and the page's tries
        }
    }

    @Test
    void incompleteTlsSettingsStopTheStartNamingTheKey() {
        assertThatThrownBy(() -> TestServers.start("security:\n  tlsCertificateFile: \"" + CERTIFICATE + "\"\n"
                + TestServers.OPEN_TO_ANONYMOUS))
                .hasMessageContaining("security.tlsPrivateKeyFile");
        assertThatThrownBy(() -> TestServers.start("security:\n  tlsCertificateFile: \"/nonexistent/cert.pem\"\n"
                + "  tlsPrivateKeyFile: \"" + KEY + "\"\n" + TestServers.OPEN_TO_ANONYMOUS))
                .hasMessageContaining("security.tlsCertificateFile").hasMessageContaining("/nonexistent/cert.pem");
    }

    /** An SSLContext trusting the certificates of one PEM file. */
    static SSLContext trusting(Path pem) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(pem)) {
            trust.setCertificateEntry("test", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }
}
