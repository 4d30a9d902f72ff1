package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigText.dotted;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import io.ringcast.protocol.Transport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * The YAML side of {@link ConfigLoader}: the strict mapper every config is read and bound with,
 * and reading one YAML document into a tree, with syntax errors that say where (line and column),
 * duplicate keys named in full and aliases refused.
 *
 * <p>Thread safety: stateless (the mapper is immutable once built); any thread may call it.
 */
final class ConfigYaml {

    static final ObjectMapper MAPPER = YAMLMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            // a key left empty and a list entry left empty alike: refused, named by key or index
            .defaultSetterInfo(JsonSetter.Value.forValueNulls(Nulls.FAIL, Nulls.FAIL))
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
            // the protocol module knows no Jackson: its Transport is spelled here, as its configName()
            .addMixIn(Transport.class, TransportSpelling.class)
            .build();

    /** Jackson reads and writes a {@link Transport} as its {@link Transport#configName()}: {@code io_uring}. */
    private abstract static class TransportSpelling {
        @JsonValue
        abstract String configName();
    }

    private ConfigYaml() {
    }

    interface ParserOpener {
        JsonParser open() throws IOException;
    }

    /** The document's tree, or {@code null} for an empty document. */
    static JsonNode readTree(ParserOpener opener) {
        try (JsonParser parser = new NoAliases(opener.open())) {
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

    /**
     * Refuses aliases ({@code *name}): Jackson reads one as the text of the anchor's name, so
     * {@code file: *h} would quietly be the file {@code "h"}, a value nobody wrote.
     */
    private static final class NoAliases extends JsonParserDelegate {
        NoAliases(JsonParser parser) {
            super(parser);
        }

        @Override
        public JsonToken nextToken() throws IOException {
            return refuseAlias(super.nextToken());
        }

        @Override
        public JsonToken nextValue() throws IOException {
            return refuseAlias(super.nextValue());
        }

        private JsonToken refuseAlias(JsonToken token) throws IOException {
            if (delegate() instanceof YAMLParser yaml && yaml.isCurrentAlias()) {
                String key = dottedKey(yaml.getParsingContext());
                throw new ConfigException(key, "key '" + key + "' is an alias (*" + yaml.getText() + ")"
                        + at(yaml.currentTokenLocation()) + "; aliases are not supported, write the value out");
            }
            return token;
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

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        Iterator<String> lines = message.lines().iterator();
        return lines.hasNext() ? lines.next().strip() : "";
    }
}
