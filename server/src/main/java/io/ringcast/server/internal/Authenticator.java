package io.ringcast.server.internal;

import at.favre.lib.crypto.bcrypt.BCrypt;
import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTVerifier;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.exceptions.AlgorithmMismatchException;
import com.auth0.jwt.exceptions.IncorrectClaimException;
import com.auth0.jwt.exceptions.JWTDecodeException;
import com.auth0.jwt.exceptions.JWTVerificationException;
import com.auth0.jwt.exceptions.MissingClaimException;
import com.auth0.jwt.exceptions.SignatureVerificationException;
import com.auth0.jwt.exceptions.TokenExpiredException;
import com.auth0.jwt.interfaces.DecodedJWT;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.PathLimits;
import io.ringcast.server.config.ServerConfig;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Who a client is, from the credentials at the end of its {@code HELLO}, and so what it may do
 * ({@link Permissions}). Anonymous sessions get {@code security.anonymousRoles}; a password is
 * checked against the principal's bcrypt hash (deliberately slow: call {@link #authenticate} off
 * the event loops for passwords); a token is a JWT signed with HS256 or RS256 whose {@code sub}
 * names the principal, whose {@code roles} claim lists its roles, whose {@code exp} must be in
 * the future and whose {@code nbf} and {@code iat}, when present, must not be. Failures name the
 * reason class, never the secret. Immutable; any thread.
 */
final class Authenticator {
    /** Why a login failed, in words safe to send to the client and to log. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String reason) {
            super(reason, null, false, false);
        }
    }

    private final ServerConfig.Security security;
    private final Map<String, ServerConfig.Security.Principal> principals = new HashMap<>();
    private final JWTVerifier hs256;
    private final JWTVerifier rs256;
    private final Permissions anonymous;

    Authenticator(ServerConfig.Security security) throws IOException, GeneralSecurityException {
        this.security = security;
        security.principals().forEach(p -> principals.put(p.name(), p));
        this.hs256 = security.jwtHs256Secret().isEmpty() ? null
                : JWT.require(Algorithm.HMAC256(security.jwtHs256Secret())).build();
        this.rs256 = security.jwtRs256PublicKeyFile().isEmpty() ? null
                : JWT.require(Algorithm.RSA256(rsaPublicKey(Path.of(security.jwtRs256PublicKeyFile())), null)).build();
        this.anonymous = security.anonymousRoles().isEmpty() ? null
                : Permissions.of(security, security.anonymousRoles(), "anonymous", PathLimits.WIDEST);
    }

    /** Whether checking these credentials takes long enough to keep it off an event loop. */
    static boolean slow(Credentials credentials) {
        return credentials.kind() == Credentials.PASSWORD;
    }

    Permissions authenticate(Credentials credentials) throws Refused {
        switch (credentials.kind()) {
            case Credentials.NONE:
                if (anonymous == null) {
                    throw new Refused("anonymous sessions are not allowed here (security.anonymousRoles is empty): "
                            + "send a password or a token");
                }
                return anonymous;
            case Credentials.PASSWORD:
                return password(credentials.principal(), credentials.secret());
            case Credentials.TOKEN:
                return token(credentials.secret());
            default:
                throw new Refused("unknown kind of credentials " + credentials.kind());
        }
    }

    private Permissions password(String name, String password) throws Refused {
        ServerConfig.Security.Principal principal = principals.get(name);
        // the same answer either way: a refusal must not tell which names exist
        if (principal == null || !BCrypt.verifyer().verify(password.getBytes(StandardCharsets.UTF_8),
                principal.passwordHash().getBytes(StandardCharsets.UTF_8)).verified) {
            throw new Refused("unknown principal or wrong password");
        }
        return Permissions.of(security, principal.roles(), "principal '" + name + "'", PathLimits.WIDEST);
    }

    private Permissions token(String token) throws Refused {
        DecodedJWT jwt;
        try {
            jwt = JWT.decode(token);
        } catch (JWTDecodeException e) {
            throw new Refused("token is not a JWT");
        }
        JWTVerifier verifier = switch (jwt.getAlgorithm()) {
            case "HS256" -> hs256;
            case "RS256" -> rs256;
            default -> null;
        };
        if (verifier == null) {
            throw new Refused("token signed with " + jwt.getAlgorithm() + ", which this server does not accept "
                    + "(it accepts " + accepted() + ")");
        }
        if (jwt.getExpiresAt() == null) {
            throw new Refused("token has no expiry (exp claim)");
        }
        try {
            verifier.verify(jwt);
        } catch (TokenExpiredException e) {
            throw new Refused("token expired");
        } catch (SignatureVerificationException | AlgorithmMismatchException e) {
            throw new Refused("token signature does not verify");
        } catch (IncorrectClaimException e) {
            throw new Refused(switch (e.getClaimName()) {
                case "nbf", "iat" -> "token not yet valid: its " + e.getClaimName() + " claim is in the future";
                default -> "token's " + e.getClaimName() + " claim has a value this server does not accept";
            });
        } catch (MissingClaimException e) {
            throw new Refused("token has no " + e.getClaimName() + " claim, which this server requires");
        } catch (JWTVerificationException e) {
            // a reason class, never the library's exception name or message (which may quote the token)
            throw new Refused("token claims do not verify");
        }
        String subject = jwt.getSubject() == null ? "token" : "token of '" + jwt.getSubject() + "'";
        List<String> roles = jwt.getClaim("roles").asList(String.class);
        if (roles == null) {
            throw new Refused(subject + " has no roles claim (a list of role names)");
        }
        for (String role : roles) {
            if (security.role(role) == null) {
                throw new Refused(subject + " names role '" + role + "', which this server does not define");
            }
        }
        return Permissions.of(security, roles, subject, PathLimits.WIDEST);
    }

    private String accepted() {
        if (hs256 == null && rs256 == null) {
            return "no tokens: neither security.jwtHs256Secret nor security.jwtRs256PublicKeyFile is set";
        }
        return hs256 != null && rs256 != null ? "HS256 and RS256" : hs256 != null ? "HS256" : "RS256";
    }

    /** A PEM "PUBLIC KEY" (X.509 SubjectPublicKeyInfo). */
    static RSAPublicKey rsaPublicKey(Path pem) throws IOException, GeneralSecurityException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        int begin = text.indexOf("-----BEGIN PUBLIC KEY-----");
        int end = text.indexOf("-----END PUBLIC KEY-----");
        if (begin < 0 || end < begin) {
            throw new GeneralSecurityException(pem + " holds no PEM \"PUBLIC KEY\" block");
        }
        byte[] der = Base64.getMimeDecoder().decode(text.substring(begin + 26, end));
        return (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
    }
}
