package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigYaml.MAPPER;
import static io.ringcast.server.config.ConfigYaml.readTree;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Config keys set by environment variables (12-factor), applied on top of the file or the embedded
 * defaults and then bound and validated with them.
 *
 * <p>The mapping, one variable per key that is not a section: {@code RINGCAST_}, then the key's
 * dotted segments upper-cased and joined by {@code _}. A camelCase key is upper-cased whole, its
 * words not split: {@code server.port} is {@code RINGCAST_SERVER_PORT},
 * {@code cluster.failureDetectionMs} is {@code RINGCAST_CLUSTER_FAILUREDETECTIONMS}. Keys hold
 * letters and digits only, so each {@code _} after the prefix is a dot and a name reads back to
 * one key; {@link #KEYS_BY_VARIABLE} checks, once, that no two keys share a name. A value is read
 * as YAML, as if written after {@code key: } in the file: {@code 9000} is an integer,
 * {@code "9000"} a string, {@code [a, b]} a list, {@code [{name: n1, host: h1}]} a list of mappings.
 *
 * <p>A variable whose first segment names a section ({@code RINGCAST_SERVER_...}) must name a key
 * of it: an unknown one is a {@link ConfigException} naming the variable. Other {@code RINGCAST_}
 * variables are not config (the logging levels of {@code logback.xml}; Kubernetes' service links,
 * such as {@code RINGCAST_SERVICE_HOST}): they are left alone and, but for the logging levels,
 * listed by {@link #ignoredNames()} for a warning.
 *
 * <p>Immutable; any thread may use it.
 */
public final class EnvOverrides {
    /** Every variable this class reads starts with this. */
    public static final String PREFIX = "RINGCAST_";

    /**
     * {@code RINGCAST_} variables of the server that are not config keys: read by the jar's
     * {@code logback.xml} and the example {@code config/logback.xml}.
     */
    static final Set<String> NOT_CONFIG = Set.of("RINGCAST_LOG_LEVEL", "RINGCAST_RAFT_LOG_LEVEL", "RINGCAST_LOG_DIR",
            "RINGCAST_SESSION_LOG_LEVEL");

    private static final EnvOverrides NONE = new EnvOverrides(Map.of(), List.of());
    private static final Pattern KEY_SEGMENT = Pattern.compile("[A-Za-z][A-Za-z0-9]*");

    /** Every variable name, to the dotted key it sets; in the order of the defaults. */
    static final Map<String, String> KEYS_BY_VARIABLE = variablesOf(ConfigLoader.defaultsTree());

    /** The variables given, by name, to the values read from them; sorted by name. */
    private final Map<String, Setting> settings;
    private final List<String> ignored;

    private record Setting(String key, JsonNode value) {
    }

    private EnvOverrides(Map<String, Setting> settings, List<String> ignored) {
        this.settings = settings;
        this.ignored = ignored;
    }

    /** No overrides: the file (or the defaults) as it is. */
    public static EnvOverrides none() {
        return NONE;
    }

    /**
     * The overrides {@code environment} holds (pass {@link System#getenv()}).
     *
     * @throws ConfigException naming the variable, for one that names a section but no key of it,
     *                         or whose value is empty or not YAML
     */
    public static EnvOverrides from(Map<String, String> environment) {
        Map<String, Setting> settings = new TreeMap<>();
        List<String> ignored = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(environment).entrySet()) {
            String variable = e.getKey();
            if (!variable.startsWith(PREFIX) || NOT_CONFIG.contains(variable)) {
                continue;
            }
            String key = KEYS_BY_VARIABLE.get(variable);
            if (key != null) {
                settings.put(variable, new Setting(key, read(variable, key, e.getValue())));
            } else if (sectionOf(variable) != null) {
                throw unknownKey(variable, sectionOf(variable));
            } else {
                ignored.add(variable);
            }
        }
        return settings.isEmpty() && ignored.isEmpty() ? NONE
                : new EnvOverrides(Collections.unmodifiableMap(settings), List.copyOf(ignored));
    }

    /** The variable that sets {@code key} (dotted, e.g. {@code cluster.failureDetectionMs}). */
    public static String variableFor(String key) {
        return PREFIX + key.replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /** The names of the variables applied, sorted; never their values (some are secrets). */
    public List<String> names() {
        return List.copyOf(settings.keySet());
    }

    /** {@code RINGCAST_} variables that name no section, so are not config; sorted. */
    public List<String> ignoredNames() {
        return ignored;
    }

    /** Whether no variable sets a key: the config is the file's (or the defaults') alone. */
    public boolean isEmpty() {
        return settings.isEmpty();
    }

    /** Sets each overridden key of {@code merged}, a tree of the defaults with a file merged over them. */
    void applyTo(ObjectNode merged) {
        for (Setting s : settings.values()) {
            String[] path = s.key().split("\\.");
            ObjectNode parent = merged;
            for (int i = 0; i < path.length - 1; i++) {
                parent = (ObjectNode) parent.get(path[i]); // sections stay mappings through the merge
            }
            parent.set(path[path.length - 1], s.value().deepCopy());
        }
    }

    /**
     * What a failure at {@code key} (dotted, maybe with list indexes) should name as its source:
     * the variable that set the key or a mapping or list holding it, if one did.
     */
    Optional<String> sourceOf(String key) {
        if (key == null) {
            return Optional.empty();
        }
        for (Map.Entry<String, Setting> e : settings.entrySet()) {
            String set = e.getValue().key();
            if (key.equals(set) || key.startsWith(set + ".") || key.startsWith(set + "[")) {
                return Optional.of(source(e.getKey()));
            }
        }
        return Optional.empty();
    }

    /** How errors name the variable. */
    static String source(String variable) {
        return "environment variable " + variable;
    }

    @Override
    public String toString() {
        return settings.isEmpty() ? "no environment overrides" : "environment overrides " + String.join(", ", names());
    }

    // ---------------------------------------------------------------------------------------------

    private static JsonNode read(String variable, String key, String text) {
        JsonNode value;
        try {
            value = readTree(() -> MAPPER.createParser(text));
        } catch (ConfigException e) {
            throw e.withSource(source(variable));
        }
        if (value == null || value.isNull()) {
            throw new ConfigException(source(variable), key, "is empty, which would leave key '" + key
                    + "' empty; for an empty string write \"\" (quotes included)", null);
        }
        return value;
    }

    /** The section {@code variable} starts with ({@code RINGCAST_SERVER_...}: server), or null. */
    private static String sectionOf(String variable) {
        String rest = variable.substring(PREFIX.length());
        int end = rest.indexOf('_');
        String first = end < 0 ? rest : rest.substring(0, end);
        return ConfigLoader.defaultsTree().properties().stream()
                .map(Map.Entry::getKey)
                .filter(section -> section.toUpperCase(Locale.ROOT).equals(first))
                .findFirst()
                .orElse(null);
    }

    private static ConfigException unknownKey(String variable, String section) {
        String sectionPrefix = variableFor(section) + "_";
        List<String> known = KEYS_BY_VARIABLE.keySet().stream().filter(v -> v.startsWith(sectionPrefix)).toList();
        // the likeliest slip: camelCase words split by '_' (RINGCAST_CLUSTER_FAILURE_DETECTION_MS)
        String rest = variable.length() > sectionPrefix.length() ? variable.substring(sectionPrefix.length()) : "";
        String squeezed = sectionPrefix + rest.replace("_", "");
        String hint = KEYS_BY_VARIABLE.containsKey(squeezed)
                ? "; for '" + KEYS_BY_VARIABLE.get(squeezed) + "' write " + squeezed
                        + " (the words of a camelCase key are not split by '_')"
                : "";
        return new ConfigException(source(variable), null, "names no key of section '" + section + "'" + hint
                + " (its variables: " + String.join(", ", known) + ")", null);
    }

    /**
     * One variable per key that is not a section, refusing a tree whose names would be ambiguous:
     * a key segment that is not letters and digits, or two keys upper-casing to one name.
     */
    private static Map<String, String> variablesOf(ObjectNode defaults) {
        Map<String, String> byVariable = new LinkedHashMap<>();
        for (String key : ConfigLoader.keysOf(defaults)) {
            for (String segment : key.split("\\.")) {
                if (!KEY_SEGMENT.matcher(segment).matches()) {
                    throw new IllegalStateException("key '" + key + "' cannot be named by an environment variable:"
                            + " a segment other than letters and digits would make RINGCAST_ names ambiguous");
                }
            }
            String variable = variableFor(key);
            String previous = byVariable.put(variable, key);
            if (previous != null) {
                throw new IllegalStateException("keys '" + previous + "' and '" + key + "' are both " + variable
                        + ": rename one");
            }
            if (NOT_CONFIG.contains(variable)) {
                throw new IllegalStateException("key '" + key + "' would be " + variable + ", which logback.xml reads");
            }
        }
        return Collections.unmodifiableMap(byVariable);
    }
}
