package io.ringcast.server.config;

import io.ringcast.protocol.PathLimits;

/** TEMPORARY stand-in until the config loader lands. */
public record ServerConfig(Server server, Limits limits, History history, Pipeline pipeline, Session session) {
    public record Server(String host, int port, int ioThreads) {
        public int effectiveIoThreads() {
            return ioThreads == 0 ? Runtime.getRuntime().availableProcessors() : ioThreads;
        }
    }

    public record Limits(int maxFrameBytes, int maxPathBytes, int maxPathDepth, int maxSubscriptionsPerSession,
                         long outboundQueueBytes, long slowConsumerCloseGraceMs, long handshakeTimeoutMs) {
        public PathLimits pathLimits() {
            return new PathLimits(maxPathBytes, maxPathDepth);
        }
    }

    public record History(int length) {
    }

    public record Pipeline(int inboundRingSize, int fanOutRingSize, WaitStrategyKind waitStrategy) {
    }

    public record Session(long idleTimeoutMs) {
    }

    public static ServerConfig defaults() {
        return new ServerConfig(new Server("0.0.0.0", 8080, 0),
                new Limits(1 << 20, 256, 16, 1024, 8 << 20, 5000, 10000),
                new History(64), new Pipeline(65536, 65536, WaitStrategyKind.BLOCKING), new Session(120000));
    }
}
