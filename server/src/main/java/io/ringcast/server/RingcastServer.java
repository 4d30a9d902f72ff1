package io.ringcast.server;

import io.ringcast.server.config.EnvOverrides;
import io.ringcast.server.config.ServerConfig;
import io.ringcast.server.internal.NodeRuntime;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A running Ringcast node: the embedding API, used by {@link Main} and by tests that need a real
 * server on a real port.
 *
 * <pre>{@code
 * try (RingcastServer server = RingcastServer.start(ServerConfig.defaults())) {
 *     System.out.println(server.webSocketUrl());
 * }
 * }</pre>
 *
 * Start and close from one thread; {@link #stats()} from any.
 */
public final class RingcastServer implements AutoCloseable {
    private final NodeRuntime runtime;

    private RingcastServer(NodeRuntime runtime) {
        this.runtime = runtime;
    }

    /** Starts a node and returns once it accepts connections. */
    public static RingcastServer start(ServerConfig config) throws InterruptedException {
        NodeRuntime runtime = new NodeRuntime(config);
        runtime.start();
        return new RingcastServer(runtime);
    }

    /**
     * Watches {@code configFile} (the file this node's config came from) and applies edits of its
     * {@code features} section while running; a bad edit is logged and refused. Stops on {@link #close()}.
     */
    public void watchConfig(Path configFile) throws IOException {
        watchConfig(configFile, EnvOverrides.none());
    }

    /**
     * As {@link #watchConfig(Path)} for a node whose config had {@code overrides} set over the file:
     * each reload sets them again, so a key they set keeps their value whatever the file says.
     */
    public void watchConfig(Path configFile, EnvOverrides overrides) throws IOException {
        runtime.watchConfig(configFile, overrides);
    }

    /** Applies the {@code features} section of {@code config} now, as a hot reload would. */
    public void applyFeatures(ServerConfig config) {
        runtime.applyFeatures(config);
    }

    /** The port the node listens on (the real one when the config asked for port 0). */
    public int port() {
        return runtime.port();
    }

    /** The WebSocket URL for clients on this machine, e.g. {@code ws://127.0.0.1:8080/ws}. */
    public String webSocketUrl() {
        return runtime.webSocketUrl();
    }

    /** A snapshot of the node's figures ({@link ServerCounter}); each may lag by one batch. */
    public ServerStats stats() {
        return runtime.counters().snapshot();
    }

    /** Tells every client {@code SERVER_SHUTDOWN}, stops every thread, releases every buffer. Idempotent. */
    @Override
    public void close() {
        runtime.close();
    }
}
