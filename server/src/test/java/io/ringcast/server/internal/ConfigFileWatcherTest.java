package io.ringcast.server.internal;

import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.EnvOverrides;
import io.ringcast.server.config.ServerConfig;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ConfigFileWatcher} on a real file: an edit of {@code features} is applied with the new
 * features and the rest as running; an invalid edit is refused and counted, the settings in force
 * stay; an edit of other sections only is not applied. Waits on conditions, never for time.
 */
@Timeout(30)
class ConfigFileWatcherTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    @TempDir
    Path dir;
    private final LinkedBlockingQueue<ServerConfig> applied = new LinkedBlockingQueue<>();
    private final ServerCounters counters = new ServerCounters();
    private ConfigFileWatcher watcher;
    private Path file;

    private ServerConfig start(String yaml) throws IOException {
        return start(yaml, EnvOverrides.none());
    }

    private ServerConfig start(String yaml, EnvOverrides overrides) throws IOException {
        file = dir.resolve("server.yaml");
        Files.writeString(file, yaml);
        ServerConfig running = ConfigLoader.load(file, overrides);
        watcher = new ConfigFileWatcher(file, overrides, running, applied::add, counters);
        return running;
    }

    @AfterEach
    void stop() {
        if (watcher != null) {
            watcher.close();
            watcher.close(); // twice is safe
        }
    }

    private ServerConfig nextApplied() throws InterruptedException {
        ServerConfig config = applied.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(config).as("a reload applied within %s", WAIT).isNotNull();
        return config;
    }

    /** The count follows the callback on the watch thread. */
    private void awaitReloadsCounted(long n) {
        Await.until(() -> counters.configReloads() == n, WAIT, Duration.ofMillis(10),
                () -> n + " reloads counted, counted: " + counters.configReloads());
    }

    @Test
    void editedFeaturesAreAppliedWithTheRestAsRunning() throws Exception {
        ServerConfig running = start("server: {port: 9000}\nfeatures: {deltas: false}\n");

        Files.writeString(file, "server: {port: 9001}\nfeatures: {deltas: true, conflation: always}\n");

        ServerConfig reloaded = nextApplied();
        assertThat(reloaded.features().deltas()).isTrue();
        assertThat(reloaded.features().conflation()).isEqualTo(Conflation.ALWAYS);
        assertThat(reloaded.server()).as("needs a restart: not applied").isEqualTo(running.server());
        awaitReloadsCounted(1);
    }

    /** The reload's log line says what the features are now in the config file's words, not as Java records. */
    @Test
    void theReloadLineNamesTheFeaturesAsTheFileDoes() throws Exception {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                ConfigFileWatcher.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            start("features: {deltas: false}\n");
            Files.writeString(file, "features:\n  deltas: true\n  conflation: always\n  overrides:\n"
                    + "    - {selector: \"fx/#\", deltas: false, compression: true}\n");
            nextApplied();
            awaitReloadsCounted(1);
            String line = lines.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.startsWith("features reloaded")).findFirst().orElseThrow();
            assertThat(line).contains("lastValueCache: on, deltas: on, compression: off, conflation: always; "
                    + "fx/#: deltas: off, compression: on").doesNotContain("Features[").doesNotContain("Override[");
        } finally {
            logger.detachAppender(lines);
        }
    }

    @Test
    void fileReplacedByRenameIsReloadedToo() throws Exception {
        start("features: {compression: false}\n");

        Path edited = dir.resolve("server.yaml.new");
        Files.writeString(edited, "features: {compression: true}\n");
        Files.move(edited, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

        assertThat(nextApplied().features().compression()).isTrue();
    }

    @Test
    void invalidEditIsRefusedAndCountedAndTheNextValidEditApplies() throws Exception {
        start("features: {deltas: false}\n");

        Files.writeString(file, "features: {deltas: sometimes}\n");
        Await.until(() -> counters.configReloadsRefused() == 1, WAIT, Duration.ofMillis(10),
                () -> "the invalid edit refused, refusals: " + counters.configReloadsRefused());
        assertThat(applied).as("nothing applied").isEmpty();

        Files.writeString(file, "features: {deltas: true}\n");
        assertThat(nextApplied().features().deltas()).isTrue();
        awaitReloadsCounted(1);
    }

    @Test
    void otherSectionsAreNotAppliedAndAloneApplyNothing() throws Exception {
        start("limits: {maxTopics: 1000}\n");

        Files.writeString(file, "limits: {maxTopics: 2000}\n");
        Files.writeString(dir.resolve("other.yaml"), "features: {deltas: false}\n"); // not the watched file
        Files.writeString(file, "limits: {maxTopics: 2000}\nfeatures: {deltas: true}\n");

        ServerConfig reloaded = nextApplied();
        assertThat(reloaded.limits().maxTopics()).as("limits need a restart").isEqualTo(1000);
        assertThat(reloaded.features().deltas()).isTrue();
        awaitReloadsCounted(1);
        assertThat(applied).as("the limits-only edit, if seen apart, applied nothing").isEmpty();
    }

    @Test
    void environmentOverridesAreSetOverEachReloadAsAtStart() throws Exception {
        EnvOverrides env = EnvOverrides.from(Map.of("RINGCAST_FEATURES_DELTAS", "true", "RINGCAST_SERVER_PORT", "9100"));
        ServerConfig running = start("server: {port: 9000}\nfeatures: {deltas: false, compression: false}\n", env);
        assertThat(running.features().deltas()).isTrue();

        Files.writeString(file, "server: {port: 9000}\nfeatures: {deltas: false, compression: true}\n");

        ServerConfig reloaded = nextApplied();
        assertThat(reloaded.features().compression()).as("from the edited file").isTrue();
        assertThat(reloaded.features().deltas()).as("the variable still wins over the file").isTrue();
        assertThat(reloaded.server().port()).isEqualTo(9100);
        awaitReloadsCounted(1);
    }
}
