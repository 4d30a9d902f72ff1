package io.ringcast.protocol;

import java.util.Objects;

/**
 * What a client proves itself with, carried at the end of {@code HELLO} (docs/protocol.md,
 * "Authentication"): nothing, a principal's name and password, or a signed token (JWT).
 *
 * @param kind      {@link #NONE}, {@link #PASSWORD} or {@link #TOKEN}
 * @param principal the principal's name ({@link #PASSWORD} only, else empty)
 * @param secret    the password or the token; empty for {@link #NONE}
 */
public record Credentials(int kind, String principal, String secret) {
    public static final int NONE = 0;
    public static final int PASSWORD = 1;
    public static final int TOKEN = 2;
    /** An anonymous client. */
    public static final Credentials ANONYMOUS = new Credentials(NONE, "", "");

    public Credentials {
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(secret, "secret");
    }

    /** A principal's name and password ({@link #PASSWORD}). */
    public static Credentials password(String principal, String password) {
        return new Credentials(PASSWORD, principal, password);
    }

    /** A signed token, a JWT ({@link #TOKEN}). */
    public static Credentials token(String token) {
        return new Credentials(TOKEN, "", token);
    }

    /** Never the secret: credentials end up in logs and exception messages. */
    @Override
    public String toString() {
        return switch (kind) {
            case NONE -> "anonymous";
            case PASSWORD -> "password of '" + principal + "'";
            case TOKEN -> "token";
            default -> "credentials of kind " + kind;
        };
    }
}
