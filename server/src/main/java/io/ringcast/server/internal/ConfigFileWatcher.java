package io.ringcast.server.internal;

import io.ringcast.server.config.ConfigException;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.EnvOverrides;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Hot reload: watches the config file and applies a changed {@code features} section while the
 * node runs. The whole file is loaded and validated as at start-up; a bad edit is refused with the
 * loader's message (naming the key) and the settings in force stay. Changes to other sections are
 * logged as needing a restart and not applied. The environment overrides the node started with are
 * set over each reload as over the file at start, so a key they set keeps their value. Runs on its own daemon thread,
 * {@code ringcast-config-watch}; applying goes through the node's inbound ring, never around it.
 */
final class ConfigFileWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConfigFileWatcher.class);
    /** Editors write a file in several steps; events this close together are one change. */
    private static final long SETTLE_MS = 50;

    private final Path file;
    private final EnvOverrides overrides;
    private final WatchService watcher;
    private final Consumer<ServerConfig> applyFeatures;
    private final ServerCounters counters;
    private final Thread thread;
    /** The config last loaded (the running one's other sections stay as they were at start). */
    private ServerConfig current;

    /**
     * @param file          the file the node was started from
     * @param overrides     the environment overrides it was started with
     * @param running       the config the node runs
     * @param applyFeatures applies the {@code features} of a validated config; called on the watch thread
     */
    ConfigFileWatcher(Path file, EnvOverrides overrides, ServerConfig running, Consumer<ServerConfig> applyFeatures,
                      ServerCounters counters) throws IOException {
        this.file = file.toAbsolutePath();
        this.overrides = overrides;
        this.current = running;
        this.applyFeatures = applyFeatures;
        this.counters = counters;
        this.watcher = FileSystems.getDefault().newWatchService();
        // the directory, not the file: editors often replace the file by a new one (rename)
        this.file.getParent().register(watcher, StandardWatchEventKinds.ENTRY_CREATE,
                StandardWatchEventKinds.ENTRY_MODIFY);
        this.thread = new Thread(this::watch, "ringcast-config-watch");
        thread.setDaemon(true);
        thread.start();
        log.info("watching {} for changes to the features section", this.file);
    }

    private void watch() {
        try {
            while (true) {
                WatchKey key = watcher.take();
                boolean ours = touchesFile(key);
                // let the writer finish, and gather the rest of its events
                WatchKey more;
                while ((more = watcher.poll(SETTLE_MS, TimeUnit.MILLISECONDS)) != null) {
                    ours |= touchesFile(more);
                }
                if (ours) {
                    reload();
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException stop) {
            // closed
        }
    }

    private boolean touchesFile(WatchKey key) {
        boolean ours = false;
        for (WatchEvent<?> event : key.pollEvents()) {
            if (event.context() instanceof Path p && p.equals(file.getFileName())) {
                ours = true;
            }
        }
        key.reset();
        return ours;
    }

    /** Loads the file and applies its features when they changed. The watch thread only. */
    private void reload() {
        ServerConfig loaded;
        try {
            loaded = ConfigLoader.load(file, overrides);
        } catch (ConfigException e) {
            counters.configReloadsRefused.increment();
            log.error("config reload refused, the settings in force stay: {}", e.getMessage());
            return;
        }
        List<String> needRestart = new ArrayList<>();
        if (!loaded.server().equals(current.server())) {
            needRestart.add("server");
        }
        if (!loaded.limits().equals(current.limits())) {
            needRestart.add("limits");
        }
        if (!loaded.history().equals(current.history())) {
            needRestart.add("history");
        }
        if (!loaded.pipeline().equals(current.pipeline())) {
            needRestart.add("pipeline");
        }
        if (!loaded.session().equals(current.session())) {
            needRestart.add("session");
        }
        if (!needRestart.isEmpty()) {
            log.warn("config {} changed {}: these take effect only after a restart; not applied", file,
                    String.join(", ", needRestart));
        }
        if (Objects.equals(loaded.features(), current.features())) {
            log.debug("config {} changed, features unchanged", file);
            return;
        }
        log.info("features reloaded from {}: {} (compression applies to new connections)", file,
                loaded.features().describe());
        current = current.withFeatures(loaded.features());
        applyFeatures.accept(current);
        counters.configReloads.increment();
    }

    @Override
    public void close() {
        thread.interrupt();
        try {
            watcher.close();
        } catch (IOException e) {
            log.debug("closing the config watcher: {}", e.toString());
        }
    }
}
