package io.ringcast.server.internal;

import io.netty.channel.WriteBufferWaterMark;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-connection pipeline as {@link ServerChannelInitializer} documents it: the handlers in
 * order, the optional ones present exactly when configured, and the write-buffer water mark that
 * on-backpressure conflation watches.
 */
class ServerChannelInitializerTest {

    /** The named handlers; Netty's WebSocket handler inserts helpers of its own (class-named) in front of itself. */
    private static List<String> handlers(String config) {
        try (SocketlessConnection connection = SocketlessConnection.open(config)) {
            return connection.channel.pipeline().names().stream()
                    .filter(n -> !n.startsWith("io.netty.") && !n.contains("TailContext")).toList();
        }
    }

    @Test
    void defaultPipelineIsHttpThenUpgradeThenSessionInTheDocumentedOrder() {
        assertThat(handlers("")).containsExactly("incomplete-messages", "http", "http-aggregator",
                "http-deadline", "websocket", "websocket-aggregator", "idle", "whole-message", "http-endpoints",
                "session");
    }

    @Test
    void originCheckAndDeflateNegotiationComeBeforeTheUpgradeWhenConfigured() {
        assertThat(handlers("""
                security: {allowedOrigins: ["https://app.example.com"]}
                features: {compression: true}
                """)).containsExactly("incomplete-messages", "http", "http-aggregator", "http-deadline", "origin",
                "websocket-extensions", "websocket", "websocket-aggregator", "idle", "whole-message", "http-endpoints",
                "session");
    }

    @Test
    void noIdleHandlerWhenSessionsNeverTimeOut() {
        assertThat(handlers("session: {idleTimeoutMs: 0}")).doesNotContain("idle").contains("session");
    }

    @Test
    void writeBufferWaterMarkIsTheConflationBacklogAndHalfOfIt() {
        try (SocketlessConnection connection = SocketlessConnection.open(
                "features: {conflationBacklogBytes: 100000}")) {
            WriteBufferWaterMark mark = connection.channel.config().getWriteBufferWaterMark();
            assertThat(mark.high()).isEqualTo(100_000);
            assertThat(mark.low()).isEqualTo(50_000);
        }
    }

    @Test
    void waterMarkIsAtMostHalfTheSlowConsumerLimit() {
        try (SocketlessConnection connection = SocketlessConnection.open("""
                limits: {outboundQueueBytes: 131072}
                features: {conflationBacklogBytes: 65536}
                """)) {
            assertThat(connection.channel.config().getWriteBufferWaterMark().high()).isEqualTo(65_536);
        }
    }

    @Test
    void everyConnectionHoldsAPlaceAmongThoseNotYetUpgradedUntilItCloses() {
        SocketlessConnection connection = SocketlessConnection.open("");
        assertThat(connection.counters.connectionsBeforeUpgrade()).isEqualTo(1);

        connection.close();

        assertThat(connection.counters.connectionsBeforeUpgrade()).isZero();
    }
}
