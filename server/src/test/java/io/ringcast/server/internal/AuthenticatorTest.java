package io.ringcast.server.internal;

import at.favre.lib.crypto.bcrypt.BCrypt;
import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTCreator;
import com.auth0.jwt.algorithms.Algorithm;
import io.ringcast.protocol.Credentials;
import io.ringcast.server.config.ConfigLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Base64;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Authenticator}: who a client is from its credentials (anonymous, bcrypt password, HS256
 * or RS256 token) and the roles that gives it; every refusal names its reason class and never the
 * secret or the token.
 */
class AuthenticatorTest {
    private static final String SECRET = "0123456789abcdef0123456789abcdef-hs256";
    private static final String PASSWORD = "correct horse";
    @TempDir
    static Path dir;
    private static KeyPair rsa;
    private static Authenticator authenticator;

    @BeforeAll
    static void configure() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        rsa = generator.generateKeyPair();
        Path pem = dir.resolve("jwt.pem");
        Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(rsa.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n", StandardCharsets.US_ASCII);
        // cost 4, the lowest: the check is what is tested, not its slowness
        String hash = BCrypt.withDefaults().hashToString(4, PASSWORD.toCharArray());
        authenticator = new Authenticator(ConfigLoader.fromYaml(PermissionsTest.ROLES + """
                  principals:
                    - name: alice
                      passwordHash: "%s"
                      roles: [fx-trader]
                  jwtHs256Secret: "%s"
                  jwtRs256PublicKeyFile: "%s"
                """.formatted(hash, SECRET, pem)).security());
    }

    private static JWTCreator.Builder token(String subject, String... roles) {
        return JWT.create().withSubject(subject).withClaim("roles", List.of(roles))
                .withExpiresAt(Instant.now().plusSeconds(60));
    }

    private static String hs256(JWTCreator.Builder token) {
        return token.sign(Algorithm.HMAC256(SECRET));
    }

    private static Permissions login(Credentials credentials) throws Authenticator.Refused {
        return authenticator.authenticate(credentials);
    }

    private static String refusal(Credentials credentials) {
        try {
            login(credentials);
        } catch (Authenticator.Refused e) {
            assertThat(e.getMessage()).as("never the secret").doesNotContain(credentials.secret());
            return e.getMessage();
        }
        throw new AssertionError("not refused: " + credentials);
    }

    @Test
    void anonymousSessionGetsTheAnonymousRoles() throws Exception {
        Permissions anonymous = login(Credentials.ANONYMOUS);

        assertThat(anonymous.who()).isEqualTo("anonymous");
        assertThat(anonymous.mayRead(new String[]{"public", "news"})).isTrue();
        assertThat(anonymous.mayRead(new String[]{"fx", "EURUSD", "bid"})).isFalse();
    }

    @Test
    void anonymousSessionIsRefusedWhereNoAnonymousRolesAreConfigured() throws Exception {
        Authenticator closed = new Authenticator(ConfigLoader.fromYaml("security: {anonymousRoles: []}").security());

        assertThatThrownBy(() -> closed.authenticate(Credentials.ANONYMOUS))
                .isInstanceOf(Authenticator.Refused.class)
                .hasMessageStartingWith("anonymous sessions are not allowed here (security.anonymousRoles is empty)");
    }

    @Test
    void rightPasswordGivesThePrincipalsRoles() throws Exception {
        Permissions alice = login(Credentials.password("alice", PASSWORD));

        assertThat(alice.who()).isEqualTo("principal 'alice'");
        assertThat(alice.mayRead(new String[]{"fx", "EURUSD", "bid"})).isTrue();
        assertThat(alice.mayPublish(new String[]{"fx", "orders", "1"})).isTrue();
        assertThat(alice.mayRead(new String[]{"public", "news"})).as("not anonymous's roles").isFalse();
    }

    @Test
    void wrongPasswordAndUnknownPrincipalGetTheSameAnswer() {
        assertThat(refusal(Credentials.password("alice", "wrong horse"))).isEqualTo("unknown principal or wrong password");
        assertThat(refusal(Credentials.password("mallory", PASSWORD))).isEqualTo("unknown principal or wrong password");
    }

    @Test
    void onlyPasswordsAreSlowToCheck() {
        assertThat(Authenticator.slow(Credentials.password("alice", PASSWORD))).isTrue();
        assertThat(Authenticator.slow(Credentials.token("x.y.z"))).isFalse();
        assertThat(Authenticator.slow(Credentials.ANONYMOUS)).isFalse();
    }

    @Test
    void hs256TokenGivesItsRolesClaim() throws Exception {
        Permissions bob = login(Credentials.token(hs256(token("bob", "auditor"))));

        assertThat(bob.who()).isEqualTo("token of 'bob'");
        assertThat(bob.mayRead(new String[]{"anything"})).isTrue();
        assertThat(bob.mayPublish(new String[]{"anything"})).isFalse();
    }

    @Test
    void rs256TokenVerifiesAgainstTheConfiguredPublicKey() throws Exception {
        String signed = token("carol", "viewer").sign(Algorithm.RSA256(null, (RSAPrivateKey) rsa.getPrivate()));

        assertThat(login(Credentials.token(signed)).who()).isEqualTo("token of 'carol'");
    }

    @Test
    void rs256TokenOfAnotherKeyDoesNotVerify() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair other = generator.generateKeyPair();
        String signed = token("carol", "viewer").sign(Algorithm.RSA256((RSAPublicKey) other.getPublic(),
                (RSAPrivateKey) other.getPrivate()));

        assertThat(refusal(Credentials.token(signed))).isEqualTo("token signature does not verify");
    }

    @Test
    void tokenRefusalsNameTheirReasonClass() {
        assertThat(refusal(Credentials.token(hs256(token("bob", "viewer").withExpiresAt(Instant.now().minusSeconds(60))))))
                .isEqualTo("token expired");
        assertThat(refusal(Credentials.token(JWT.create().withSubject("bob").withClaim("roles", List.of("viewer"))
                .sign(Algorithm.HMAC256(SECRET))))).isEqualTo("token has no expiry (exp claim)");
        assertThat(refusal(Credentials.token(token("bob", "viewer").sign(Algorithm.HMAC256(SECRET + "-other")))))
                .isEqualTo("token signature does not verify");
        assertThat(refusal(Credentials.token(hs256(token("bob", "viewer").withNotBefore(Instant.now().plusSeconds(600))))))
                .isEqualTo("token not yet valid: its nbf claim is in the future");
        assertThat(refusal(Credentials.token(hs256(token("bob", "viewer").withIssuedAt(Instant.now().plusSeconds(600))))))
                .isEqualTo("token not yet valid: its iat claim is in the future");
        assertThat(refusal(Credentials.token("not-a-jwt"))).isEqualTo("token is not a JWT");
    }

    @Test
    void tokenRolesMustBeAListOfDefinedRoles() {
        assertThat(refusal(Credentials.token(hs256(JWT.create().withSubject("bob")
                .withExpiresAt(Instant.now().plusSeconds(60))))))
                .isEqualTo("token of 'bob' has no roles claim (a list of role names)");
        assertThat(refusal(Credentials.token(hs256(token("bob", "viewer", "root")))))
                .isEqualTo("token of 'bob' names role 'root', which this server does not define");
    }

    @Test
    void tokenOfAnotherAlgorithmIsRefusedNamingWhatIsAccepted() throws Exception {
        String hs512 = token("bob", "viewer").sign(Algorithm.HMAC512(SECRET + SECRET));
        assertThat(refusal(Credentials.token(hs512)))
                .isEqualTo("token signed with HS512, which this server does not accept (it accepts HS256 and RS256)");

        Authenticator noTokens = new Authenticator(ConfigLoader.fromYaml("").security());
        assertThatThrownBy(() -> noTokens.authenticate(Credentials.token(hs256(token("bob", "demo")))))
                .isInstanceOf(Authenticator.Refused.class)
                .hasMessage("token signed with HS256, which this server does not accept (it accepts no tokens: "
                        + "neither security.jwtHs256Secret nor security.jwtRs256PublicKeyFile is set)");
    }

    @Test
    void publicKeyFileWithoutAPemBlockIsRefusedNamingTheFile() throws Exception {
        Path notPem = dir.resolve("not.pem");
        Files.writeString(notPem, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");

        assertThatThrownBy(() -> Authenticator.rsaPublicKey(notPem)).isInstanceOf(GeneralSecurityException.class)
                .hasMessage(notPem + " holds no PEM \"PUBLIC KEY\" block");
    }
}
