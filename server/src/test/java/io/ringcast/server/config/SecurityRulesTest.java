package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigFixtures.assertRefused;
import static io.ringcast.server.config.ConfigFixtures.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import at.favre.lib.crypto.bcrypt.BCrypt;
import io.ringcast.server.config.ServerConfig.Security;
import io.ringcast.server.config.ServerConfig.Security.Principal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code security} checks that span keys ({@link SecurityRules}): each refusal names the key an
 * operator must fix, and each accepted edge stays accepted.
 */
class SecurityRulesTest {
    /** A real bcrypt hash, as scripts/hash-password.sh writes one (cost 4: quick to make). */
    private static final String HASH = BCrypt.withDefaults().hashToString(4, "correct horse".toCharArray());

    @TempDir
    Path dir;

    // --- TLS files --------------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource({"tlsCertificateFile, tlsPrivateKeyFile", "tlsPrivateKeyFile, tlsCertificateFile"})
    void oneTlsFileWithoutTheOtherIsRefusedNamingTheOneMissing(String given, String missing) throws IOException {
        Path pem = Files.writeString(dir.resolve("given.pem"), "-----BEGIN CERTIFICATE-----\n");

        assertRefused(security(given + ": " + yaml(pem)), "security." + missing,
                "key 'security." + missing + "' must be set too: TLS needs both security.tlsCertificateFile "
                        + "and security.tlsPrivateKeyFile, or neither");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tlsCertificateFile", "tlsPrivateKeyFile"})
    void aMissingTlsFileIsRefusedNamingTheFile(String missingKey) throws IOException {
        Path cert = Files.writeString(dir.resolve("cert.pem"), "-----BEGIN CERTIFICATE-----\n");
        Path key = Files.writeString(dir.resolve("key.pem"), "-----BEGIN PRIVATE KEY-----\n");
        Path missing = dir.resolve("no-such.pem");
        boolean certMissing = missingKey.equals("tlsCertificateFile");

        assertRefused(security("tlsCertificateFile: " + yaml(certMissing ? missing : cert),
                        "tlsPrivateKeyFile: " + yaml(certMissing ? key : missing)),
                "security." + missingKey, "key 'security." + missingKey + "': cannot read file " + quoted(missing));
    }

    @Test
    void aReadableCertificateAndKeyTurnTlsOn() throws IOException {
        Path cert = Files.writeString(dir.resolve("cert.pem"), "-----BEGIN CERTIFICATE-----\n");
        Path key = Files.writeString(dir.resolve("key.pem"), "-----BEGIN PRIVATE KEY-----\n");

        Security s = load(security("tlsCertificateFile: " + yaml(cert), "tlsPrivateKeyFile: " + yaml(key)));

        assertThat(s.tls()).isTrue();
        assertThat(ServerConfig.defaults().security().tls()).as("the default: plain").isFalse();
    }

    @Test
    void aMissingRs256PublicKeyFileIsRefusedNamingTheFile() {
        Path pem = dir.resolve("jwt-public.pem");

        assertRefused(security("jwtRs256PublicKeyFile: " + yaml(pem)), "security.jwtRs256PublicKeyFile",
                "key 'security.jwtRs256PublicKeyFile': cannot read file " + quoted(pem));
    }

    // --- origins ----------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"https://app.example.com", "http://localhost:8080", "https://[::1]:8443", "http://a"})
    void anOriginOfSchemeHostAndPortIsAccepted(String origin) {
        assertThat(load(security("allowedOrigins: [\"" + origin + "\"]")).allowedOrigins()).containsExactly(origin);
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://app.example.com/", "https://app.example.com/page", "app.example.com",
        "ftp://app.example.com", "*", "https://", "https://app example.com", "HTTPS://app.example.com"})
    void anOriginThatIsNotSchemeAndHostIsRefusedNamingItsIndex(String origin) {
        assertRefused(security("allowedOrigins: [\"https://ok.example.com\", \"" + origin + "\"]"),
                "security.allowedOrigins[1]",
                "key 'security.allowedOrigins[1]' must be an origin like https://app.example.com (scheme and host, "
                        + "optional port, no path), got " + ConfigText.quote(origin));
    }

    // --- HS256 secret -----------------------------------------------------------------------------

    @Test
    void anHs256SecretOf31BytesIsRefusedAnd32AreAccepted() {
        assertRefused(security("jwtHs256Secret: \"" + "s".repeat(31) + "\""), "security.jwtHs256Secret",
                "key 'security.jwtHs256Secret' must be at least 32 bytes (HS256 needs a 256-bit secret), "
                        + "got 31 characters");
        assertThat(load(security("jwtHs256Secret: \"" + "s".repeat(32) + "\"")).jwtHs256Secret()).hasSize(32);
    }

    @Test
    void theHs256SecretIsMeasuredInUtf8BytesNotCharacters() {
        // 11 euro signs are 11 characters but 33 bytes: enough key material
        assertThat(load(security("jwtHs256Secret: \"" + "€".repeat(11) + "\"")).jwtHs256Secret()).hasSize(11);
        // 10 are 30 bytes: not enough, though 10 characters of a 32-character rule might look close
        assertThat(refusal(security("jwtHs256Secret: \"" + "€".repeat(10) + "\"")).key())
                .hasValue("security.jwtHs256Secret");
    }

    @Test
    void theRefusalOfAShortSecretNeverShowsTheSecret() {
        ConfigException e = refusal(security("jwtHs256Secret: \"hunter2-is-my-secret\""));

        assertThat(e).hasMessageNotContaining("hunter2");
    }

    // --- roles ------------------------------------------------------------------------------------

    @Test
    void aRoleDefinedTwiceIsRefusedNamingTheSecondEntry() {
        assertRefused(security("anonymousRoles: []", "roles:",
                        "  - {name: reader, subscribe: [\"a/#\"], publish: []}",
                        "  - {name: writer, subscribe: [], publish: [\"a/#\"]}",
                        "  - {name: reader, subscribe: [\"b/#\"], publish: []}"),
                "security.roles[2].name", "key 'security.roles[2].name': role 'reader' is defined twice");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"\"", "\" \""})
    void aRoleWithoutANameIsRefused(String name) {
        assertRefused(security("anonymousRoles: []", "roles: [{name: " + name + ", subscribe: [], publish: []}]"),
                "security.roles[0].name", "key 'security.roles[0].name' must name the role");
    }

    @Test
    void anInvalidGrantIsRefusedNamingTheRoleTheListAndTheIndex() {
        assertRefused(security("anonymousRoles: []",
                        "roles: [{name: r, subscribe: [\"a/#\"], publish: [\"b/+\", \"c/#/d\"]}]"),
                "security.roles[0].publish[1]",
                "key 'security.roles[0].publish[1]': invalid selector 'c/#/d': '#' must be the last segment");
    }

    @Test
    void aGrantLongerThanTheTopicPathLimitIsAcceptedSinceItOnlyMatchesNothing() {
        String longGrant = "a/".repeat(40) + "#"; // 81 bytes, 41 segments: past limits below, still a selector

        Security s = load("limits: {maxPathBytes: 64, maxPathDepth: 8}\n"
                + security("anonymousRoles: []", "roles: [{name: r, subscribe: [\"" + longGrant + "\"], publish: []}]"));

        assertThat(s.role("r").subscribe()).containsExactly(longGrant);
    }

    @Test
    void replacingTheRolesWithoutDemoWhileAnonymousSessionsStillHoldDemoIsRefused() {
        assertRefused(security("roles: [{name: reader, subscribe: [\"#\"], publish: []}]"),
                "security.anonymousRoles",
                "key 'security.anonymousRoles' names role 'demo', which security.roles does not define "
                        + "(defined: [reader])");
    }

    @Test
    void noAnonymousRolesIsAcceptedAndRefusesAnonymousSessions() {
        assertThat(load(security("anonymousRoles: []")).anonymousRoles()).isEmpty();
    }

    // --- principals -------------------------------------------------------------------------------

    @Test
    void aPrincipalWithAHashAndDefinedRolesIsAccepted() {
        Security s = load(security("principals: [{name: alice, passwordHash: \"" + HASH + "\", roles: [demo]}]"));

        assertThat(s.principals()).containsExactly(new Principal("alice", HASH, List.of("demo")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"$2a$", "$2b$", "$2y$"})
    void everyBcryptVersionPrefixIsAccepted(String prefix) {
        String hash = prefix + HASH.substring(4);

        assertThat(load(security(principal("alice", hash, "demo"))).principals().get(0).passwordHash())
                .isEqualTo(hash);
    }

    @ParameterizedTest
    @ValueSource(strings = {"$2x$", "$1$", "$2a$4$"})
    void aHashOfAnotherSchemeIsRefused(String prefix) {
        String hash = prefix + HASH.substring(7);

        assertThat(refusal(security(principal("alice", hash, "demo"))).key())
                .hasValue("security.principals[0].passwordHash");
    }

    @Test
    void aHashCutShortIsRefused() {
        assertThat(refusal(security(principal("alice", HASH.substring(0, 59), "demo"))).key())
                .hasValue("security.principals[0].passwordHash");
    }

    @Test
    void aPasswordWrittenInsteadOfItsHashIsRefusedWithoutEchoingIt() {
        ConfigException e = refusal(security(principal("alice", "Tr0ub4dor&3", "demo")));

        assertThat(e).hasMessage("key 'security.principals[0].passwordHash' must be a bcrypt hash ($2a$, $2b$ or "
                + "$2y$, 60 characters; make one with scripts/hash-password.sh), not the password itself");
        assertThat(e.key()).hasValue("security.principals[0].passwordHash");
    }

    @Test
    void aPrincipalNamedTwiceIsRefusedNamingTheSecondEntry() {
        assertRefused(security("principals:",
                        "  - {name: alice, passwordHash: \"" + HASH + "\", roles: [demo]}",
                        "  - {name: bob, passwordHash: \"" + HASH + "\", roles: []}",
                        "  - {name: alice, passwordHash: \"" + HASH + "\", roles: []}"),
                "security.principals[2].name",
                "key 'security.principals[2].name' must be a name no other principal has, got \"alice\"");
    }

    @Test
    void aPrincipalWithABlankNameIsRefused() {
        assertRefused(security(principal(" ", HASH, "demo")), "security.principals[0].name",
                "key 'security.principals[0].name' must be a name no other principal has, got \" \"");
    }

    @Test
    void aPrincipalHoldingAnUndefinedRoleIsRefusedNamingItsRoles() {
        assertRefused(security(principal("alice", HASH, "trader")), "security.principals[0].roles",
                "key 'security.principals[0].roles' names role 'trader', which security.roles does not define "
                        + "(defined: [demo])");
    }

    // ---------------------------------------------------------------------------------------------

    /** A {@code security} section of the given lines, each indented under it. */
    private static String security(String... lines) {
        StringBuilder yaml = new StringBuilder("security:\n");
        for (String line : lines) {
            yaml.append("  ").append(line).append('\n');
        }
        return yaml.toString();
    }

    private static String principal(String name, String hash, String role) {
        return "principals: [{name: \"" + name + "\", passwordHash: \"" + hash + "\", roles: [" + role + "]}]";
    }

    private static Security load(String yaml) {
        return ConfigLoader.fromYaml(yaml).security();
    }

    /** As YAML writes it: a double-quoted string. */
    private static String yaml(Path file) {
        return "\"" + file + "\"";
    }

    /** As the refusal shows it. */
    private static String quoted(Path file) {
        return ConfigText.quote(file.toString());
    }
}
