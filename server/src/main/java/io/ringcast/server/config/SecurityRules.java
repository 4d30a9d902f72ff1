package io.ringcast.server.config;

import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.server.config.ServerConfig.Security;
import io.ringcast.server.config.ServerConfig.Security.Principal;
import io.ringcast.server.config.ServerConfig.Security.Role;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The checks on section {@code security} that span keys: TLS files in pairs and readable, origins,
 * the HS256 secret's length, roles defined once and every role a principal or
 * {@code anonymousRoles} names defined, grants that parse as selectors, bcrypt hashes. Each throws a
 * {@link ConfigException} naming the first bad key.
 */
final class SecurityRules {

    private SecurityRules() {
    }

    /** Checks {@code security}; throws {@link ConfigException} naming the first bad key. */
    static void validate(Security security) {
        if (security.tlsCertificateFile().isEmpty() != security.tlsPrivateKeyFile().isEmpty()) {
            String missing = security.tlsCertificateFile().isEmpty()
                    ? "security.tlsCertificateFile" : "security.tlsPrivateKeyFile";
            throw new ConfigException(missing, "key '" + missing + "' must be set too: TLS needs both "
                    + "security.tlsCertificateFile and security.tlsPrivateKeyFile, or neither");
        }
        readable("security.tlsCertificateFile", security.tlsCertificateFile());
        readable("security.tlsPrivateKeyFile", security.tlsPrivateKeyFile());
        readable("security.jwtRs256PublicKeyFile", security.jwtRs256PublicKeyFile());
        for (int i = 0; i < security.allowedOrigins().size(); i++) {
            String origin = security.allowedOrigins().get(i);
            String key = "security.allowedOrigins[" + i + "]";
            if (origin == null || !origin.matches("https?://[^/\\s]+")) {
                throw new ConfigException(key, "key '" + key + "' must be an origin like https://app.example.com "
                        + "(scheme and host, optional port, no path), got " + ConfigText.quote(String.valueOf(origin)));
            }
        }
        if (!security.jwtHs256Secret().isEmpty() && security.jwtHs256Secret().getBytes(StandardCharsets.UTF_8).length < 32) {
            throw new ConfigException("security.jwtHs256Secret", "key 'security.jwtHs256Secret' must be at least "
                    + "32 bytes (HS256 needs a 256-bit secret), got " + security.jwtHs256Secret().length() + " characters");
        }
        Set<String> roleNames = new HashSet<>();
        for (int i = 0; i < security.roles().size(); i++) {
            Role r = security.roles().get(i);
            String key = "security.roles[" + i + "]";
            if (r.name() == null || r.name().isBlank()) {
                throw new ConfigException(key + ".name", "key '" + key + ".name' must name the role");
            }
            if (!roleNames.add(r.name())) {
                throw new ConfigException(key + ".name", "key '" + key + ".name': role '" + r.name()
                        + "' is defined twice");
            }
            selectors(key + ".subscribe", r.subscribe());
            selectors(key + ".publish", r.publish());
        }
        knownRoles("security.anonymousRoles", security.anonymousRoles(), roleNames);
        Set<String> principalNames = new HashSet<>();
        for (int i = 0; i < security.principals().size(); i++) {
            Principal p = security.principals().get(i);
            String key = "security.principals[" + i + "]";
            if (p.name() == null || p.name().isBlank() || !principalNames.add(p.name())) {
                throw new ConfigException(key + ".name", "key '" + key + ".name' must be a name no other "
                        + "principal has, got " + ConfigText.quote(String.valueOf(p.name())));
            }
            if (p.passwordHash() == null || !p.passwordHash().matches("\\$2[aby]\\$\\d\\d\\$[./A-Za-z0-9]{53}")) {
                throw new ConfigException(key + ".passwordHash", "key '" + key + ".passwordHash' must be a bcrypt "
                        + "hash ($2a$, $2b$ or $2y$, 60 characters; make one with scripts/hash-password.sh), "
                        + "not the password itself");
            }
            knownRoles(key + ".roles", p.roles(), roleNames);
        }
    }

    /** Syntax only: a grant longer than limits.maxPathBytes allows is harmless (it matches nothing). */
    private static void selectors(String key, List<String> selectors) {
        if (selectors == null) {
            throw new ConfigException(key, "key '" + key + "' must be a list of selectors (may be empty)");
        }
        for (int i = 0; i < selectors.size(); i++) {
            try {
                Selector.parse(selectors.get(i), PathLimits.WIDEST);
            } catch (ProtocolException e) {
                throw new ConfigException(key + "[" + i + "]", "key '" + key + "[" + i + "]': " + e.reason());
            }
        }
    }

    private static void knownRoles(String key, List<String> names, Set<String> roleNames) {
        if (names == null) {
            throw new ConfigException(key, "key '" + key + "' must be a list of role names (may be empty)");
        }
        for (String name : names) {
            if (!roleNames.contains(name)) {
                throw new ConfigException(key, "key '" + key + "' names role '" + name
                        + "', which security.roles does not define (defined: " + roleNames + ")");
            }
        }
    }

    private static void readable(String key, String file) {
        if (!file.isEmpty() && !Files.isReadable(Path.of(file))) {
            throw new ConfigException(key, "key '" + key + "': cannot read file " + ConfigText.quote(file));
        }
    }

}
