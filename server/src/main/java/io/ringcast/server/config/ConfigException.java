package io.ringcast.server.config;

/** TEMPORARY stand-in. */
public class ConfigException extends RuntimeException {
    public ConfigException(String m) {
        super(m);
    }
}
