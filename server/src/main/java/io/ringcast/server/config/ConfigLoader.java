package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigText.fieldNames;
import static io.ringcast.server.config.ConfigText.show;
import static io.ringcast.server.config.ConfigYaml.MAPPER;
import static io.ringcast.server.config.ConfigYaml.readTree;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringcast.server.config.ConfigYaml.ParserOpener;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a {@link ServerConfig}: parses YAML into a tree, deep-merges it over the embedded defaults
 * ({@code defaults.yaml} in this package), binds the result strictly to the records (unknown keys,
 * nulls, strings for numbers and numbers for enums all fail) and validates every range. Every
 * failure is a {@link ConfigException} naming the file, the full dotted key and what was expected.
 * {@link EnvOverrides} (environment variables) are set over the merged tree before binding, and a
 * failure at a key one of them set names the variable instead of the file.
 *
 * <p>Merge rules: a mapping merges key by key into the default mapping; any other value replaces
 * the default. A section left empty (every key commented out) keeps its defaults; a key left empty
 * ({@code port:}) is an error.
 *
 * <p>Thread safety: stateless; any thread may call any method.
 */
public final class ConfigLoader {

    /** Where the server looks, relative to its working directory, when no {@code --config} is given. */
    public static final Path DEFAULT_FILE = Path.of("config", "server.yaml");

    private static final String DEFAULTS_RESOURCE = "defaults.yaml";
    private static final String DEFAULTS_SOURCE = DEFAULTS_RESOURCE + " (embedded)";
    private static final Logger LOG = LoggerFactory.getLogger(ConfigLoader.class);

    /** The defaults, read once on first use. */
    private static final class Embedded {
        static final ObjectNode TREE = readDefaultsTree();
        static final ServerConfig CONFIG = bindDefaults();
    }

    private ConfigLoader() {
    }

    /** The embedded defaults. */
    public static ServerConfig defaults() {
        return Embedded.CONFIG;
    }

    /** The embedded defaults as read, before binding; not to be modified. */
    static ObjectNode defaultsTree() {
        return Embedded.TREE;
    }

    /** The dotted keys of {@code tree} that are not sections (mappings), in its order: {@code server.host}, ... */
    static List<String> keysOf(JsonNode tree) {
        List<String> keys = new ArrayList<>();
        collectKeys(tree, "", keys);
        return keys;
    }

    private static void collectKeys(JsonNode node, String prefix, List<String> keys) {
        if (!node.isObject()) {
            keys.add(prefix);
            return;
        }
        node.properties().forEach(e -> collectKeys(e.getValue(),
                prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey(), keys));
    }

    /**
     * Reads {@code file} and merges it over the defaults; an empty file means all defaults.
     *
     * @throws ConfigException if the file cannot be read or holds anything invalid; the message
     *                         starts with {@code file} as given
     */
    public static ServerConfig load(Path file) {
        return load(file, EnvOverrides.none());
    }

    /**
     * Reads {@code file}, merges it over the defaults and sets {@code overrides} over both.
     *
     * @throws ConfigException if the file cannot be read or the result holds anything invalid; the
     *                         message starts with {@code file} as given, or with the variable that
     *                         set the key at fault
     */
    public static ServerConfig load(Path file, EnvOverrides overrides) {
        String source = file.toString();
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException(source, null, "file not found", e);
        } catch (IOException e) {
            throw new ConfigException(source, null, "cannot read file: " + e, e);
        }
        return parse(() -> MAPPER.createParser(bytes), source, overrides);
    }

    /**
     * Parses {@code yaml} by the same rules as {@link #load(Path)}; messages name no file.
     *
     * @throws ConfigException if the text holds anything invalid
     */
    public static ServerConfig fromYaml(String yaml) {
        return parse(() -> MAPPER.createParser(yaml), null, EnvOverrides.none());
    }

    /**
     * The config the server starts with: {@code configOption} (the {@code --config} option) when
     * given, which must exist; else {@link #DEFAULT_FILE} in the working directory when present;
     * else the embedded defaults. Logs which one it used.
     *
     * @param configOption the file named on the command line, or {@code null}
     */
    public static ServerConfig resolve(Path configOption) {
        return resolve(configOption, EnvOverrides.none());
    }

    /**
     * As {@link #resolve(Path)}, with {@code overrides} set over the file or the embedded defaults;
     * logs the names of the variables applied, never their values.
     */
    public static ServerConfig resolve(Path configOption, EnvOverrides overrides) {
        return resolve(configOption, Path.of(""), overrides);
    }

    /**
     * The file {@link #resolve(Path)} reads: {@code configOption} when given, else
     * {@link #DEFAULT_FILE} when present in the working directory, else null (embedded defaults).
     */
    public static Path resolveFile(Path configOption) {
        return resolveFile(configOption, Path.of(""));
    }

    static Path resolveFile(Path configOption, Path workingDir) {
        if (configOption != null) {
            return configOption;
        }
        Path file = workingDir.resolve(DEFAULT_FILE);
        return Files.isRegularFile(file) ? file : null;
    }

    static ServerConfig resolve(Path configOption, Path workingDir, EnvOverrides overrides) {
        if (!overrides.ignoredNames().isEmpty()) {
            LOG.warn("Environment variables starting {} that name no config section, not applied: {}",
                    EnvOverrides.PREFIX, String.join(", ", overrides.ignoredNames()));
        }
        Path file = resolveFile(configOption, workingDir);
        String applied = overrides.isEmpty() ? "" : ", with environment overrides " + String.join(", ", overrides.names());
        if (file != null) {
            LOG.info("Configuration: {}{}", file, applied);
            return load(file, overrides);
        }
        LOG.info("Configuration: embedded defaults (no --config and no {} in the working directory){}",
                DEFAULT_FILE, applied);
        if (overrides.isEmpty()) {
            return defaults();
        }
        ObjectNode tree = Embedded.TREE.deepCopy();
        overrides.applyTo(tree);
        return bindAndValidate(tree, DEFAULTS_SOURCE, overrides);
    }

    // ---------------------------------------------------------------------------------------------

    private static ServerConfig parse(ParserOpener opener, String source, EnvOverrides overrides) {
        ObjectNode tree;
        try {
            tree = mergeOverDefaults(readTree(opener));
        } catch (ConfigException e) {
            throw e.withSource(source);
        }
        overrides.applyTo(tree);
        return bindAndValidate(tree, source, overrides);
    }

    /**
     * Binds and validates {@code tree}; a failure names the variable that set the key at fault, else
     * {@code source}, followed by the variables that took part when there are some.
     */
    private static ServerConfig bindAndValidate(ObjectNode tree, String source, EnvOverrides overrides) {
        try {
            return bindAndValidate(tree);
        } catch (ConfigException e) {
            String rest = overrides.isEmpty() ? source
                    : (source == null ? "" : source + " ") + "with " + overrides;
            throw e.withSource(overrides.sourceOf(e.key().orElse(null)).orElse(rest));
        }
    }

    private static ServerConfig bindAndValidate(ObjectNode tree) {
        ServerConfig config = ConfigBinding.bind(tree, Embedded.TREE);
        config.validate();
        return config;
    }

    private static ServerConfig bindDefaults() {
        try {
            return bindAndValidate(Embedded.TREE);
        } catch (ConfigException e) {
            throw e.withSource(DEFAULTS_SOURCE);
        }
    }

    private static ObjectNode readDefaultsTree() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream(DEFAULTS_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + DEFAULTS_RESOURCE + " is missing next to "
                        + ConfigLoader.class.getName());
            }
            byte[] bytes = in.readAllBytes();
            JsonNode tree;
            try {
                tree = readTree(() -> MAPPER.createParser(bytes));
            } catch (ConfigException e) {
                throw e.withSource(DEFAULTS_SOURCE);
            }
            if (tree == null || !tree.isObject()) {
                throw new ConfigException(DEFAULTS_SOURCE, null, "must be a mapping of sections", null);
            }
            return (ObjectNode) tree;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + DEFAULTS_RESOURCE, e);
        }
    }

    private static ObjectNode mergeOverDefaults(JsonNode user) {
        ObjectNode merged = Embedded.TREE.deepCopy();
        if (user == null || user.isNull()) {
            return merged;
        }
        if (!user.isObject()) {
            throw new ConfigException(null, "the top level must be a mapping of sections ("
                    + fieldNames(Embedded.TREE) + "), got " + show(user));
        }
        mergeInto(merged, (ObjectNode) user, "");
        return merged;
    }

    private static void mergeInto(ObjectNode target, ObjectNode overrides, String prefix) {
        for (Map.Entry<String, JsonNode> entry : overrides.properties()) {
            String name = entry.getKey();
            String key = prefix + name;
            JsonNode value = entry.getValue();
            JsonNode current = target.get(name);
            if (current == null || !current.isObject()) {
                target.set(name, value); // a leaf, or an unknown key that binding will reject by name
            } else if (value.isNull()) {
                continue; // a section whose keys are all commented out keeps its defaults
            } else if (value.isObject()) {
                mergeInto((ObjectNode) current, (ObjectNode) value, key + ".");
            } else {
                throw new ConfigException(key, (prefix.isEmpty() ? "section '" : "key '") + key
                        + "' must be a mapping of keys (" + fieldNames(current) + "), got " + show(value));
            }
        }
    }

}
