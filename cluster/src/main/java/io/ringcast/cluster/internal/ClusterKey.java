package io.ringcast.cluster.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import javax.crypto.SecretKey;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key the members of a cluster encrypt every message between them with ({@code cluster.secretFile}):
 * AES-256, derived from a shared secret by PBKDF2 (HMAC-SHA-256, the JDK's), so that every node
 * given the same file derives the same key and a node given another file, or none, can neither read
 * the group's messages nor be heard by it: JGroups' {@code SYM_ENCRYPT} drops what does not decrypt
 * with its key, and logs it (the jgroups engine's {@code RaftStack}).
 */
public final class ClusterKey {
    /** The fewest bytes of secret a file must hold (after trimming white space at its ends). */
    public static final int MIN_SECRET_BYTES = 32;
    /** Fixed: the key must be the same on every node; the secret's own length keeps it unguessable. */
    private static final byte[] SALT = "ringcast-cluster-key-v1".getBytes(StandardCharsets.UTF_8);
    private static final int ITERATIONS = 210_000;

    private ClusterKey() {
    }

    /**
     * The key derived from the secret in {@code file}.
     *
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when it holds fewer than {@link #MIN_SECRET_BYTES} bytes of secret
     */
    public static SecretKey fromFile(Path file) throws IOException {
        String secret = Files.readString(file, StandardCharsets.UTF_8).strip();
        int bytes = secret.getBytes(StandardCharsets.UTF_8).length;
        if (bytes < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("cluster.secretFile " + file + " holds " + bytes
                    + " bytes of secret; it needs at least " + MIN_SECRET_BYTES
                    + " (e.g. openssl rand -base64 48 > " + file.getFileName() + ")");
        }
        try {
            PBEKeySpec spec = new PBEKeySpec(secret.toCharArray(), SALT, ITERATIONS, 256);
            byte[] key = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
            spec.clearPassword();
            return new SecretKeySpec(key, "AES");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot derive the cluster key (PBKDF2WithHmacSHA256)", e);
        }
    }
}
