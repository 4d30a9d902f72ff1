package io.ringcast.server.cli;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;

/**
 * How a value's bytes are written as text: what {@code sub} prints and what {@code pub} reads, so
 * that {@code sub}'s output of one encoding is {@code pub}'s input of the same. Stateless.
 */
enum ValueEncoding {
    /** The bytes as UTF-8 text; bytes that are not UTF-8 print as U+FFFD: use base64 or hex for binary values. */
    UTF8 {
        @Override
        String encode(byte[] value) {
            return new String(value, StandardCharsets.UTF_8);
        }

        @Override
        byte[] decode(String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
    },
    /** Standard base64 (RFC 4648, with padding). */
    BASE64 {
        @Override
        String encode(byte[] value) {
            return Base64.getEncoder().encodeToString(value);
        }

        @Override
        byte[] decode(String text) {
            return Base64.getDecoder().decode(text);
        }
    },
    /** Two hex digits a byte; lowercase out, either case in. */
    HEX {
        @Override
        String encode(byte[] value) {
            return HexFormat.of().formatHex(value);
        }

        @Override
        byte[] decode(String text) {
            return HexFormat.of().parseHex(text);
        }
    };

    /** The value as text. */
    abstract String encode(byte[] value);

    /**
     * The bytes {@code text} stands for.
     *
     * @throws IllegalArgumentException when {@code text} is not in this encoding, saying why
     */
    abstract byte[] decode(String text);

    /** Its name on the command line. */
    @Override
    public String toString() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
