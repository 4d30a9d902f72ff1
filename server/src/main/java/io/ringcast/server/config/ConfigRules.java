package io.ringcast.server.config;

import io.ringcast.protocol.Transport;

/**
 * The range rules the sections' {@code validate()} methods are written in. Each throws a
 * {@link ConfigException} naming the key, the valid values and the value found.
 */
final class ConfigRules {

    private ConfigRules() {
    }

    static void between(String key, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ConfigException(key, "key '" + key + "' must be between " + min + " and " + max + ", got " + value);
        }
    }

    static void atLeast(String key, long value, long min) {
        if (value < min) {
            throw new ConfigException(key, "key '" + key + "' must be at least " + min + ", got " + value);
        }
    }

    /** 0 is a special value whose meaning is {@code zeroMeans}; otherwise {@code min..max}. */
    static void zeroOrBetween(String key, long value, String zeroMeans, long min, long max) {
        if (value != 0 && (value < min || value > max)) {
            throw new ConfigException(key, "key '" + key + "' must be 0 (" + zeroMeans + ") or between "
                    + min + " and " + max + ", got " + value);
        }
    }

    static void powerOfTwoBetween(String key, long value, long min, long max) {
        if (value < min || value > max || Long.bitCount(value) != 1) {
            throw new ConfigException(key, "key '" + key + "' must be a power of two between " + min + " and " + max
                    + ", got " + value);
        }
    }

    /**
     * A transport this JVM can run: {@code cause} is its {@link Transport#unavailabilityCause()},
     * null when it can. Given apart so that a test can pass a cause this machine does not have.
     */
    static void availableTransport(String key, Transport transport, Throwable cause) {
        if (cause != null) {
            throw new ConfigException(null, key, Transport.unavailableMessage("key '" + key + "'", transport, cause),
                    cause);
        }
    }

    /** A non-empty host name or IP literal without whitespace; resolving it is the server's job. */
    static void hostName(String key, String value) {
        if (value.isEmpty() || value.chars().anyMatch(Character::isWhitespace)) {
            throw new ConfigException(key, "key '" + key + "' must be a host name or IP address, got "
                    + ConfigText.quote(value));
        }
    }
}
