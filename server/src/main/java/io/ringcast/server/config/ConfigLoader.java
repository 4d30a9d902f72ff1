package io.ringcast.server.config;

import java.nio.file.Path;

/** TEMPORARY stand-in. */
public final class ConfigLoader {
    public static ServerConfig load(Path p) {
        return ServerConfig.defaults();
    }

    public static ServerConfig fromYaml(String y) {
        return ServerConfig.defaults();
    }

    public static ServerConfig defaults() {
        return ServerConfig.defaults();
    }
}
