package io.ringcast.server.config;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.slf4j.LoggerFactory;

/**
 * Reads a {@link ServerConfig}: parses YAML into a tree, deep-merges it over the embedded defaults
 * ({@code defaults.yaml} in this package), binds the result strictly to the records (unknown keys,
 * nulls, strings for numbers and numbers for enums all fail) and validates every range. Every
 * failure is a {@link ConfigException} naming the file, the full dotted key and what was expected.
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
    private static final int MAX_SHOWN_CHARS = 60;
    private static final Logger LOG = LoggerFactory.getLogger(ConfigLoader.class);

    private static final ObjectMapper MAPPER = YAMLMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .defaultSetterInfo(JsonSetter.Value.forValueNulls(Nulls.FAIL))
            // No quiet conversions: "8080" is not a port, 80.5 is not an integer, 8080 is not a host.
            .withCoercionConfig(LogicalType.Integer, c -> c
                    .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Textual, c -> c
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Enum, c -> c
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
            .build();

    /** The defaults, read once on first use. */
    private static final class Embedded {
        static final ObjectNode TREE = readDefaultsTree();
        static final ServerConfig CONFIG = bindAndValidate(TREE, DEFAULTS_SOURCE);
    }

    private ConfigLoader() {
    }

    /** The embedded defaults. */
    public static ServerConfig defaults() {
        return Embedded.CONFIG;
    }

    /**
     * Reads {@code file} and merges it over the defaults; an empty file means all defaults.
     *
     * @throws ConfigException if the file cannot be read or holds anything invalid; the message
     *                         starts with {@code file} as given
     */
    public static ServerConfig load(Path file) {
        String source = file.toString();
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException(source, null, "file not found", e);
        } catch (IOException e) {
            throw new ConfigException(source, null, "cannot read file: " + e, e);
        }
        return parse(() -> MAPPER.createParser(bytes), source);
    }

    /**
     * Parses {@code yaml} by the same rules as {@link #load(Path)}; messages name no file.
     *
     * @throws ConfigException if the text holds anything invalid
     */
    public static ServerConfig fromYaml(String yaml) {
        return parse(() -> MAPPER.createParser(yaml), null);
    }

    /**
     * The config the server starts with: {@code configOption} (the {@code --config} option) when
     * given, which must exist; else {@link #DEFAULT_FILE} in the working directory when present;
     * else the embedded defaults. Logs which one it used.
     *
     * @param configOption the file named on the command line, or {@code null}
     */
    public static ServerConfig resolve(Path configOption) {
        return resolve(configOption, Path.of(""));
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

    static ServerConfig resolve(Path configOption, Path workingDir) {
        if (configOption != null) {
            LOG.info("Configuration: {}", configOption);
            return load(configOption);
        }
        Path file = workingDir.resolve(DEFAULT_FILE);
        if (Files.isRegularFile(file)) {
            LOG.info("Configuration: {}", file);
            return load(file);
        }
        LOG.info("Configuration: embedded defaults (no --config and no {} in the working directory)", DEFAULT_FILE);
        return defaults();
    }

    // ---------------------------------------------------------------------------------------------

    private interface ParserOpener {
        JsonParser open() throws IOException;
    }

    private static ServerConfig parse(ParserOpener opener, String source) {
        try {
            return bindAndValidate(mergeOverDefaults(readTree(opener)), source);
        } catch (ConfigException e) {
            throw e.withSource(source);
        }
    }

    private static ServerConfig bindAndValidate(ObjectNode tree, String source) {
        try {
            ServerConfig config = bind(tree);
            config.validate();
            return config;
        } catch (ConfigException e) {
            throw e.withSource(source);
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

    /** The document's tree, or {@code null} for an empty document. */
    private static JsonNode readTree(ParserOpener opener) {
        try (JsonParser parser = opener.open()) {
            JsonNode tree = MAPPER.readTree(parser);
            if (tree != null && parser.nextToken() != null) {
                throw new ConfigException(null, "holds more than one YAML document (a second '---' at line "
                        + parser.currentTokenLocation().getLineNr() + "); put every section in one document");
            }
            return tree == null || tree.isMissingNode() ? null : tree;
        } catch (StreamReadException e) {
            throw syntaxError(e);
        } catch (JacksonException e) {
            throw new ConfigException(null, null, "cannot read YAML: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ConfigException(null, null, "cannot read YAML: " + e, e);
        } catch (ConfigException e) {
            throw e;
        } catch (RuntimeException e) {
            // SnakeYAML lets some failures of its own escape unwrapped: its reader throws
            // IndexOutOfBoundsException on some text with characters outside the BMP (found by
            // ConfigLoaderFuzzTest). Still a file the server cannot read, not a crash.
            throw new ConfigException(null, null, "cannot read YAML: " + e, e);
        }
    }

    private static ConfigException syntaxError(StreamReadException e) {
        JsonParser parser = e.getProcessor();
        String problem = firstLine(e.getOriginalMessage());
        if (problem.startsWith("Duplicate field '") && parser != null) {
            String key = dottedKey(parser.getParsingContext());
            return new ConfigException(null, key, "duplicate key '" + key + "'" + at(e.getLocation()), e);
        }
        // SnakeYAML (under Jackson) knows where the problem is; Jackson's location is where it stopped.
        if (e.getCause() instanceof MarkedYAMLException yaml && yaml.getProblemMark() != null) {
            String context = yaml.getContext() == null ? ""
                    : " (" + yaml.getContext() + (yaml.getContextMark() == null ? "" : at(yaml.getContextMark())) + ")";
            return new ConfigException(null, null,
                    "YAML syntax error" + at(yaml.getProblemMark()) + ": " + yaml.getProblem() + context, e);
        }
        return new ConfigException(null, null, "YAML syntax error" + at(e.getLocation()) + ": " + problem, e);
    }

    private static String at(JsonLocation where) {
        return where == null ? "" : " at line " + where.getLineNr() + ", column " + where.getColumnNr();
    }

    private static String at(Mark mark) {
        return " at line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1); // Mark counts from 0
    }

    /** The dotted name of the field the parser is at, e.g. {@code server.port}. */
    private static String dottedKey(JsonStreamContext context) {
        List<String> names = new ArrayList<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            names.add(0, c.inArray() ? "[" + c.getCurrentIndex() + "]" : String.valueOf(c.getCurrentName()));
        }
        return dotted(names);
    }

    /** Names joined as an operator writes them: {@code features.overrides[0].deltas}. */
    private static String dotted(List<String> names) {
        StringBuilder key = new StringBuilder();
        for (String name : names) {
            if (key.length() > 0 && !name.startsWith("[")) {
                key.append('.');
            }
            key.append(name);
        }
        return key.toString();
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

    private static ServerConfig bind(ObjectNode tree) {
        try {
            return MAPPER.treeToValue(tree, ServerConfig.class);
        } catch (UnrecognizedPropertyException e) {
            throw unknownKey(e);
        } catch (JsonMappingException e) {
            throw badValue(e, tree);
        } catch (JacksonException e) {
            throw new ConfigException(null, null, "cannot bind configuration: " + e.getOriginalMessage(), e);
        }
    }

    private static ConfigException unknownKey(UnrecognizedPropertyException e) {
        List<String> path = names(e.getPath());
        List<String> parent = path.isEmpty() ? path : path.subList(0, path.size() - 1);
        String key = dotted(path);
        JsonNode defaults = nodeAt(Embedded.TREE, parent);
        String known = defaults != null && defaults.isObject()
                ? fieldNames(defaults)
                : knownIds(e.getKnownPropertyIds());
        String detail = parent.isEmpty()
                ? "unknown section '" + key + "' (known sections: " + known + ")"
                : "unknown key '" + key + "' (known keys under '" + dotted(parent) + "': " + known + ")";
        return new ConfigException(null, key, detail, e);
    }

    private static ConfigException badValue(JsonMappingException e, JsonNode tree) {
        List<String> path = names(e.getPath());
        String key = dotted(path);
        Class<?> type = typeAt(path);
        if (path.isEmpty() || type == null) {
            return new ConfigException(null, null, "cannot bind configuration: " + e.getOriginalMessage(), e);
        }
        String got = show(nodeAt(tree, path));
        String detail;
        if (type.isEnum()) {
            detail = "key '" + key + "' must be " + expected(type) + ", got " + got;
        } else if (e.getCause() instanceof InputCoercionException) {
            // A number too large for the Java type: 99999999999 for an int.
            String bits = type == long.class || type == Long.class ? "64" : "32";
            detail = "key '" + key + "' expects an integer that fits in " + bits + " bits, got " + got;
        } else {
            detail = "key '" + key + "' expects " + expected(type) + ", got " + got;
        }
        return new ConfigException(null, key, detail, e);
    }

    /** The Java type of the record component at {@code path} under {@link ServerConfig}, or null. */
    private static Class<?> typeAt(List<String> path) {
        Type type = ServerConfig.class;
        for (String name : path) {
            if (name.startsWith("[")) {
                // a list entry: the list's element type
                if (!(type instanceof ParameterizedType list) || list.getRawType() != List.class) {
                    return null;
                }
                type = list.getActualTypeArguments()[0];
                continue;
            }
            if (!(type instanceof Class<?> record) || !record.isRecord()) {
                return null;
            }
            RecordComponent component = Arrays.stream(record.getRecordComponents())
                    .filter(c -> c.getName().equals(name))
                    .findFirst()
                    .orElse(null);
            if (component == null) {
                return null;
            }
            type = component.getGenericType();
        }
        if (type instanceof ParameterizedType parameterized) {
            return (Class<?>) parameterized.getRawType();
        }
        return type instanceof Class<?> c ? c : null;
    }

    private static String expected(Class<?> type) {
        if (type == int.class || type == long.class || type == Integer.class || type == Long.class) {
            return "an integer";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == double.class || type == Double.class) {
            return "a number";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type.isEnum()) {
            return "one of " + Arrays.stream(type.getEnumConstants())
                    .map(c -> MAPPER.convertValue(c, String.class))
                    .collect(Collectors.joining(", "));
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        if (type.isRecord()) {
            return "a mapping of keys (" + Arrays.stream(type.getRecordComponents())
                    .map(RecordComponent::getName)
                    .collect(Collectors.joining(", ")) + ")";
        }
        return "a " + type.getSimpleName();
    }

    private static List<String> names(List<JsonMappingException.Reference> path) {
        List<String> names = new ArrayList<>(path.size());
        for (JsonMappingException.Reference ref : path) {
            names.add(ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]");
        }
        return names;
    }

    private static JsonNode nodeAt(JsonNode root, List<String> path) {
        JsonNode node = root;
        for (String name : path) {
            if (node != null && node.isArray() && name.startsWith("[")) {
                node = node.get(Integer.parseInt(name.substring(1, name.length() - 1)));
            } else {
                node = node == null ? null : node.get(name);
            }
        }
        return node;
    }

    private static String fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return String.join(", ", names);
    }

    private static String knownIds(Collection<Object> ids) {
        return ids == null ? "" : ids.stream().map(String::valueOf).collect(Collectors.joining(", "));
    }

    /** A found value as the operator would recognise it: strings quoted, mappings and lists named. */
    private static String show(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "nothing";
        }
        if (node.isTextual()) {
            return quote(node.textValue());
        }
        if (node.isObject()) {
            return "a mapping";
        }
        if (node.isArray()) {
            return "a list";
        }
        return node.asText(); // numbers, booleans, null
    }

    /** {@code text} in double quotes with JSON escapes, shortened when long. */
    static String quote(String text) {
        String shown = text.length() <= MAX_SHOWN_CHARS ? text : text.substring(0, MAX_SHOWN_CHARS - 3) + "...";
        return TextNode.valueOf(shown).toString();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        Iterator<String> lines = message.lines().iterator();
        return lines.hasNext() ? lines.next().strip() : "";
    }
}
