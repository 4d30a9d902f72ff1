package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigText.dotted;
import static io.ringcast.server.config.ConfigText.fieldNames;
import static io.ringcast.server.config.ConfigText.show;
import static io.ringcast.server.config.ConfigYaml.MAPPER;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Binds a merged config tree strictly to {@link ServerConfig}'s records, and turns Jackson's
 * binding failures into {@link ConfigException}s an operator can act on: the full dotted key, the
 * keys known where an unknown one was found, and the type expected where a wrong one was.
 *
 * <p>Thread safety: stateless; any thread may call it.
 */
final class ConfigBinding {

    private ConfigBinding() {
    }

    /**
     * The config {@code tree} holds; {@code defaultsTree} names the keys known where an unknown one is found.
     */
    static ServerConfig bind(ObjectNode tree, ObjectNode defaultsTree) {
        try {
            return MAPPER.treeToValue(tree, ServerConfig.class);
        } catch (UnrecognizedPropertyException e) {
            throw unknownKey(e, defaultsTree);
        } catch (JsonMappingException e) {
            throw badValue(e, tree);
        } catch (JacksonException e) {
            throw new ConfigException(null, null, "cannot bind configuration: " + e.getOriginalMessage(), e);
        }
    }

    private static ConfigException unknownKey(UnrecognizedPropertyException e, ObjectNode defaultsTree) {
        List<String> path = names(e.getPath());
        List<String> parent = path.isEmpty() ? path : path.subList(0, path.size() - 1);
        String key = dotted(path);
        JsonNode defaults = nodeAt(defaultsTree, parent);
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

    private static String knownIds(Collection<Object> ids) {
        return ids == null ? "" : ids.stream().map(String::valueOf).collect(Collectors.joining(", "));
    }
}
