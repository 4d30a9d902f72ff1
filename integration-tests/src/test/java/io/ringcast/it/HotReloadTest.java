package io.ringcast.it;

import io.ringcast.protocol.UpdateFlags;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import static io.ringcast.server.ServerCounter.CONFIG_RELOADS;
import static io.ringcast.server.ServerCounter.CONFIG_RELOADS_REFUSED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code features} section is reloaded from the file while clients stay connected: a valid
 * edit changes the wire at once, a bad one is refused and the settings in force stay.
 */
@Timeout(60)
class HotReloadTest {
    private static final String HEAD = "server:\n  host: 127.0.0.1\n  port: 0\n  ioThreads: 2\nsecurity:\n"
            + TestServers.OPEN_TO_ANONYMOUS;

    @Test
    void flippingDeltasInTheFileChangesTheWireWithoutARestart(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("server.yaml");
        Files.writeString(file, HEAD + "features:\n  deltas: false\n");
        try (RingcastServer server = RingcastServer.start(ConfigLoader.load(file))) {
            server.watchConfig(file);
            try (RawWebSocket pub = RawWebSocket.connectAndHello(server.webSocketUrl());
                 RawWebSocket sub = RawWebSocket.connectAndHello(server.webSocketUrl())) {
                sub.subscribe(1, "fx/#");
                sub.await("SUBSCRIBED");
                publishAndAwait(pub, sub, 1);
                publishAndAwait(pub, sub, 2);
                assertThat(lastUpdate(sub).flags()).as("deltas off").isZero();

                // an editor's save: write a new file and move it over the old one
                Path edited = dir.resolve("server.yaml.tmp");
                Files.writeString(edited, HEAD + "features:\n  deltas: true\n");
                Files.move(edited, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                Await.until(() -> server.stats().get(CONFIG_RELOADS) == 1, "the reload");
                publishAndAwait(pub, sub, 3);
                assertThat(lastUpdate(sub).flags()).as("deltas on, same connections").isEqualTo(UpdateFlags.DELTA);

                Files.writeString(file, HEAD + "features:\n  deltas: false\n  conflation: sometimes\n");
                Await.until(() -> server.stats().get(CONFIG_RELOADS_REFUSED) == 1, "the bad edit refused");
                publishAndAwait(pub, sub, 4);
                assertThat(lastUpdate(sub).flags()).as("the settings in force stay").isEqualTo(UpdateFlags.DELTA);
                assertThat(server.stats().get(CONFIG_RELOADS)).isEqualTo(1);
            }
        }
    }

    @Test
    void turningCompressionOnInTheFileOffersItToNewConnections(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("server.yaml");
        Files.writeString(file, HEAD + "features:\n  compression: false\n");
        try (RingcastServer server = RingcastServer.start(ConfigLoader.load(file))) {
            server.watchConfig(file);
            try (WireSocket before = new WireSocket(server.webSocketUrl(), "permessage-deflate", 0)) {
                assertThat(before.negotiatedExtensions()).isNull();
            }

            Files.writeString(file, HEAD + "features:\n  compression: true\n");
            Await.until(() -> server.stats().get(CONFIG_RELOADS) == 1, "the reload");

            try (WireSocket after = new WireSocket(server.webSocketUrl(), "permessage-deflate", 0)) {
                assertThat(after.negotiatedExtensions()).startsWith("permessage-deflate");
                after.hello();
            }
        }
    }

    private static void publishAndAwait(RawWebSocket pub, RawWebSocket sub, int n) {
        pub.publish(n, "fx/EURUSD", FeatureTogglesTest.record(n));
        Await.until(() -> sub.all("UPDATE").size() == n, "update " + n);
    }

    private static RawWebSocket.Msg lastUpdate(RawWebSocket sub) {
        List<RawWebSocket.Msg> updates = sub.all("UPDATE");
        return updates.get(updates.size() - 1);
    }
}
