package io.ringcast.it;

import at.favre.lib.crypto.bcrypt.BCrypt;
import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.UpdateKind;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.server.RingcastServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ringcast.server.ServerCounter.PROTOCOL_ERRORS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code security}: passwords (bcrypt), tokens (JWT, HS256 and RS256), roles granting subscribe and
 * publish selectors, the anonymous default. Each refusal has its documented outcome, and a
 * bystander keeps receiving throughout.
 */
@Timeout(90)
class AuthTest {
    static final String HS256_SECRET = "an HS256 secret of at least 32 bytes, for tests";
    static final String PASSWORD = "correct horse battery staple";
    static RingcastServer server;
    static KeyPair rsa;
    static RingcastClient bystander;
    static Recorded bystanderGot = new Recorded();

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("ringcast-auth");
        rsa = KeyPairGenerator.getInstance("RSA").generateKeyPair();
        Path publicKey = Files.writeString(dir.resolve("jwt.pub"), "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(rsa.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----\n");
        String hash = BCrypt.withDefaults().hashToString(10, PASSWORD.toCharArray());
        server = TestServers.start("""
                security:
                  anonymousRoles: ["demo"]
                  roles:
                    - name: "demo"
                      subscribe: ["demo/#"]
                      publish: ["demo/#"]
                    - name: "trader"
                      subscribe: ["fx/#"]
                      publish: ["fx/orders/#"]
                    - name: "admin"
                      subscribe: ["#"]
                      publish: ["#"]
                  principals:
                    - name: "alice"
                      passwordHash: "%s"
                      roles: ["trader"]
                    - name: "root"
                      passwordHash: "%s"
                      roles: ["admin"]
                  jwtHs256Secret: "%s"
                  jwtRs256PublicKeyFile: "%s"
                """.formatted(hash, hash, HS256_SECRET, publicKey));
        bystander = client().password("root", PASSWORD).build();
        bystander.connect().get(10, TimeUnit.SECONDS);
        bystander.subscribe("bystander/#", bystanderGot).confirmed().get(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        bystander.close();
        server.close();
    }

    private static RingcastClient.Builder client() {
        return RingcastClient.builder().addresses(server.webSocketUrl()).connectTimeout(Duration.ofSeconds(5));
    }

    private static String token(Algorithm algorithm, Instant expires, String... roles) {
        return JWT.create().withSubject("bob").withExpiresAt(expires).withArrayClaim("roles", roles).sign(algorithm);
    }

    private static Algorithm rs256(KeyPair keys) {
        return Algorithm.RSA256((RSAPublicKey) keys.getPublic(), (RSAPrivateKey) keys.getPrivate());
    }

    /** The bystander still receives: the refusal harmed no one else. */
    private static void othersCarryOn() throws Exception {
        long seq = bystander.publish("bystander/probe", "p".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        Await.until(() -> bystanderGot.lastSequence("bystander/probe") == seq, "the bystander's probe #" + seq);
    }

    private static RingcastException refusedLogin(RingcastClient.Builder builder) {
        try (RingcastClient c = builder.build()) {
            Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> c.connect().get(10, TimeUnit.SECONDS));
            assertThat(t).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(RingcastException.class);
            RingcastException e = (RingcastException) t.getCause();
            assertThat(e.code()).isEqualTo(ErrorCode.AUTHENTICATION_FAILED);
            return e;
        }
    }

    // ------------------------------------------------------------------ logins

    @Test
    void wrongPasswordAndUnknownPrincipalGetTheSameRefusalWithoutTheSecret() throws Exception {
        RingcastException wrong = refusedLogin(client().password("alice", "hunter2-not-it"));
        assertThat(wrong.getMessage()).contains("unknown principal or wrong password").doesNotContain("hunter2");
        RingcastException unknown = refusedLogin(client().password("mallory", PASSWORD));
        assertThat(unknown.getMessage()).contains("unknown principal or wrong password").doesNotContain(PASSWORD);
        othersCarryOn();
    }

    @Test
    void expiredTokenIsRefused() throws Exception {
        String expired = token(Algorithm.HMAC256(HS256_SECRET), Instant.now().minusSeconds(60), "trader");
        assertThat(refusedLogin(client().token(expired)).getMessage()).contains("token expired");
        othersCarryOn();
    }

    @Test
    void tokenNotValidBeforeAFutureTimeIsRefusedNamingTheNbfClaim() throws Exception {
        String early = JWT.create().withSubject("bob").withExpiresAt(Instant.now().plusSeconds(600))
                .withNotBefore(Instant.now().plusSeconds(300)).withArrayClaim("roles", new String[] {"trader"})
                .sign(Algorithm.HMAC256(HS256_SECRET));
        assertThat(refusedLogin(client().token(early)).getMessage())
                .endsWith("token not yet valid: its nbf claim is in the future").doesNotContain("Exception");
        othersCarryOn();
    }

    @Test
    void tokenIssuedInTheFutureIsRefusedNamingTheIatClaim() throws Exception {
        String fromTheFuture = JWT.create().withSubject("bob").withExpiresAt(Instant.now().plusSeconds(600))
                .withIssuedAt(Instant.now().plusSeconds(300)).withArrayClaim("roles", new String[] {"trader"})
                .sign(Algorithm.HMAC256(HS256_SECRET));
        assertThat(refusedLogin(client().token(fromTheFuture)).getMessage())
                .endsWith("token not yet valid: its iat claim is in the future").doesNotContain("Exception");
        othersCarryOn();
    }

    @Test
    void tokenWithABadSignatureIsRefused() throws Exception {
        String forgedHs = token(Algorithm.HMAC256("another secret, also 32 bytes or more"),
                Instant.now().plusSeconds(600), "admin");
        assertThat(refusedLogin(client().token(forgedHs)).getMessage()).contains("token signature does not verify");
        String forgedRs = token(rs256(KeyPairGenerator.getInstance("RSA").generateKeyPair()),
                Instant.now().plusSeconds(600), "admin");
        assertThat(refusedLogin(client().token(forgedRs)).getMessage()).contains("token signature does not verify");
        assertThat(refusedLogin(client().token("not.a.jwt")).getMessage()).contains("token is not a JWT");
        othersCarryOn();
    }

    @Test
    void validPasswordAndTokensOfBothAlgorithmsLogIn() throws Exception {
        for (RingcastClient.Builder b : List.of(client().password("alice", PASSWORD),
                client().token(token(Algorithm.HMAC256(HS256_SECRET), Instant.now().plusSeconds(600), "trader")),
                client().token(token(rs256(rsa), Instant.now().plusSeconds(600), "trader")))) {
            try (RingcastClient c = b.build()) {
                c.connect().get(10, TimeUnit.SECONDS);
                assertThat(c.publish("fx/orders/o1", "buy".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS))
                        .isPositive();
            }
        }
    }

    // ------------------------------------------------------------------ permissions

    @Test
    void publishWithoutPermissionIsRefusedAndTheSessionStaysUsable() throws Exception {
        try (RingcastClient alice = client().password("alice", PASSWORD).build()) {
            alice.connect().get(10, TimeUnit.SECONDS);
            assertThatThrownBy(() -> alice.publish("fx/prices/EURUSD", "1.08".getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RingcastException.class)
                    .satisfies(t -> {
                        RingcastException e = (RingcastException) t.getCause();
                        assertThat(e.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
                        assertThat(e.getMessage()).contains("fx/prices/EURUSD", "principal 'alice'");
                    });
            assertThat(alice.publish("fx/orders/o2", "sell".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS))
                    .as("the next, permitted publish").isPositive();
            othersCarryOn();
        }
    }

    @Test
    void subscriptionThatCanMatchNothingPermittedIsRefused() throws Exception {
        try (RingcastClient alice = client().password("alice", PASSWORD).build()) {
            alice.connect().get(10, TimeUnit.SECONDS);
            assertThatThrownBy(() -> alice.subscribe("secret/#", u -> { }).confirmed().get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RingcastException.class)
                    .satisfies(t -> assertThat(((RingcastException) t.getCause()).code())
                            .isEqualTo(ErrorCode.PERMISSION_DENIED));
            alice.subscribe("+/orders/#", u -> { }).confirmed().get(10, TimeUnit.SECONDS); // overlaps fx/#: fine
            othersCarryOn();
        }
    }

    @Test
    void subscriptionToEverythingSeesOnlyPermittedTopicsOldAndNew() throws Exception {
        bystander.publish("secret/before", "classified".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        bystander.publish("fx/rates/before", "1.08".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        try (RingcastClient alice = client().password("alice", PASSWORD).build()) {
            alice.connect().get(10, TimeUnit.SECONDS);
            Recorded got = new Recorded();
            alice.subscribe("#", got).confirmed().get(10, TimeUnit.SECONDS);
            bystander.publish("secret/after", "classified".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            bystander.publish("fx/rates/after", "1.09".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            Await.until(() -> got.lastSequence("fx/rates/after") == 1, "the permitted topic created later");
            assertThat(got.topics()).allMatch(t -> t.startsWith("fx/")).contains("fx/rates/before", "fx/rates/after");
            assertThat(got.of("fx/rates/before")).extracting(Recorded.Got::kind).containsExactly(UpdateKind.SNAPSHOT);
        }
    }

    @Test
    void anonymousSessionsGetTheDemoSubtreeOnly() throws Exception {
        try (RingcastClient anonymous = client().build()) {
            anonymous.connect().get(10, TimeUnit.SECONDS);
            assertThat(anonymous.publish("demo/chat/hi", "hi".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS))
                    .isPositive();
            assertThatThrownBy(() -> anonymous.publish("fx/orders/x", "no".getBytes(StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS)).hasMessageContaining("PERMISSION_DENIED");
            Recorded got = new Recorded();
            anonymous.subscribe("#", got).confirmed().get(10, TimeUnit.SECONDS);
            assertThat(got.topics()).isNotEmpty().allMatch(t -> t.startsWith("demo/"));
        }
        assertThat(server.stats().get(PROTOCOL_ERRORS)).isPositive();
    }

    @Test
    void browserLogsInWithATokenAndSeesOnlyWhatItsRolesGrant() throws Exception {
        bystander.publish("secret/browser", "classified".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        bystander.publish("fx/rates/browser", "1.10".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
        String valid = token(rs256(rsa), Instant.now().plusSeconds(600), "trader");
        String expired = token(rs256(rsa), Instant.now().minusSeconds(5), "trader");
        try (Chromium chromium = new Chromium()) {
            chromium.open("http://127.0.0.1:" + server.port() + "/");
            Object refused = chromium.run("""
                    const rc = await import('/js/ringcast.js');
                    try { await rc.connect(args[0], { credentials: { token: args[1] } }); return 'connected'; }
                    catch (e) { return e.code + ': ' + e.message; }
                    """, server.webSocketUrl(), expired);
            assertThat(refused).asString().startsWith("AUTHENTICATION_FAILED").contains("token expired")
                    .doesNotContain(expired);
            Object topics = chromium.run("""
                    const rc = await import('/js/ringcast.js');
                    const client = await rc.connect(args[0], { credentials: { token: args[1] } });
                    const seen = new Set();
                    await client.subscribe('#', u => seen.add(u.topic)).confirmed;
                    let denied;
                    try { await client.publish('fx/prices/EURUSD', 'x'); } catch (e) { denied = e.code; }
                    client.close();
                    return { topics: [...seen], denied };
                    """, server.webSocketUrl(), valid);
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) topics;
            @SuppressWarnings("unchecked") // the page's result is untyped JSON: a list of strings here
            List<String> topicsSeen = (List<String>) r.get("topics");
            assertThat(topicsSeen).contains("fx/rates/browser").allMatch(t -> t.startsWith("fx/"));
            assertThat(r.get("denied")).isEqualTo("PERMISSION_DENIED");
        }
        othersCarryOn();
    }

    @Test
    void serverWithoutAnonymousRolesRefusesClientsWithoutCredentials() throws Exception {
        try (RingcastServer closed = TestServers.start("security:\n  anonymousRoles: []\n");
             RingcastClient anonymous = RingcastClient.builder().addresses(closed.webSocketUrl()).build()) {
            Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> anonymous.connect().get(10, TimeUnit.SECONDS));
            assertThat(t.getCause()).isInstanceOf(RingcastException.class)
                    .hasMessageContaining("anonymous sessions are not allowed");
        }
    }
}
